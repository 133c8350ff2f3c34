// Configuration shared by the sealed-id integration tests: a video route and a Responses route on fake
// upstreams, two tokens in one group (alice, bob), and helpers to decode what the gateway handed out.
import { randomBytes } from 'node:crypto';

export const ALICE = 'sk-sealed-alice-0123456789';
export const BOB = 'sk-sealed-bob-0123456789';
export const UPSTREAM_KEY = 'sk-sealed-upstream-secret';

export interface SealedManifestOptions {
  /** Base URLs of the video route's backends (named b0, b1, …). */
  video: string[];
  /** Base URL of the Responses route's backend. */
  responses: string;
  /** Models in the team group (default all). */
  groupModels?: string[];
  /** The team group's limits, as a YAML flow mapping (e.g. `{requestsPerMinute: 1}`); absent: none. */
  groupLimits?: string;
  /** The gpt-r backend's pricing, as a YAML flow mapping; absent: none. */
  responsesPricing?: string;
  /** The video backends' pricing, as a YAML flow mapping; absent: none. */
  videoPricing?: string;
}

export function sealedManifests(o: SealedManifestOptions): string {
  const videoBackends = o.video
    .map(
      (url, i) =>
        `  - {name: b${i}, baseURL: "${url}", apiKeySecretRef: {name: upstream, key: apiKey}, model: sora-2-up${o.videoPricing ? `, pricing: ${o.videoPricing}` : ''}}`,
    )
    .join('\n');
  const models = o.groupModels ?? ['sora-2', 'gpt-r', 'gpt-r-same-store', 'gpt-r-other-store'];
  return `
apiVersion: v1
kind: Secret
metadata: {name: upstream}
stringData: {apiKey: ${UPSTREAM_KEY}}
---
apiVersion: v1
kind: Secret
metadata: {name: keys}
stringData: {alice: ${ALICE}, bob: ${BOB}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: sora}
spec:
  model: sora-2
  endpoints: [videos]
  backends:
${videoBackends}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: gpt-r}
spec:
  model: gpt-r
  endpoints: [responses]
  backends:
  - {name: store, baseURL: "${o.responses}", apiKeySecretRef: {name: upstream, key: apiKey}, model: gpt-r-up${o.responsesPricing ? `, pricing: ${o.responsesPricing}` : ''}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: gpt-r-same-store}
spec:
  model: gpt-r-same-store
  endpoints: [responses]
  backends:
  - {name: elsewhere, baseURL: "http://127.0.0.1:9/v1", priority: 0}
  - {name: shared, baseURL: "${o.responses}", apiKeySecretRef: {name: upstream, key: apiKey}, priority: 1}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: gpt-r-other-store}
spec:
  model: gpt-r-other-store
  endpoints: [responses]
  backends:
  - {name: store, baseURL: "${o.responses}"}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: team}
spec: {models: [${models.join(', ')}]${o.groupLimits ? `, limits: ${o.groupLimits}` : ''}}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice}
spec: {group: team, secretRef: {name: keys, key: alice}}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: bob}
spec: {group: team, secretRef: {name: keys, key: bob}}
`;
}

export const newKey = () => randomBytes(32);
