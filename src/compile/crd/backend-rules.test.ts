// The CEL rules the API server enforces on spec.backends[] (auth, headers, query, pathStyle, anthropicBetas), evaluated with a CEL
// interpreter on the generated CRD schema, must accept and refuse the same backends as the zod schema the gateway
// compiles with: otherwise `kubectl apply` and the gateway would disagree about what is valid.
import { evaluate } from '@marcbachmann/cel-js';
import { describe, expect, it } from 'vitest';
import { SPEC_SCHEMAS } from '../resources.js';
import { buildCrd } from './crd-definitions.js';

interface Node {
  properties?: Record<string, Node>;
  items?: Node;
  'x-kubernetes-validations'?: { rule: string; message: string }[];
}

const backendSchema = (buildCrd('ModelRoute').spec as any).versions[0].schema.openAPIV3Schema.properties.spec.properties.backends.items as Node;

/** Every rule on the path to every value present, as the API server applies them; the messages of those that fail. */
function celFailures(schema: Node, value: unknown): string[] {
  const out: string[] = [];
  for (const v of schema['x-kubernetes-validations'] ?? []) if (evaluate(v.rule, { self: value }) !== true) out.push(v.message);
  if (Array.isArray(value) && schema.items) for (const item of value) out.push(...celFailures(schema.items, item));
  else if (value !== null && typeof value === 'object' && schema.properties)
    for (const [k, child] of Object.entries(schema.properties)) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out.push(...celFailures(child, v));
    }
  return out;
}

const ref = { name: 's', key: 'k' };
const base = { name: 'b', baseURL: 'https://example.com/v1' };
const CASES: Array<[string, Record<string, unknown>]> = [
  ['no auth at all', {}],
  ['apiKeySecretRef alone', { apiKeySecretRef: ref }],
  ['apiKeySecretRef and auth', { apiKeySecretRef: ref, auth: { bearer: { secretRef: ref } } }],
  ['one auth kind', { auth: { header: { name: 'api-key', secretRef: ref } } }],
  ['two auth kinds', { auth: { header: { name: 'api-key', secretRef: ref }, query: { name: 'key', secretRef: ref } } }],
  ['an empty auth', { auth: {} }],
  ['none', { auth: { none: {} } }],
  ['awsSigV4 from the pod', { auth: { awsSigV4: { region: 'us-east-1' } } }],
  ['azureAD workload identity', { auth: { azureAD: {} } }],
  ['azureAD secret with ids', { auth: { azureAD: { tenantId: 't', clientId: 'c', secretRef: ref } } }],
  ['azureAD secret without ids', { auth: { azureAD: { secretRef: ref } } }],
  ['a key header named Host', { auth: { header: { name: 'Host', secretRef: ref } } }],
  ['a header named Content-Length', { headers: [{ name: 'Content-Length', value: '1' }] }],
  ['a header with a value', { headers: [{ name: 'anthropic-version', value: '2023-06-01' }] }],
  ['a header from a Secret', { headers: [{ name: 'OpenAI-Project', secretRef: ref }] }],
  ['a header with both', { headers: [{ name: 'x', value: 'v', secretRef: ref }] }],
  ['a header with neither', { headers: [{ name: 'x' }] }],
  ['a query parameter with neither', { query: [{ name: 'x' }] }],
  ['Azure deployments with api-version', { pathStyle: 'azureDeployments', query: [{ name: 'api-version', value: '2024-10-21' }] }],
  ['Azure deployments without api-version', { pathStyle: 'azureDeployments', query: [{ name: 'x', value: 'y' }] }],
  ['Azure deployments without query', { pathStyle: 'azureDeployments' }],
  ['allowed betas on a Messages backend', { api: 'anthropic', anthropicBetas: { allow: ['interleaved-thinking-2025-05-14'] } }],
  ['allowed betas on an OpenAI backend', { api: 'openai', anthropicBetas: { allow: [] } }],
  ['allowed betas without api', { anthropicBetas: { allow: [] } }],
];

describe('CEL rules of spec.backends[]', () => {
  it.each(CASES)('agree with zod: %s', (_what, fields) => {
    const backend = { ...base, ...fields };
    const zodOk = SPEC_SCHEMAS.ModelRoute.safeParse({ backends: [backend] }).success;
    const failures = celFailures(backendSchema, backend);
    expect(failures.length === 0, failures.join('; ')).toBe(zodOk);
  });

  it('refuse what they should (the table above is not all accepted)', () => {
    const refused = CASES.filter(([, f]) => celFailures(backendSchema, { ...base, ...f }).length > 0).map(([w]) => w);
    expect(refused).toEqual([
      'apiKeySecretRef and auth',
      'two auth kinds',
      'an empty auth',
      'azureAD secret without ids',
      'a key header named Host',
      'a header named Content-Length',
      'a header with both',
      'a header with neither',
      'a query parameter with neither',
      'Azure deployments without api-version',
      'Azure deployments without query',
      'allowed betas on an OpenAI backend',
      'allowed betas without api',
    ]);
  });
});
