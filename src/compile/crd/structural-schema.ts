// JSON Schema (as zod's toJSONSchema emits it for OpenAPI 3.0) → a Kubernetes *structural* schema: no $ref, no
// additionalProperties:false, a type on every node, no keywords the API server rejects. Generic on purpose, so a
// field someone adds to resources.ts is converted without touching this file; anything that cannot be expressed
// structurally fails the generator loudly instead of producing a CRD the API server would refuse.

export type JsonSchema = { [key: string]: unknown };

/** Keywords of apiextensions.k8s.io/v1 JSONSchemaProps that may appear in a structural schema. */
const ALLOWED = new Set([
  'type',
  'format',
  'title',
  'description',
  'default',
  'enum',
  'nullable',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'multipleOf',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'properties',
  'additionalProperties',
  'example',
]);
/** Annotations with no CRD meaning, dropped silently. */
const DROPPED = new Set(['$schema', '$id', 'id', 'examples', '$comment', 'readOnly', 'writeOnly', 'deprecated']);
/** Formats the API server validates itself; zod's own regex for them is redundant (and often not RE2). */
const K8S_FORMATS = new Set(['date-time', 'date', 'email', 'uri', 'uuid', 'ipv4', 'ipv6', 'hostname', 'byte', 'duration']);
const SAFE = Number.MAX_SAFE_INTEGER;

export function toStructuralSchema(schema: JsonSchema, path = '(root)'): JsonSchema {
  for (const bad of ['$ref', '$defs', 'definitions', 'allOf', 'oneOf', 'not', 'if', 'const']) {
    if (bad in schema) throw new Error(`${path}: "${bad}" cannot be expressed in a structural CRD schema; restructure the zod schema`);
  }
  if ('anyOf' in schema) return mergeEnumUnion(schema, path);
  if (Object.keys(schema).every((k) => DROPPED.has(k) || k === 'description' || k === 'default')) {
    // z.unknown() / z.any(): keep whatever the client stored.
    return { ...pick(schema, ['description', 'default']), 'x-kubernetes-preserve-unknown-fields': true };
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED.has(key)) continue;
    if (key.startsWith('x-kubernetes-')) {
      out[key] = value;
      continue;
    }
    if (!ALLOWED.has(key)) throw new Error(`${path}: keyword "${key}" is not allowed in a CRD schema`);
    switch (key) {
      case 'properties':
        // The API server stores no empty properties map: emitted, the file differs from the stored CRD, and a
        // server-side apply over a client-side one conflicts on .spec.versions.
        if (Object.keys(value as JsonSchema).length === 0) break;
        out.properties = Object.fromEntries(
          Object.entries(value as Record<string, JsonSchema>).map(([name, sub]) => [name, toStructuralSchema(sub, `${path}.${name}`)]),
        );
        break;
      case 'items':
        if (Array.isArray(value)) throw new Error(`${path}: tuple arrays cannot be expressed in a CRD schema`);
        out.items = toStructuralSchema(value as JsonSchema, `${path}[]`);
        break;
      case 'additionalProperties':
        // false is the default of a structural schema (unknown fields are pruned) and is not allowed next to properties.
        if (value === false) break;
        if (value === true) out['x-kubernetes-preserve-unknown-fields'] = true;
        else out.additionalProperties = toStructuralSchema(value as JsonSchema, `${path}.*`);
        break;
      case 'minimum':
        if (value !== -SAFE) out.minimum = value;
        break;
      case 'maximum':
        if (value !== SAFE) out.maximum = value;
        break;
      case 'pattern':
        if (!(typeof schema.format === 'string' && K8S_FORMATS.has(schema.format))) out.pattern = value;
        break;
      case 'required':
        if (Array.isArray(value) && value.length > 0) out.required = value;
        break;
      default:
        out[key] = value;
    }
  }
  if (schema.uniqueItems === true) throw new Error(`${path}: uniqueItems is not allowed; use x-kubernetes-list-type: set`);
  if (out.type === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true && out['x-kubernetes-int-or-string'] !== true) {
    throw new Error(`${path}: every node of a structural schema needs a type`);
  }
  if (out.properties && out.additionalProperties) throw new Error(`${path}: properties and additionalProperties are mutually exclusive`);
  if (out.type === 'object' && !out.properties && !out.additionalProperties && out['x-kubernetes-preserve-unknown-fields'] !== true) {
    // An object with no fields (z.object({})): the API server's CEL cannot read one with neither properties nor
    // additionalProperties ("invalid object type" in every rule that looks at its parent), but it can read one that
    // keeps unknown fields; maxProperties: 0 then refuses any field, as a strict zod object does.
    out['x-kubernetes-preserve-unknown-fields'] = true;
    if (schema.additionalProperties === false) out.maxProperties = 0;
  }
  return out;
}

/** z.enum unions and nullable scalars are the only unions with a structural form: one type plus an enum. */
function mergeEnumUnion(schema: JsonSchema, path: string): JsonSchema {
  const branches = schema.anyOf as JsonSchema[];
  const types = new Set(branches.map((b) => b.type));
  if (types.size !== 1 || !branches.every((b) => Array.isArray(b.enum))) {
    throw new Error(`${path}: unions other than of literals of one type cannot be expressed in a CRD schema`);
  }
  const { anyOf: _omit, ...rest } = schema;
  return toStructuralSchema({ ...rest, type: [...types][0], enum: branches.flatMap((b) => b.enum as unknown[]) }, path);
}

function pick(o: JsonSchema, keys: string[]): JsonSchema {
  return Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
}
