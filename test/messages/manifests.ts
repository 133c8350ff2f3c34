// Manifests for the Messages API tests: routes of the messages family to a native Anthropic backend and to a
// translated (chat completions) one, a route mixing both, a route outside the group, a group per team (one limited to
// a request a minute, one to 3,000 tokens a minute) and their tokens; and extra routes over any of these backends and
// Claude on Bedrock (SigV4) and Vertex AI (a Google service account), tried in the order listed. Each backend gets
// its own upstream credential; clients never send it.
export const KEYS = {
  alice: 'sk-msgs-alice-0123456789',
  limited: 'sk-msgs-limited-0123456789',
  tight: 'sk-msgs-tight-0123456789',
  anthropicUpstream: 'sk-ant-upstream-key-abcdef',
  chatUpstream: 'sk-chat-upstream-key-abcdef',
} as const;

/** How an extra route's backend speaks: Anthropic's API, chat completions, Claude on Bedrock or on Vertex AI. */
export type BackendKind = 'anthropic' | 'openai' | 'bedrock' | 'vertex';
type Backend = readonly [BackendKind, string];

/** The upstream model names of the cloud backends, as each cloud names Claude Sonnet 4.5. */
const CLOUD_MODELS = { bedrock: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', vertex: 'claude-sonnet-4-5@20250929' } as const;

/** The credentials of the cloud backends. */
interface CloudCredentials {
  /** For Bedrock (region us-west-2, service bedrock). */
  readonly aws?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** A Google service account's JSON key, for Vertex AI. */
  readonly googleKeyJson?: string;
}

export interface MessagesSetup {
  /** Base URL (with /v1) of the fake Anthropic upstream. */
  anthropic: string;
  /** Base URL (with /v1) of the fake chat completions upstream. */
  chat: string;
  /**
   * Extra routes: public model name → [backend kind, base URL] (a bedrock backend's is the runtime's origin, a vertex
   * one's the publisher's model collection), or a list of them (each kind once), each a priority tier after the one before.
   */
  extra?: Record<string, Backend | readonly Backend[]>;
  clouds?: CloudCredentials;
  /** A base URL nothing listens on: `claude-x-failover` tries a native backend there first, then the chat one. */
  dead?: string;
}

const nativeBackend = (name: string, baseURL: string, priority = 0) =>
  `  - {name: ${name}, api: anthropic, baseURL: "${baseURL}", model: upstream-claude, priority: ${priority}, auth: {header: {name: x-api-key, secretRef: {name: upstreams, key: anthropic}}}}`;
const chatBackend = (name: string, baseURL: string, priority = 0) =>
  `  - {name: ${name}, baseURL: "${baseURL}", model: upstream-chat-model, priority: ${priority}, apiKeySecretRef: {name: upstreams, key: chat}}`;

const cloudBackend = (kind: 'bedrock' | 'vertex', baseURL: string, priority: number) =>
  `  - {name: ${kind}, api: anthropic, baseURL: "${baseURL}", model: "${CLOUD_MODELS[kind]}", priority: ${priority}, auth: ${
    kind === 'bedrock'
      ? '{awsSigV4: {region: us-west-2, service: bedrock, secretRef: {name: aws-credentials}}}'
      : '{gcp: {secretRef: {name: vertex-sa, key: key.json}}}'
  }}`;

function backendLine([kind, url]: Backend, priority: number): string {
  if (kind === 'anthropic') return nativeBackend('anthropic', url, priority);
  if (kind === 'openai') return chatBackend('vllm', url, priority);
  return cloudBackend(kind, url, priority);
}

function cloudSecrets(c: CloudCredentials | undefined): string {
  const aws = c?.aws ? { AWS_ACCESS_KEY_ID: c.aws.accessKeyId, AWS_SECRET_ACCESS_KEY: c.aws.secretAccessKey } : undefined;
  const google = c?.googleKeyJson ? { 'key.json': c.googleKeyJson } : undefined;
  const secret = (name: string, data: Record<string, string>) => `---
${JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: data })}
`;
  return (aws ? secret('aws-credentials', aws) : '') + (google ? secret('vertex-sa', google) : '');
}

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
  const extra = Object.entries(s.extra ?? {}).map(([model, b]) => {
    const backends: readonly Backend[] = typeof b[0] === 'string' ? [b as Backend] : (b as readonly Backend[]);
    return route(model, backends.map(backendLine));
  });
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
${cloudSecrets(s.clouds)}${route('claude-native', [nativeBackend('anthropic', s.anthropic)])}
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
