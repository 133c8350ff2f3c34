// Routes of the Responses family for the chat completions translation tests, added to the standard manifests (public
// names start with "extra-", which team-a allows): each backend listed as [api, base URL], each a priority tier after
// the one before, so a route can fail over from one kind of backend to the other.
import { standardManifests } from '../helpers/gateway.js';

export type Api = 'chatCompletions' | 'openai';

export function responsesChatManifests(standardUpstream: string, routes: Record<string, readonly (readonly [Api, string])[]>): string {
  const extra = Object.entries(routes)
    .map(
      ([model, backends]) => `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${model}}
spec:
  model: ${model}
  endpoints: [responses]
  backends:
${backends.map(([api, url], i) => `  - {name: ${api === 'openai' ? 'responses' : 'chat'}${i}, api: ${api}, baseURL: "${url}", model: upstream-${api}, priority: ${i}, apiKeySecretRef: {name: upstream-credentials, key: apiKey}}`).join('\n')}
`,
    )
    .join('');
  return standardManifests(standardUpstream, extra);
}
