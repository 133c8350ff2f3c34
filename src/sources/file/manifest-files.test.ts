import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listManifestFiles, readManifestFiles, readManifestText } from './manifest-files.js';

const dir = mkdtempSync(join(tmpdir(), 'mg-manifest-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const group = (name: string) => `apiVersion: modelgateway.io/v1alpha1\nkind: Group\nmetadata: {name: ${name}}\nspec: {models: []}\n`;

describe('manifest files', () => {
  it('follows symlinked files as in a mounted ConfigMap, skipping dot-entries and dangling links', async () => {
    const cm = join(dir, 'cm');
    mkdirSync(join(cm, '..2026_01_01'), { recursive: true });
    writeFileSync(join(cm, '..2026_01_01', 'groups.yaml'), group('a'));
    symlinkSync('..2026_01_01', join(cm, '..data'));
    symlinkSync(join('..data', 'groups.yaml'), join(cm, 'groups.yaml'));
    symlinkSync('missing.yaml', join(cm, 'dangling.yaml'));
    expect(await listManifestFiles([cm])).toEqual([join(cm, 'groups.yaml')]);
    const r = await readManifestFiles([cm]);
    expect(r.errors).toEqual([]);
    expect(r.objects.map((o) => o.object.metadata?.name)).toEqual(['a']);
  });

  it('reads a file named twice only once', async () => {
    const d = join(dir, 'twice');
    mkdirSync(d);
    writeFileSync(join(d, 'g.yaml'), group('b'));
    expect(await listManifestFiles([d, join(d, 'g.yaml'), `${d}/./g.yaml`])).toEqual([join(d, 'g.yaml')]);
  });

  it('takes nothing from a text with any error', () => {
    const r = readManifestText(`${group('c')}---\nkind: a\nkind: b\n`, 'x.yaml');
    expect(r.objects).toEqual([]);
    expect(r.errors[0]).toMatchObject({ file: 'x.yaml', line: 7, message: 'Map keys must be unique' });
  });
});
