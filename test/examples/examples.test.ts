// Every example manifest (examples/kubernetes, examples/local and examples/providers) is valid against the CRD schemas the API
// server would enforce (ajv on the committed openAPIV3Schema) and against the zod schemas, which also carry the
// intent of the CRDs' CEL rules; the Kubernetes example compiles to a fully Ready configuration.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { compile } from '../../src/compile/compile.js';
import { sha256Hex } from '../../src/model/digest.js';
import { readManifestFiles } from '../../src/sources/file/manifest-files.js';
import { RESOURCE_NAMES } from '../../src/compile/resource-names.js';
import { GROUP_VERSION, KINDS, SPEC_SCHEMAS, type Kind, type RawObject } from '../../src/compile/resources.js';
import { DEFAULT_SECRET_SELECTOR } from '../../src/sources/kubernetes/kubernetes-source.js';

const ROOT = join(import.meta.dirname, '..', '..');
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
const validators = Object.fromEntries(
  KINDS.map((kind) => {
    const crd = parse(readFileSync(join(ROOT, 'crds', `modelgateway.io_${RESOURCE_NAMES[kind].plural}.yaml`), 'utf8'));
    return [kind, ajv.compile(crd.spec.versions[0].schema.openAPIV3Schema)];
  }),
) as Record<Kind, ReturnType<typeof ajv.compile>>;

const dirs = ['examples/kubernetes', 'examples/local', 'examples/providers', 'examples/budgets'].filter((d) => existsSync(join(ROOT, d)));

describe('examples', () => {
  it('include the Kubernetes example set (namespace, labelled Secrets, 2 routes, 2 groups, 3 tokens)', async () => {
    const { objects, errors } = await readManifestFiles([join(ROOT, 'examples/kubernetes')]);
    expect(errors).toEqual([]);
    const count = (kind: string) => objects.filter((o) => o.object.kind === kind).length;
    expect([count('Namespace'), count('ModelRoute'), count('Group'), count('GatewayToken')]).toEqual([1, 2, 2, 3]);
    const routes = objects.filter((o) => o.object.kind === 'ModelRoute').map((o) => (o.object as any).spec.backends);
    expect(routes.some((b: { priority?: number }[]) => b.some((x) => (x.priority ?? 0) > 0))).toBe(true); // a fallback tier
    const [key, value] = DEFAULT_SECRET_SELECTOR.split('=');
    for (const s of objects.filter((o) => o.object.kind === 'Secret')) expect((s.object.metadata as any).labels?.[key!]).toBe(value);
  });

  for (const dir of dirs) {
    it(`${dir}: every custom resource passes the CRD schema and the zod schema`, async () => {
      const { objects, errors } = await readManifestFiles([join(ROOT, dir)]);
      expect(errors).toEqual([]);
      const custom = objects.filter((o) => o.object.apiVersion === GROUP_VERSION);
      expect(custom.length).toBeGreaterThan(0);
      for (const { object, source } of custom) {
        const kind = object.kind as Kind;
        const where = `${source?.file}:${source?.line} ${kind} ${String(object.metadata?.name)}`;
        expect(KINDS, where).toContain(kind);
        const validate = validators[kind];
        expect(validate(object), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        const zod = SPEC_SCHEMAS[kind].safeParse((object as RawObject & { spec: unknown }).spec);
        expect(zod.success, `${where}: ${zod.error?.message}`).toBe(true);
      }
    });

    // The provider recipes are alternatives (several publish the same model): each compiles on its own.
    const sets = dir === 'examples/providers' ? readdirSync(join(ROOT, dir)).map((f) => join(ROOT, dir, f)) : [join(ROOT, dir)];
    it(`${dir}: compiles with every object Ready`, async () => {
      for (const set of sets) {
        const { objects } = await readManifestFiles([set]);
        const { statuses } = compile(objects);
        const notReady = statuses.filter((s) => !s.conditions.some((c) => c.type === 'Ready' && c.status === 'True'));
        expect(
          notReady.map((s) => `${s.ref}: ${s.conditions.at(-1)?.message}`),
          set,
        ).toEqual([]);
      }
    });
  }

  it('the CRD schema rejects what the API server would (so the validation above is not vacuous)', () => {
    const token = { apiVersion: GROUP_VERSION, kind: 'GatewayToken', metadata: { name: 't' }, spec: { group: 'Not_A_Label', sha256: 'xyz' } };
    expect(validators.GatewayToken(token)).toBe(false);
    const route = {
      apiVersion: GROUP_VERSION,
      kind: 'ModelRoute',
      metadata: { name: 'r' },
      spec: { backends: [{ name: 'a', baseURL: 'ftp://x', weight: -1 }] },
    };
    expect(validators.ModelRoute(route)).toBe(false);
    expect(validators.Group({ apiVersion: GROUP_VERSION, kind: 'Group', metadata: { name: 'g' }, spec: {} })).toBe(false);
  });

  it('the ci-bot example digest matches the key its comment names', () => {
    const text = readFileSync(join(ROOT, 'examples/kubernetes/40-tokens.yaml'), 'utf8');
    const key = /The key here is "([^"]+)"/.exec(text)![1]!;
    expect(text).toContain(`sha256: ${sha256Hex(key)}`);
  });
});
