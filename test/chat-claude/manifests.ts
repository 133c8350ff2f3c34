// Routes of the chat completions family for the Claude translation tests, added to the standard manifests (public
// names start with "extra-", which team-a allows): each backend listed as [kind, base URL], each a priority tier
// after the one before, so a route can fail over between an anthropic backend and an OpenAI-compatible one (for
// the Responses family, a chat completions one: api chatCompletions).
import { standardManifests } from '../helpers/gateway.js';

export type Kind = 'anthropic' | 'openai' | 'chatCompletions';

/** The upstream credential of the anthropic backends, sent in x-api-key. */
export const ANTHROPIC_KEY = 'sk-ant-upstream-key-abcdef';

const backend = ([kind, url]: readonly [Kind, string], i: number) =>
  kind === 'anthropic'
    ? `  - {name: claude${i}, api: anthropic, baseURL: "${url}", model: upstream-claude, priority: ${i}, auth: {header: {name: x-api-key, secretRef: {name: anthropic-key, key: key}}}}`
    : kind === 'chatCompletions'
      ? `  - {name: chat${i}, api: chatCompletions, baseURL: "${url}", model: upstream-chat, priority: ${i}, apiKeySecretRef: {name: upstream-credentials, key: apiKey}}`
      : `  - {name: openai${i}, baseURL: "${url}", model: upstream-chat, priority: ${i}, apiKeySecretRef: {name: upstream-credentials, key: apiKey}}`;

export function chatClaudeManifests(
  standardUpstream: string,
  routes: Record<string, readonly (readonly [Kind, string])[]>,
  defaultMaxOutputTokens?: number,
  endpoints: readonly string[] = ['chat.completions'],
): string {
  const extra = Object.entries(routes)
    .map(
      ([model, backends]) => `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${model}}
spec:
  model: ${model}
  endpoints: [${endpoints.join(', ')}]${defaultMaxOutputTokens ? `\n  defaultMaxOutputTokens: ${defaultMaxOutputTokens}` : ''}
  backends:
${backends.map(backend).join('\n')}
`,
    )
    .join('');
  return standardManifests(
    standardUpstream,
    `${extra}---
apiVersion: v1
kind: Secret
metadata: {name: anthropic-key}
stringData: {key: ${ANTHROPIC_KEY}}
`,
  );
}
