// Manifests for the Messages API tests: routes of the messages family to a native Anthropic backend and to a
// translated (chat completions) one, a route mixing both, a route outside the group, a group per team (one limited to
// a request a minute, one to 3,000 tokens a minute) and their tokens. Each backend gets its own upstream key; clients never send it.
export const KEYS = {
  alice: 'sk-msgs-alice-0123456789',
  limited: 'sk-msgs-limited-0123456789',
  tight: 'sk-msgs-tight-0123456789',
  anthropicUpstream: 'sk-ant-upstream-key-abcdef',
  chatUpstream: 'sk-chat-upstream-key-abcdef',
} as const;

export interface MessagesSetup {
  /** Base URL (with /v1) of the fake Anthropic upstream. */
  anthropic: string;
  /** Base URL (with /v1) of the fake chat completions upstream. */
  chat: string;
  /** Extra routes: public model name → [backend kind, base URL]. */
  extra?: Record<string, ['anthropic' | 'openai', string]>;
  /** A base URL nothing listens on: `claude-x-failover` tries a native backend there first, then the chat one. */
  dead?: string;
}

const nativeBackend = (name: string, baseURL: string, priority = 0) =>
  `  - {name: ${name}, api: anthropic, baseURL: "${baseURL}", model: upstream-claude, priority: ${priority}, auth: {header: {name: x-api-key, secretRef: {name: upstreams, key: anthropic}}}}`;
const chatBackend = (name: string, baseURL: string, priority = 0) =>
  `  - {name: ${name}, baseURL: "${baseURL}", model: upstream-chat-model, priority: ${priority}, apiKeySecretRef: {name: upstreams, key: chat}}`;

const route = (model: string, backends: string[]) => `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${model}}
spec:
  model: ${model}
  endpoints: [messages]
  backends:
${backends.join('\n')}
`;

export function messagesManifests(s: MessagesSetup): string {
  const extra = Object.entries(s.extra ?? {}).map(([model, [kind, url]]) =>
    route(model, [kind === 'anthropic' ? nativeBackend('only', url) : chatBackend('only', url)]),
  );
  return `
apiVersion: v1
kind: Secret
metadata: {name: upstreams}
stringData: {anthropic: ${KEYS.anthropicUpstream}, chat: ${KEYS.chatUpstream}}
---
apiVersion: v1
kind: Secret
metadata: {name: clients}
stringData: {alice: ${KEYS.alice}, limited: ${KEYS.limited}, tight: ${KEYS.tight}}
${route('claude-native', [nativeBackend('anthropic', s.anthropic)])}
${route('claude-translated', [chatBackend('vllm', s.chat)])}
${route('claude-mixed', [nativeBackend('anthropic', s.anthropic, 0), chatBackend('vllm', s.chat, 1)])}
${route('claude-forbidden', [nativeBackend('anthropic', s.anthropic)])}
${extra.join('')}
${s.dead ? route('claude-x-failover', [nativeBackend('anthropic', s.dead, 0), chatBackend('vllm', s.chat, 1)]) : ''}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: chat-only}
spec:
  model: chat-only
  endpoints: [chat.completions]
  backends:
${chatBackend('vllm', s.chat)}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: coders}
spec:
  models: ["claude-native", "claude-translated", "claude-mixed", "claude-x-*", "chat-only"]
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: slow-team}
spec:
  models: ["claude-*"]
  limits: {requestsPerMinute: 1}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: tight-team}
spec:
  models: ["claude-*"]
  limits: {tokensPerMinute: 3000}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: tight}
spec: {group: tight-team, secretRef: {name: clients, key: tight}}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice}
spec: {group: coders, secretRef: {name: clients, key: alice}}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: limited}
spec: {group: slow-team, secretRef: {name: clients, key: limited}}
`;
}
