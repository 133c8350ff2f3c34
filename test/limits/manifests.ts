// Manifests for the limits tests: one chat route (two backends, each optionally with upstream limits), a group and
// two tokens, with the limit fields each test sets.
export const KEYS = { alice: 'sk-limits-alice-0123456789', bob: 'sk-limits-bob-0123456789' } as const;

export interface LimitsSetup {
  upstream: string;
  /** A second backend (priority 1: the fallback of `primary`); absent: one backend. */
  secondUpstream?: string;
  group?: string;
  alice?: string;
  primaryLimits?: string;
  secondLimits?: string;
  /** spec.backends[].pricing of each backend, as flow YAML; absent: unpriced. */
  primaryPricing?: string;
  secondPricing?: string;
  defaultMaxOutputTokens?: number;
}

export function limitsManifests(s: LimitsSetup): string {
  const backend = (name: string, url: string, limits: string | undefined, priority: number, pricing?: string) =>
    `  - {name: ${name}, baseURL: "${url}", model: upstream-chat, priority: ${priority}${limits ? `, limits: ${limits}` : ''}${pricing ? `, pricing: ${pricing}` : ''}}`;
  return `
apiVersion: v1
kind: Secret
metadata: {name: keys}
stringData: {alice: ${KEYS.alice}, bob: ${KEYS.bob}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: chat}
spec:
  model: gpt-4o-mini
  ${s.defaultMaxOutputTokens ? `defaultMaxOutputTokens: ${s.defaultMaxOutputTokens}` : ''}
  retry: {attempts: 2}
  backends:
${backend('primary', s.upstream, s.primaryLimits, 0, s.primaryPricing)}
${s.secondUpstream ? backend('second', s.secondUpstream, s.secondLimits, 1, s.secondPricing) : ''}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: team}
spec:
  models: ["*"]
  ${s.group ? `limits: ${s.group}` : ''}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice}
spec:
  group: team
  secretRef: {name: keys, key: alice}
  ${s.alice ? `limits: ${s.alice}` : ''}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: bob}
spec: {group: team, secretRef: {name: keys, key: bob}}
`;
}
