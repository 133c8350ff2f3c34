// Whether OpenAI's strict mode takes a JSON schema as it is: every object lists each of its properties as required
// and allows no others. Anthropic's structured outputs accept optional properties, which OpenAI's strict mode refuses
// (400), so such a schema goes to a chat backend as a non-strict json_schema: it still guides the answer, the
// backend just does not promise it. Pure.

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Members whose values are schemas, or maps or lists of schemas. */
const SCHEMA_MAPS = ['properties', '$defs', 'definitions'] as const;
const SCHEMA_LISTS = ['anyOf', 'allOf', 'oneOf', 'prefixItems'] as const;

export function strictCompatible(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(strictCompatible);
  if (!isObject(schema)) return true;
  const properties = schema['properties'];
  if (isObject(properties) || schema['type'] === 'object') {
    const required = Array.isArray(schema['required']) ? schema['required'] : [];
    if (schema['additionalProperties'] !== false) return false;
    if (isObject(properties) && !Object.keys(properties).every((k) => required.includes(k))) return false;
  }
  for (const m of SCHEMA_MAPS) if (isObject(schema[m]) && !Object.values(schema[m]).every(strictCompatible)) return false;
  for (const l of SCHEMA_LISTS) if (schema[l] !== undefined && !strictCompatible(schema[l])) return false;
  return strictCompatible(schema['items']);
}
