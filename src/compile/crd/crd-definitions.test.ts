import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { MONEY_PATTERN } from '../../model/money.js';
import { GatewayTokenSpecSchema, SPEC_SCHEMAS } from '../resources.js';
import { buildCrd, buildCrdFiles } from './crd-definitions.js';
import type { JsonSchema } from './structural-schema.js';

const CRDS = join(import.meta.dirname, '..', '..', '..', 'crds');

/** Walks every schema node with its path. */
function walk(node: JsonSchema, path: string, visit: (n: JsonSchema, p: string) => void): void {
  visit(node, path);
  for (const [name, sub] of Object.entries((node.properties ?? {}) as Record<string, JsonSchema>)) walk(sub, `${path}.${name}`, visit);
  if (node.items) walk(node.items as JsonSchema, `${path}[]`, visit);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') walk(node.additionalProperties as JsonSchema, `${path}.*`, visit);
}

const schemaOf = (kind: 'ModelRoute' | 'Group' | 'GatewayToken') => (buildCrd(kind).spec as any).versions[0].schema.openAPIV3Schema as JsonSchema;

describe('generated CRDs', () => {
  it('match the committed files in crds/ (run `npm run generate:crds` after changing resources.ts)', async () => {
    const committed = (await readdir(CRDS)).filter((f) => f.endsWith('.yaml')).sort();
    const generated = buildCrdFiles();
    expect(committed).toEqual(generated.map((f) => f.file).sort());
    for (const f of generated) expect(await readFile(join(CRDS, f.file), 'utf8'), f.file).toBe(f.text);
  });

  for (const kind of ['ModelRoute', 'Group', 'GatewayToken'] as const) {
    it(`${kind}: structural (a type on every node, no $ref, no additionalProperties: false, no object CEL cannot read) and described`, () => {
      walk(schemaOf(kind), kind, (n, p) => {
        expect(n.type !== undefined || n['x-kubernetes-preserve-unknown-fields'] === true, `${p} has a type`).toBe(true);
        expect(JSON.stringify(n)).not.toContain('"$ref"');
        expect(n.additionalProperties, p).not.toBe(false);
        // The API server's CEL cannot read an object with none of these ("invalid object type" in its parent's rules);
        // metadata is the server's own (name and generateName).
        if (n.type === 'object' && p !== `${kind}.metadata`)
          expect(Boolean(n.properties || n.additionalProperties || n['x-kubernetes-preserve-unknown-fields']), `${p} can be read by CEL`).toBe(true);
      });
      const spec = (schemaOf(kind).properties as Record<string, JsonSchema>).spec!;
      walk(spec, 'spec', (n, p) => {
        if (p !== 'spec' && !p.endsWith('[]')) expect(typeof n.description, `${p} is described for kubectl explain`).toBe('string');
      });
    });
  }

  it('declares the status subresource, categories, short names and printer columns', () => {
    const route = buildCrd('ModelRoute').spec as any;
    expect(route.versions[0].subresources).toEqual({ status: {} });
    expect(route.names.categories).toEqual(['modelgateway']);
    expect(route.names.shortNames.length).toBeGreaterThan(0);
    const cols = (k: 'ModelRoute' | 'Group' | 'GatewayToken') =>
      (buildCrd(k).spec as any).versions[0].additionalPrinterColumns.filter((c: any) => !c.priority).map((c: any) => c.name);
    expect(cols('ModelRoute')).toEqual(['Model', 'Backends', 'Ready', 'Age']);
    expect(cols('GatewayToken')).toEqual(['Group', 'Ready', 'Expires', 'Tokens Today', 'Month Tokens', 'Month Budget', 'Month Spend', 'Spend Budget', 'Age']);
    expect(cols('Group')).toEqual(['Ready', 'Tokens Today', 'Month Tokens', 'Month Budget', 'Month Spend', 'Spend Budget', 'Age']);
    // Every usage column reads a field the status schema has (kubectl prints nothing for a path that is not there).
    const status = (schemaOf('Group') as any).properties.status.properties.usage.properties;
    for (const c of (buildCrd('Group').spec as any).versions[0].additionalPrinterColumns.filter((c: any) => c.jsonPath.startsWith('.status.usage.'))) {
      const [, field, leaf] = c.jsonPath.split('.').slice(2);
      expect(status[field].properties[leaf], c.jsonPath).toMatchObject({ type: c.type });
    }
  });

  it('keeps defaults, enums and bounds from the zod schemas', () => {
    const backend = (schemaOf('ModelRoute') as any).properties.spec.properties.backends;
    expect(backend['x-kubernetes-list-map-keys']).toEqual(['name']);
    expect(backend.items.properties.priority).toMatchObject({ type: 'integer', default: 0, minimum: 0, maximum: 100 });
    expect(backend.items.properties.weight).toMatchObject({ default: 1, maximum: 10000 });
    expect((schemaOf('ModelRoute') as any).properties.spec.properties.endpoints.items.enum).toContain('chat.completions');
    expect((schemaOf('GatewayToken') as any).properties.spec.properties.disabled.default).toBe(false);
  });

  it('carries the cross-field rule of GatewayToken as CEL, agreeing with the zod refinement', () => {
    const spec = (schemaOf('GatewayToken') as any).properties.spec;
    expect(spec['x-kubernetes-validations']).toEqual([
      { rule: 'has(self.secretRef) != has(self.sha256)', message: 'exactly one of secretRef or sha256 must be set' },
    ]);
    // The CEL rule reads "exactly one is present"; zod must accept and refuse the same four combinations.
    const ref = { name: 's', key: 'k' };
    const sha = 'a'.repeat(64);
    const cel = (s: Record<string, unknown>) => 'secretRef' in s !== 'sha256' in s;
    for (const s of [{}, { secretRef: ref }, { sha256: sha }, { secretRef: ref, sha256: sha }]) {
      expect(GatewayTokenSpecSchema.safeParse({ group: 'g', ...s }).success, JSON.stringify(s)).toBe(cel(s));
    }
  });

  it('carries the rule of a per-model limit entry as minProperties, agreeing with zod', () => {
    const entry = (schemaOf('Group') as any).properties.spec.properties.limits.properties.models.items;
    expect(entry.minProperties).toBe(2);
    expect(entry['x-kubernetes-validations']).toBeUndefined();
    // minProperties counts the fields present; zod must accept and refuse the same entries.
    for (const e of [{ model: 'x' }, { model: 'x', requestsPerMinute: 1 }, { model: 'x', concurrentRequests: 0, tokensPerDay: 5 }]) {
      const group = { models: ['*'], limits: { models: [e] } };
      expect(SPEC_SCHEMAS.Group.safeParse(group).success, JSON.stringify(e)).toBe(Object.keys(e).length > 1);
    }
  });

  it('gives every amount of money the same pattern as zod, and both agree on every sample', () => {
    // Where an amount at a CRD path sits in a spec the rest of which is valid.
    const place: Array<[RegExp, (leaf: string, v: unknown) => unknown]> = [
      [
        /^spec\.backends\[\]\.pricing\.imagePer\[\]\.price$/,
        (_l, v) => ({ backends: [{ name: 'b', baseURL: 'demo://', pricing: { imagePer: [{ price: v }] } }] }),
      ],
      [/^spec\.backends\[\]\.pricing\.(\w+)$/, (l, v) => ({ backends: [{ name: 'b', baseURL: 'demo://', pricing: { [l]: v } }] })],
      [/^spec\.limits\.models\[\]\.(\w+)$/, (l, v) => ({ limits: { models: [{ model: '*', [l]: v }] } })],
      [/^spec\.limits\.(\w+)$/, (l, v) => ({ limits: { [l]: v } })],
    ];
    const base = { ModelRoute: {}, Group: { models: ['*'] }, GatewayToken: { group: 'g', sha256: 'a'.repeat(64) } };
    const samples = ['3.00', '0.075', '2500', '0', '0.000001', '999999999.999999', '1e-7', '0.0000001', '1.', '.5', '-1', '1000000000', ' 1', 'NaN'];
    const found: string[] = [];
    for (const kind of ['ModelRoute', 'Group', 'GatewayToken'] as const) {
      walk(schemaOf(kind), kind, (n, p) => {
        if (p.includes('.status.')) return; // spend in status is written by the gateway, not validated input
        if (!/(PerMTok|PerSecond|PerMChars|PerCall|price|costPer\w+)$/.test(p) && n.pattern !== MONEY_PATTERN) return;
        found.push(p);
        expect(n, p).toMatchObject({ type: 'string', pattern: MONEY_PATTERN });
        const path = p.slice(kind.length + 1);
        const [re, build] = place.find(([re]) => re.test(path))!;
        const leaf = re.exec(path)![1] ?? 'price';
        for (const sample of samples) {
          const spec = { ...base[kind], ...(build(leaf, sample) as object) };
          expect(SPEC_SCHEMAS[kind].safeParse(spec).success, `${p} = ${JSON.stringify(sample)}`).toBe(new RegExp(n.pattern as string).test(sample));
        }
      });
    }
    expect(found.sort()).toEqual(
      [
        ...['inputPerMTok', 'cachedInputPerMTok', 'cacheWritePerMTok', 'cacheWrite1hPerMTok', 'outputPerMTok', 'imagePer[].price']
          .concat(['imageInputPerMTok', 'imageOutputPerMTok', 'audioInputPerMTok', 'audioOutputPerMTok'])
          .concat(['audioInputPerSecond', 'speechPerMChars', 'videoPerSecond', 'webSearchPerCall', 'fileSearchPerCall'])
          .map((f) => `ModelRoute.spec.backends[].pricing.${f}`),
        ...['Group.spec.limits', 'Group.spec.limits.models[]', 'GatewayToken.spec.limits'].flatMap((b) => [`${b}.costPerDay`, `${b}.costPerMonth`]),
      ].sort(),
    );
  });

  it('writes YAML that parses back to the same objects', () => {
    for (const f of buildCrdFiles()) expect(parse(f.text).kind).toBe('CustomResourceDefinition');
  });
});
