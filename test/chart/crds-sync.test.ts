// The CRD chart ships byte-identical copies of the repository's crds/*.yaml (templated, so `helm upgrade`
// upgrades them). A CRD change without `npm run sync:crds` fails here.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { crdDrift, syncCrds } from '../../scripts/sync-chart-crds.js';
import { readYamlDocuments, ROOT } from './repo.js';

const SOURCE = join(ROOT, 'crds');
const COPIES = join(ROOT, 'charts/model-gateway-crds/files');
const yamlIn = (dir: string) =>
  readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();

describe('CRD chart copies', () => {
  it('crds/ holds the CRD files', () => {
    expect(yamlIn(SOURCE).length).toBeGreaterThan(0);
  });

  it('every crds/ file has a byte-identical copy in charts/model-gateway-crds/files/, and no copy is stale', () => {
    expect(yamlIn(COPIES)).toEqual(yamlIn(SOURCE));
    for (const name of yamlIn(SOURCE)) expect(readFileSync(join(COPIES, name)).equals(readFileSync(join(SOURCE, name))), name).toBe(true);
    expect(crdDrift()).toEqual({ missing: [], changed: [], stale: [] });
  });

  it('each copy parses as CustomResourceDefinitions of modelgateway.io, covering the three kinds', () => {
    const kinds: string[] = [];
    for (const name of yamlIn(COPIES)) {
      for (const doc of readYamlDocuments(`charts/model-gateway-crds/files/${name}`) as any[]) {
        expect(doc.apiVersion, name).toBe('apiextensions.k8s.io/v1');
        expect(doc.kind, name).toBe('CustomResourceDefinition');
        expect(doc.spec.group, name).toBe('modelgateway.io');
        kinds.push(doc.spec.names.kind);
      }
    }
    expect(kinds.sort()).toEqual(['GatewayToken', 'Group', 'ModelRoute']);
  });
});

describe('sync-chart-crds', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('reports missing, changed and stale copies, then fixes all three', () => {
    const src = mkdtempSync(join(tmpdir(), 'mg-crds-src-'));
    const dst = mkdtempSync(join(tmpdir(), 'mg-crds-dst-'));
    dirs.push(src, dst);
    writeFileSync(join(src, 'a.yaml'), 'kind: A\n');
    writeFileSync(join(src, 'b.yaml'), 'kind: B\n');
    writeFileSync(join(dst, 'b.yaml'), 'kind: B # edited\n');
    writeFileSync(join(dst, 'gone.yaml'), 'kind: Gone\n');
    writeFileSync(join(dst, 'notes.txt'), 'not a CRD, left alone\n');

    expect(crdDrift(src, dst)).toEqual({ missing: ['a.yaml'], changed: ['b.yaml'], stale: ['gone.yaml'] });
    syncCrds(src, dst);
    expect(crdDrift(src, dst)).toEqual({ missing: [], changed: [], stale: [] });
    expect(readdirSync(dst).sort()).toEqual(['a.yaml', 'b.yaml', 'notes.txt']);
    expect(readFileSync(join(dst, 'b.yaml'), 'utf8')).toBe('kind: B\n');
  });
});
