import { describe, expect, it } from 'vitest';
import { parseManifests } from './manifests.js';

describe('parseManifests', () => {
  it('reads multi-document files with the line of each document', () => {
    const text = 'apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n---\n# comment\napiVersion: modelgateway.io/v1alpha1\nkind: Group\nmetadata: {name: g}\nspec: {models: []}\n';
    const r = parseManifests(text, 'x.yaml');
    expect(r.errors).toEqual([]);
    expect(r.objects.map((o) => [o.object.kind, o.source?.line])).toEqual([['Secret', 1], ['Group', 6]]);
  });

  it('reports YAML errors with file and line', () => {
    const r = parseManifests('apiVersion: v1\nkind: Secret\nmetadata:\n  name: [unclosed\n', 'bad.yaml');
    expect(r.errors[0]).toMatchObject({ file: 'bad.yaml' });
    expect(r.errors[0]!.line).toBeGreaterThanOrEqual(4);
  });

  it('rejects documents without kind', () => {
    const r = parseManifests('foo: bar\n', 'x.yaml');
    expect(r.errors[0]).toMatchObject({ file: 'x.yaml', line: 1, message: 'missing apiVersion or kind' });
  });

  it('gives each item of a kind: List its own line and rejects items without kind', () => {
    const text = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      '- apiVersion: modelgateway.io/v1alpha1',
      '  kind: Group',
      '  metadata: {name: a}',
      '- apiVersion: modelgateway.io/v1alpha1',
      '  kind: Group',
      '  metadata: {name: b}',
      '- {metadata: {name: c}}',
      '',
    ].join('\n');
    const r = parseManifests(text, 'list.yaml');
    expect(r.objects.map((o) => o.source?.line)).toEqual([4, 7]);
    expect(r.errors).toEqual([{ file: 'list.yaml', line: 10, message: 'missing apiVersion or kind' }]);
  });

  it('finds the line of a field of any document (and of a List item) after parsing has finished', () => {
    const group = (name: string) => `apiVersion: modelgateway.io/v1alpha1\nkind: Group\nmetadata: {name: ${name}}\nspec:\n  models:\n  - x\n`;
    const list = 'apiVersion: v1\nkind: List\nitems:\n- apiVersion: modelgateway.io/v1alpha1\n  kind: Group\n  metadata: {name: l}\n  spec:\n    models: [y]\n';
    const text = [group('a'), group('b'), group('c'), list].join('---\n');
    const r = parseManifests(text, 'x.yaml');
    expect(r.objects.map((o) => o.source?.line)).toEqual([1, 8, 15, 25]);
    // Document 3 starts on line 15, its spec's value on 19, its first model on 20; a missing field points at its parent.
    expect(r.objects[2]!.source!.lineOf!(['spec', 'models', 0])).toBe(20);
    expect(r.objects[2]!.source!.lineOf!(['spec', 'nope'])).toBe(19);
    expect(r.objects[0]!.source!.lineOf!(['metadata', 'name'])).toBe(3);
    expect(r.objects[3]!.source!.lineOf!(['spec', 'models'])).toBe(29);
  });
});
