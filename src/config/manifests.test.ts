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
});
