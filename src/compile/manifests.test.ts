import { describe, expect, it } from 'vitest';
import { parseManifests } from './manifests.js';

describe('parseManifests', () => {
  it('reads multi-document files with the line of each document', () => {
    const text =
      'apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n---\n# comment\napiVersion: modelgateway.io/v1alpha1\nkind: Group\nmetadata: {name: g}\nspec: {models: []}\n';
    const r = parseManifests(text, 'x.yaml');
    expect(r.errors).toEqual([]);
    expect(r.objects.map((o) => [o.object.kind, o.source?.line])).toEqual([
      ['Secret', 1],
      ['Group', 6],
    ]);
  });

  it('merges `<<: *anchor` keys as kubectl does (its YAML is 1.1, where merge keys are standard)', () => {
    const text = [
      'apiVersion: modelgateway.io/v1alpha1',
      'kind: ModelRoute',
      'metadata: {name: m}',
      'spec:',
      '  backends:',
      '  - &base',
      '    name: a',
      '    baseURL: http://127.0.0.1:9/v1',
      '    weight: 2',
      '  - <<: *base',
      '    name: b',
      '  - <<: *base',
      '    baseURL: http://127.0.0.1:8/v1',
      '    name: c',
      '',
    ].join('\n');
    const r = parseManifests(text, 'x.yaml');
    expect(r.errors).toEqual([]);
    expect((r.objects[0]!.object as { spec: unknown }).spec).toEqual({
      backends: [
        { name: 'a', baseURL: 'http://127.0.0.1:9/v1', weight: 2 },
        { name: 'b', baseURL: 'http://127.0.0.1:9/v1', weight: 2 },
        { name: 'c', baseURL: 'http://127.0.0.1:8/v1', weight: 2 },
      ],
    });
    // Field lines still resolve inside a merged mapping.
    expect(r.objects[0]!.source?.lineOf?.(['spec', 'backends', 2, 'baseURL'])).toBe(13);
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

  it('reports a document with an alias to no anchor (or an alias bomb) with its line, and still reads the other documents', () => {
    // Regression: toJS threw out of the parser, so the whole file (and every rescan, and start) failed.
    const good = 'apiVersion: v1\nkind: Secret\nmetadata: {name: good}\nstringData: {k: v}\n';
    const text = `${good}---\napiVersion: v1\nkind: Secret\nmetadata: {name: bad}\nstringData:\n  apiKey: *oops\n---\n${good.replace('good', 'after')}`;
    const r = parseManifests(text, 's.yaml');
    expect(r.errors).toEqual([{ file: 's.yaml', line: 10, message: 'Unresolved alias (the anchor must be set before the alias)' }]);
    expect(r.objects.map((o) => o.object.metadata?.name)).toEqual(['good', 'after']);

    const bomb = [
      'a: &a [x,x,x,x,x,x,x,x,x,x]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      '',
    ].join('\n');
    expect(parseManifests(`${good}---\n${bomb}`, 'b.yaml').errors).toEqual([{ file: 'b.yaml', line: 6, message: expect.stringMatching(/alias/) }]);
  });

  it('never quotes the source in a message: a Secret with any YAML typo around its value leaks no part of it', () => {
    // Regression: `apiKey: >sk-…` logged "Block scalar header includes extra characters: >sk-…".
    const key = 'sk-live-Q7xZ9mTn4Kp2';
    const secret = (value: string) => `apiVersion: v1\nkind: Secret\nmetadata: {name: upstream}\nstringData:\n  apiKey: ${value}\n`;
    const marks = ['>', '|', '>-', '*', '&', '!', '!!', '%', '@', '`', '{', '}', '[', ']', ',', ':', '?', '#', '"', "'", '\t', '- ', '\\', '<<: *'];
    const texts = marks.flatMap((m) => [
      secret(`${m}${key}`),
      secret(`${key}${m}`),
      secret(`"${m}${key}`),
      secret(`{a: ${m}${key}`),
      secret(`[${key}${m}`),
      `${secret('x')}  ${m}${key}: 1\n`,
    ]);
    texts.push(secret(`"\\x${key}"`), secret(`!<${key}> x`), `%${key}\n---\n${secret('x')}`, `!${key}!x\n${secret('x')}`);
    const messages = texts.flatMap((t) => parseManifests(t, 's.yaml').errors.map((e) => e.message));
    expect(messages.length).toBeGreaterThan(texts.length); // the typos do produce errors to scrub
    for (const fragment of ['sk-l', 'live', 'Q7x', 'Z9m', 'Tn4', 'Kp2']) expect(messages.filter((m) => m.includes(fragment))).toEqual([]);
    // What is left still says what is wrong.
    expect(messages).toContain('Block scalar header includes extra characters');
    expect(messages).toContain('Flow map in block collection must be sufficiently indented and end with a }');
  });
});
