// Structural-schema defaulting, as a real API server applies it to custom resources: every `default` of the CRD's
// openAPIV3Schema is filled in where the field is absent, nested objects and array items included. So objects read
// from the fake look like objects read from a cluster (e.g. a GatewayToken carries `disabled: false` although the
// manifest left it out), and the gateway is measured and tested against what it will really receive.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export interface StructuralSchema {
  readonly default?: unknown;
  readonly properties?: Readonly<Record<string, StructuralSchema>>;
  readonly items?: StructuralSchema;
  readonly additionalProperties?: StructuralSchema | boolean;
}

/** Fills in defaults of `schema` in `value`, in place (value is the fake's own copy). */
export function applyDefaults(value: unknown, schema: StructuralSchema): void {
  if (Array.isArray(value)) {
    if (schema.items) for (const item of value) applyDefaults(item, schema.items);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const o = value as Record<string, unknown>;
  for (const [k, sub] of Object.entries(schema.properties ?? {})) {
    if (o[k] === undefined && sub.default !== undefined) o[k] = structuredClone(sub.default);
    if (o[k] !== undefined) applyDefaults(o[k], sub);
  }
  const extra = schema.additionalProperties;
  if (extra && typeof extra === 'object') {
    for (const [k, v] of Object.entries(o)) if (!schema.properties?.[k]) applyDefaults(v, extra);
  }
}

/** The served version's schema of every CRD in `dir` (the repository's crds/), by kind. */
export function crdSchemas(dir = join(import.meta.dirname, '..', '..', 'crds')): Record<string, StructuralSchema> {
  const out: Record<string, StructuralSchema> = {};
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    const crd = parse(readFileSync(join(dir, file), 'utf8')) as {
      spec: { names: { kind: string }; versions: { served: boolean; schema: { openAPIV3Schema: StructuralSchema } }[] };
    };
    const served = crd.spec.versions.find((v) => v.served);
    if (served) out[crd.spec.names.kind] = served.schema.openAPIV3Schema;
  }
  return out;
}
