// The three custom resources (and core Secret) as zod schemas. These are the single source of truth for shapes:
// the CRD OpenAPI schemas in crds/ are generated from them (see scripts/), and everything else uses these types.
import { z } from 'zod';
import { FAMILIES } from '../model/families.js';
import { MONEY_PATTERN } from '../model/money.js';

export const API_GROUP = 'modelgateway.io';
export const API_VERSION = 'v1alpha1';
export const GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;

/** Go-style durations as Kubernetes users write them: 500ms, 5s, 2m, 1h, 1m30s. */
const DURATION_PATTERN = '^([0-9]+(ms|s|m|h))+$';
const duration = z.string().regex(new RegExp(DURATION_PATTERN), 'a duration such as 500ms, 5s, 2m or 1h');

const dnsLabel = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a lowercase RFC 1123 label');

const SecretKeyRefSchema = z
  .object({
    name: z.string().min(1).max(253).describe('Name of a Secret in the same namespace as this object.'),
    key: z.string().min(1).max(253).describe('Key inside the Secret whose value is used.'),
  })
  .strict()
  .describe('A reference to one key of a Secret in the same namespace.');
export type SecretKeyRef = z.infer<typeof SecretKeyRefSchema>;

const ObjectMetaSchema = z
  .object({
    name: z.string().min(1).max(253),
    namespace: z.string().min(1).max(63).optional(),
    uid: z.string().optional(),
    generation: z.number().int().optional(),
    resourceVersion: z.string().optional(),
    creationTimestamp: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  })
  .passthrough();

// ---- limits (see docs/usage-and-limits.md) --------------------------------------------------------------------

/** Largest limit value: far beyond any real quota, and exact as a JavaScript number and a Redis integer. */
const MAX_LIMIT = 1e15;
const limit = (what: string) => z.number().int().min(0).max(MAX_LIMIT).optional().describe(what);

const requestsPerMinute = limit('Most requests started per calendar minute (UTC).');
const tokensPerMinute = limit(
  'Most tokens (input + output) per calendar minute (UTC). Each request reserves its input estimate plus its maximum output before the call and settles to the real count after it.',
);
const tokensPerDay = limit('Most tokens (input + output) per UTC day.');
const tokensPerMonth = limit('A budget: most tokens (input + output) per calendar month (UTC). Exhausted: 429 insufficient_quota until the month ends.');
const concurrentRequests = limit('Most requests in flight at once.');

// ---- money (see docs/usage-and-limits.md, "Costs and budgets") -----------------------------------------------

/** A YAML number (3.00 unquoted) is refused by name: it would reach us as a binary float. */
const MONEY_MESSAGE = 'a decimal string in quotes such as "3.00" or "0.075": at most 9 digits before the point and 6 after, no sign or exponent';
/** An amount in the gateway's currency (serve --currency), as a decimal string; compiled to integer micro-units. */
const money = (what: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? undefined : MONEY_MESSAGE) })
    .regex(new RegExp(MONEY_PATTERN), MONEY_MESSAGE)
    .describe(what);

const RESERVED = 'Each request reserves its largest cost and settles to its exact cost; once spent, 429 insufficient_quota.';
const MONEY_LIMIT_FIELDS = {
  costPerDay: money(`Most spend per UTC day, in the gateway's currency (a decimal string, e.g. "50.00"). ${RESERVED}`).optional(),
  costPerMonth: money(`A budget: most spend per calendar month (UTC), in the gateway's currency (a decimal string, e.g. "2500.00"). ${RESERVED}`).optional(),
  warnAt: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe(
      "Percentage (1-100) of this block's costPerDay and costPerMonth past which responses carry x-model-gateway-budget-warning and model_gateway_budget_warnings_total counts the crossing.",
    ),
};

const CLIENT_LIMIT_FIELDS = { requestsPerMinute, tokensPerMinute, tokensPerDay, tokensPerMonth, concurrentRequests, ...MONEY_LIMIT_FIELDS };

const ModelLimitSchema = z
  .object({
    model: z.string().min(1).max(256).describe('Public model name or glob (* and ?); the first entry that matches a model applies to it.'),
    ...CLIENT_LIMIT_FIELDS,
  })
  .strict()
  .refine((m) => Object.keys(m).length > 1, { message: 'set at least one limit besides model' })
  // The schema's own count of fields present: CEL has no size() for an object with declared properties.
  .meta({ minProperties: 2 })
  .describe("Limits of one model (or glob) inside the group, counted per model and on top of the group's own.");

const GroupLimitsSchema = z
  .object({
    ...CLIENT_LIMIT_FIELDS,
    models: z.array(ModelLimitSchema).max(100).optional().describe('Per-model limits inside the group.'),
  })
  .strict()
  .describe('Limits shared by all tokens of the group; every field is optional and all that are set apply.');

const TokenLimitsSchema = z.object(CLIENT_LIMIT_FIELDS).strict().describe("Limits of this token alone; they narrow its group's (both apply).");

const BackendLimitsSchema = z
  .object({
    requestsPerMinute: limit(
      "Requests per calendar minute the upstream account allows: past it the gateway fails over to the route's next backend, or sheds with 429, before the upstream would answer 429.",
    ),
    tokensPerMinute: limit('Tokens per calendar minute the upstream account allows (reserved and settled as for client limits).'),
  })
  .strict()
  .describe("The upstream account's quota, as this replica set spends it.");

const price = (what: string) => money(what).optional();

const ImagePriceSchema = z
  .object({
    size: z.string().min(1).max(32).optional().describe('Image size as requests name it, e.g. 1024x1024; omitted: any size.'),
    quality: z.string().min(1).max(32).optional().describe('Image quality as requests name it, e.g. standard, hd, low, high; omitted: any quality.'),
    price: money('Price of one image.'),
  })
  .strict()
  .describe('The price of one image of a size and quality.');

const PricingSchema = z
  .object({
    inputPerMTok: price('Per million input tokens (not read from or written to the prompt cache).'),
    cachedInputPerMTok: price('Per million input tokens read from the prompt cache (default: inputPerMTok).'),
    cacheWritePerMTok: price(
      "Per million input tokens written to the prompt cache (Anthropic's 5-minute writes; OpenAI's cache_write_tokens); unset while writes are reported: unknown cost.",
    ),
    cacheWrite1hPerMTok: price('Per million input tokens written to the prompt cache for one hour (Anthropic).'),
    outputPerMTok: price('Per million output tokens, reasoning tokens included.'),
    imageInputPerMTok: price("Per million input tokens that are image tokens (gpt-image-1's input_tokens_details.image_tokens); unset: unknown cost."),
    imageOutputPerMTok: price('Per million output tokens that are image tokens (every output token of gpt-image-1); unset: unknown cost.'),
    audioInputPerMTok: price('Per million input tokens that are audio tokens (audio chat models, gpt-4o-transcribe); unset: unknown cost.'),
    audioOutputPerMTok: price('Per million output tokens that are audio tokens (audio chat models); unset: unknown cost.'),
    imagePer: z
      .array(ImagePriceSchema)
      .min(1)
      .max(64)
      .optional()
      .describe('Per image, by size and quality: the first entry that matches the request applies; none matching: unknown cost.'),
    audioInputPerSecond: price('Per second of audio input (transcriptions, translations).'),
    speechPerMChars: price('Per million characters of speech input.'),
    videoPerSecond: price('Per second of generated video.'),
    webSearchPerCall: price("Per web search the upstream ran itself (Anthropic's web_search_requests, a Responses web_search_call)."),
    fileSearchPerCall: price('Per file search the upstream ran itself (a Responses file_search_call).'),
  })
  .strict()
  .refine((p) => Object.keys(p).length > 0, { message: 'set at least one price' })
  .meta({ minProperties: 1 })
  .describe(
    "What the upstream account charges, in the gateway's currency (serve --currency) as decimal strings. A cost that needs a price left out is unknown, never 0.",
  );

// ---- backend authentication, headers, query and paths (see docs/providers.md) -------------------------------

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME_PATTERN = "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$";
/** Headers a backend may not set: framing and hop-by-hop ones the gateway computes, and the gateway's own. */
const RESERVED_HEADERS = [
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'accept-encoding',
  'x-request-id',
  'traceparent',
  'tracestate',
] as const;
const reservedList = RESERVED_HEADERS.map((h) => `'${h}'`).join(', ');

const headerName = z
  .string()
  .min(1)
  .max(128)
  .regex(new RegExp(HEADER_NAME_PATTERN), 'an HTTP header name')
  .refine((n) => !(RESERVED_HEADERS as readonly string[]).includes(n.toLowerCase()), { message: `not one of ${RESERVED_HEADERS.join(', ')}` })
  .meta({ 'x-kubernetes-validations': [{ rule: `!(self.lowerAscii() in [${reservedList}])`, message: `not one of ${RESERVED_HEADERS.join(', ')}` }] });

const queryName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._~-]+$/, 'a query parameter name (letters, digits, . _ ~ -)');

const SecretNameSchema = z.object({ name: z.string().min(1).max(253).describe('Name of a Secret in the same namespace as this object.') }).strict();

/** A header or query parameter: a literal value or one read from a Secret. */
const backendParam = (name: z.ZodType<string>, what: string) =>
  z
    .object({
      name,
      value: z.string().max(4096).optional().describe(`The ${what}'s value, as a literal (e.g. an API version).`),
      secretRef: SecretKeyRefSchema.optional().describe(`Secret key holding the ${what}'s value; masked in everything relayed from the backend.`),
    })
    .strict()
    .refine((p) => (p.value === undefined) !== (p.secretRef === undefined), { message: 'exactly one of value or secretRef must be set' })
    .meta({ 'x-kubernetes-validations': [{ rule: 'has(self.value) != has(self.secretRef)', message: 'exactly one of value or secretRef must be set' }] });

const AUTH_KINDS = ['bearer', 'header', 'query', 'none', 'awsSigV4', 'gcp', 'azureAD'] as const;
const oneAuthKind = `[${AUTH_KINDS.map((k) => `has(self.${k})`).join(', ')}].filter(x, x).size() == 1`;

const BackendAuthSchema = z
  .object({
    bearer: z
      .object({ secretRef: SecretKeyRefSchema.describe('Secret key holding the API key.') })
      .strict()
      .optional()
      .describe('Authorization: Bearer <key> (OpenAI, vLLM, Bedrock API keys, Gemini, Anthropic).'),
    header: z
      .object({
        name: headerName.describe('Header that carries the key, e.g. api-key (Azure OpenAI) or x-api-key (Anthropic).'),
        secretRef: SecretKeyRefSchema.describe('Secret key holding the API key.'),
      })
      .strict()
      .optional()
      .describe('The key in a header of its own.'),
    query: z
      .object({
        name: queryName.describe("Query parameter that carries the key, e.g. key (Gemini's native auth)."),
        secretRef: SecretKeyRefSchema.describe('Secret key holding the API key.'),
      })
      .strict()
      .optional()
      .describe('The key in a query parameter.'),
    none: z.object({}).strict().optional().describe('No credential (an upstream inside the cluster).'),
    awsSigV4: z
      .object({
        region: z
          .string()
          .regex(/^[a-z0-9-]{1,32}$/, 'an AWS region such as us-east-1')
          .describe('AWS region of the endpoint, e.g. us-east-1.'),
        service: z
          .string()
          .regex(/^[a-z0-9-]{1,64}$/, 'an AWS signing name such as bedrock')
          .default('bedrock')
          .describe('Signing name of the service (default bedrock).'),
        secretRef: SecretNameSchema.optional().describe(
          "Secret with keys AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and optionally AWS_SESSION_TOKEN. Omit to use the pod's identity (IRSA, EKS Pod Identity, instance metadata, AWS_* environment) through the AWS SDK's default credential chain.",
        ),
      })
      .strict()
      .optional()
      .describe('Every request signed with AWS Signature Version 4, body hash included (Amazon Bedrock).'),
    gcp: z
      .object({
        secretRef: SecretKeyRefSchema.optional().describe(
          "Secret key holding a service account's JSON key. Omit to use the pod's identity (GKE Workload Identity, the metadata server, GOOGLE_APPLICATION_CREDENTIALS).",
        ),
        scopes: z
          .array(z.string().min(1).max(256))
          .min(1)
          .max(16)
          .optional()
          .describe('OAuth2 scopes (default https://www.googleapis.com/auth/cloud-platform).'),
      })
      .strict()
      .optional()
      .describe("A Google OAuth2 access token as Bearer, obtained and refreshed by Google's auth library (Vertex AI)."),
    azureAD: z
      .object({
        tenantId: z
          .string()
          .min(1)
          .max(128)
          .optional()
          .describe('Microsoft Entra tenant id (default: AZURE_TENANT_ID of the pod, as workload identity sets it).'),
        clientId: z.string().min(1).max(128).optional().describe('Application (client) id (default: AZURE_CLIENT_ID of the pod).'),
        secretRef: SecretKeyRefSchema.optional().describe(
          'Secret key holding a client secret. Omit to use workload identity (the federated token file AZURE_FEDERATED_TOKEN_FILE).',
        ),
        scope: z
          .string()
          .min(1)
          .max(256)
          .default('https://cognitiveservices.azure.com/.default')
          .describe('Token scope (default https://cognitiveservices.azure.com/.default).'),
        authorityHost: z
          .string()
          .regex(/^https:\/\/[^\s/]+\/?$/, 'an https origin such as https://login.microsoftonline.com')
          .optional()
          .describe(
            "Entra authority host of a sovereign cloud, e.g. https://login.microsoftonline.us or https://login.partner.microsoftonline.cn (default https://login.microsoftonline.com). Only Azure's clouds: the identity library refuses other hosts.",
          ),
      })
      .strict()
      .optional()
      .refine((a) => a === undefined || a.secretRef === undefined || (a.tenantId !== undefined && a.clientId !== undefined), {
        message: 'a client secret needs tenantId and clientId',
      })
      .meta({
        'x-kubernetes-validations': [
          { rule: '!has(self.secretRef) || (has(self.tenantId) && has(self.clientId))', message: 'a client secret needs tenantId and clientId' },
        ],
      })
      .describe("A Microsoft Entra ID access token as Bearer, obtained and refreshed by Azure's identity library (Azure OpenAI)."),
  })
  .strict()
  .refine((a) => Object.values(a).filter((v) => v !== undefined).length === 1, { message: `exactly one of ${AUTH_KINDS.join(', ')} must be set` })
  .meta({ 'x-kubernetes-validations': [{ rule: oneAuthKind, message: `exactly one of ${AUTH_KINDS.join(', ')} must be set` }] })
  .describe('How the gateway proves who it is to the backend (default: bearer with apiKeySecretRef, or none).');
export type BackendAuthSpec = z.infer<typeof BackendAuthSchema>;

/** An Anthropic beta flag as the anthropic-beta header names one, e.g. interleaved-thinking-2025-05-14. */
const BETA_PATTERN = '^[a-z0-9][a-z0-9._-]{0,127}$';

const AnthropicBetasSchema = z
  .object({
    allow: z
      .array(z.string().regex(new RegExp(BETA_PATTERN), 'a beta flag such as interleaved-thinking-2025-05-14'))
      .max(64)
      .refine((l) => new Set(l).size === l.length, { message: 'a beta is listed twice' })
      .meta({ 'x-kubernetes-list-type': 'set' })
      .describe('The betas this backend receives, when the client sends them; every other is dropped. Empty: none.'),
  })
  .strict()
  .describe(
    "Which of the client's anthropic-beta flags reach this backend (api: anthropic). Default: all of them, but none for Claude on Amazon Bedrock (InvokeModel), which refuses a flag it does not support for the model.",
  );

/** Upstream base URLs are http(s); `demo://` selects the built-in deterministic demo backend (demos, tests, benchmarks). */
const BASE_URL_PATTERN = '^(https?://[^\\s]+|demo://)$';

const BackendSchema = z
  .object({
    name: dnsLabel.describe('Name of this backend, unique within the route; shown in metrics and the x-model-gateway-backend header.'),
    baseURL: z
      .string()
      .regex(new RegExp(BASE_URL_PATTERN), 'an http(s) URL such as https://api.openai.com/v1, or demo://')
      .describe(
        "Base URL of the upstream, including its /v1 path (an OpenAI-compatible API, or Anthropic's with api: anthropic). demo:// is the built-in demo backend.",
      ),
    apiKeySecretRef: SecretKeyRefSchema.optional().describe(
      'Secret key holding the upstream API key, sent as a Bearer token (a short form of auth.bearer). Omit for upstreams without auth.',
    ),
    auth: BackendAuthSchema.optional(),
    headers: z
      .array(backendParam(headerName.describe('Header name, e.g. anthropic-version or OpenAI-Project.'), 'header'))
      .max(32)
      .optional()
      .describe("Headers sent on every request to this backend; a client's header of the same name is replaced."),
    query: z
      .array(backendParam(queryName.describe('Parameter name, e.g. api-version.'), 'parameter'))
      .max(32)
      .optional()
      .describe("Query parameters added to every request to this backend; a client's parameter of the same name is replaced."),
    pathStyle: z
      .enum(['openai', 'azureDeployments'])
      .optional()
      .describe(
        "openai (default): baseURL + /chat/completions and so on. azureDeployments: Azure OpenAI's deployment paths, baseURL + /deployments/{model}/chat/completions (baseURL ending in /openai; set query api-version).",
      ),
    api: z
      .enum(['openai', 'anthropic', 'chatCompletions'])
      .optional()
      .describe(
        "The API the backend speaks. openai (default): OpenAI's (chat completions and the other families); a Messages request (the messages family) is translated to chat completions for it. anthropic: Anthropic's Messages API; a Messages request is sent as it came, with only the model renamed. chatCompletions: OpenAI's API without /responses: a Responses request is translated to chat completions, as a Messages request is; the other families pass as for openai.",
      ),
    model: z.string().min(1).max(256).optional().describe('Model name sent upstream; defaults to spec.model.'),
    priority: z.number().int().min(0).max(100).default(0).describe('Priority tier; lower tiers are tried first, higher tiers are fallbacks.'),
    weight: z.number().int().min(0).max(10000).default(1).describe('Share of traffic inside its priority tier; 0 takes the backend out of rotation.'),
    anthropicBetas: AnthropicBetasSchema.optional(),
    limits: BackendLimitsSchema.optional(),
    pricing: PricingSchema.optional(),
  })
  .strict()
  .refine((b) => b.apiKeySecretRef === undefined || b.auth === undefined, { message: 'set apiKeySecretRef or auth, not both' })
  .refine((b) => b.anthropicBetas === undefined || b.api === 'anthropic', { message: 'anthropicBetas needs api: anthropic' })
  .refine((b) => b.pathStyle !== 'azureDeployments' || (b.query ?? []).some((q) => q.name === 'api-version'), {
    message: 'pathStyle azureDeployments needs an api-version query parameter',
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: '!has(self.apiKeySecretRef) || !has(self.auth)', message: 'set apiKeySecretRef or auth, not both' },
      { rule: "!has(self.anthropicBetas) || (has(self.api) && self.api == 'anthropic')", message: 'anthropicBetas needs api: anthropic' },
      {
        rule: "!has(self.pathStyle) || self.pathStyle != 'azureDeployments' || (has(self.query) && self.query.exists(q, q.name == 'api-version'))",
        message: 'pathStyle azureDeployments needs an api-version query parameter',
      },
    ],
  });

const TimeoutsSchema = z
  .object({
    connect: duration.optional().describe('TCP/TLS connect timeout per attempt (default 5s).'),
    firstByte: duration.optional().describe('Time to response headers per attempt (default 60s).'),
    streamIdle: duration.optional().describe('Longest silence inside a streamed response (default 120s).'),
    total: duration.optional().describe('Deadline of a whole non-streaming request, retries included (default 300s).'),
  })
  .strict();

/** What may trigger failover to the next backend: a connection failure, a timeout before headers, or a status. */
const RETRY_ON_PATTERN = '^(connect-failure|timeout|408|429|5[0-9][0-9])$';
// 529 is Anthropic's overloaded_error: the moment to try another cloud serving Claude.
export const DEFAULT_RETRY_ON = ['connect-failure', 'timeout', '429', '500', '502', '503', '504', '529'] as const;

const RetrySchema = z
  .object({
    attempts: z
      .number()
      .int()
      .min(1)
      .max(10)
      .optional()
      .describe('Most attempts per request, the first included (default 3). Each attempt uses a different backend, so never more than the number of backends.'),
    budget: duration
      .optional()
      .describe(
        "Time budget for all attempts together, from the moment the request arrives (default: twice timeouts.firstByte, at most timeouts.total). No attempt starts after it, and each attempt's connect and first-byte timeouts are clipped to what is left of it.",
      ),
    retryOn: z
      .array(z.string().regex(new RegExp(RETRY_ON_PATTERN), 'connect-failure, timeout, 408, 429 or a 5xx status code'))
      .max(32)
      .optional()
      .describe(
        'Outcomes that fail over to the next backend: "connect-failure" (refused, reset or closed before response headers, DNS, TLS, connect timeout), "timeout" (no response headers within timeouts.firstByte), or HTTP status codes as strings (408, 429, 5xx). Default: connect-failure, timeout, 429, 500, 502, 503, 504, 529 (the overloaded_error of Anthropic). An empty list disables failover.',
      ),
  })
  .strict()
  .describe('Failover policy. A request never fails over once any byte of a response was sent to the client.');
export type Retry = z.infer<typeof RetrySchema>;

const StreamingSchema = z
  .object({
    keepAliveInterval: duration
      .optional()
      .describe(
        'Send an SSE comment (": keep-alive") at this interval while a streaming request waits for its first upstream byte, so proxies and load balancers do not cut an idle connection. Response headers (200, text/event-stream) are then sent early, so a later failure arrives as an SSE error event instead of an HTTP status. Default: off.',
      ),
  })
  .strict();
export type Streaming = z.infer<typeof StreamingSchema>;

const ModelRouteSpecSchema = z
  .object({
    model: z.string().min(1).max(256).optional().describe('Public model id clients send; defaults to metadata.name. May contain "/".'),
    endpoints: z.array(z.enum(FAMILIES)).min(1).optional().describe('API families this route serves; default: all.'),
    backends: z
      .array(BackendSchema)
      .min(1)
      .max(64)
      // In the CRD: a list keyed by name, so the API server rejects duplicate backend names and server-side apply merges per backend.
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
      .describe('Upstreams that serve this model.'),
    timeouts: TimeoutsSchema.optional().describe('Per-route timeouts.'),
    retry: RetrySchema.optional(),
    streaming: StreamingSchema.optional().describe('Streaming (SSE) behaviour of this route.'),
    ownedBy: z.string().max(256).optional().describe('owned_by shown in /v1/models (default: the namespace).'),
    defaultMaxOutputTokens: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .optional()
      .describe(
        'Output tokens a token limit reserves for a request that names no max_tokens, max_completion_tokens or max_output_tokens (default 4096). The reservation settles to the real count when the response is over.',
      ),
  })
  .strict()
  .describe('One public model name and the upstream backends that serve it.');

const GroupSpecSchema = z
  .object({
    models: z.array(z.string().min(1).max(256)).max(1000).describe('Model names or globs (* and ?) that tokens in this group may use.'),
    limits: GroupLimitsSchema.optional(),
  })
  .strict()
  .describe('Which models the tokens in this group may use.');

const SHA256_PATTERN = '^[a-f0-9]{64}$';

export const GatewayTokenSpecSchema = z
  .object({
    group: dnsLabel.describe("Name of the token's current Group, in the same namespace."),
    secretRef: SecretKeyRefSchema.optional().describe('Secret key holding the client API key.'),
    sha256: z
      .string()
      .regex(new RegExp(SHA256_PATTERN), 'a lowercase hex SHA-256 digest')
      .optional()
      .describe('Lowercase hex SHA-256 digest of the client API key, instead of secretRef.'),
    models: z.array(z.string().min(1).max(256)).max(1000).optional().describe("Narrows the group's models for this token (names or globs)."),
    expiresAt: z.iso.datetime({ offset: true }).optional().describe('RFC 3339 time after which the key is refused.'),
    disabled: z.boolean().default(false).describe('Refuse the key while true.'),
    limits: TokenLimitsSchema.optional(),
  })
  .strict()
  .refine((s) => (s.secretRef === undefined) !== (s.sha256 === undefined), {
    message: 'exactly one of secretRef or sha256 must be set',
  })
  // The same rule for the API server (CEL in the generated CRD); src/compile/crd tests keep the two in step.
  .meta({ 'x-kubernetes-validations': [{ rule: 'has(self.secretRef) != has(self.sha256)', message: 'exactly one of secretRef or sha256 must be set' }] })
  .describe('One client API key: its value in a Secret (or only its SHA-256), its current group, optional narrowing and expiry.');

function resource<K extends string, S extends z.ZodType>(kind: K, spec: S) {
  return z
    .object({
      apiVersion: z.literal(GROUP_VERSION),
      kind: z.literal(kind),
      metadata: ObjectMetaSchema,
      spec,
      status: z.unknown().optional(),
    })
    .passthrough();
}

export const ModelRouteSchema = resource('ModelRoute', ModelRouteSpecSchema);
export const GroupSchema = resource('Group', GroupSpecSchema);
export const GatewayTokenSchema = resource('GatewayToken', GatewayTokenSpecSchema);
export type ModelRoute = z.infer<typeof ModelRouteSchema>;
export type Group = z.infer<typeof GroupSchema>;
export type GatewayToken = z.infer<typeof GatewayTokenSchema>;

/** Padded standard base64, as the API server decodes a Secret's data (line breaks aside). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const SecretSchema = z
  .object({
    apiVersion: z.literal('v1'),
    kind: z.literal('Secret'),
    metadata: ObjectMetaSchema,
    type: z.string().optional(),
    data: z
      .record(
        z.string(),
        z.string().refine((v) => BASE64.test(v.replace(/[\r\n]/g, '')), 'not base64 (kubectl refuses it too); write plain text under stringData'),
      )
      .optional(),
    stringData: z.record(z.string(), z.string()).optional(),
  })
  .passthrough();
export type Secret = z.infer<typeof SecretSchema>;

export const KINDS = ['ModelRoute', 'Group', 'GatewayToken'] as const;
export type Kind = (typeof KINDS)[number];
export const SPEC_SCHEMAS = {
  ModelRoute: ModelRouteSpecSchema,
  Group: GroupSpecSchema,
  GatewayToken: GatewayTokenSpecSchema,
} as const;

/** What a config source hands to compile: any object it read, not yet validated. */
export interface RawObject {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown; [k: string]: unknown };
  [k: string]: unknown;
}

/** Where an object came from, for messages (file source: file and line; kubernetes: nothing). */
export interface SourceRef {
  file?: string;
  line?: number;
  /** Line of a field inside the object (a schema issue's path), for messages; compile never copies it to a status. */
  lineOf?: (path: readonly PropertyKey[]) => number | undefined;
}

export interface SourcedObject {
  object: RawObject;
  source?: SourceRef;
  /**
   * Epoch ms when the source first saw this object, from a source whose objects may lack a creationTimestamp
   * (the file source): /v1/models reports it as `created` when the object has none.
   */
  seenAt?: number;
}

export const DEFAULT_NAMESPACE = 'default';

/** Stable identity of an object across sources: kind/namespace/name. */
export function objectRef(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? DEFAULT_NAMESPACE}/${name}`;
}

/** Secret value of one key (stringData wins, as the API server merges it), or undefined. */
export function secretValue(secret: Secret, key: string): string | undefined {
  const s = secret.stringData?.[key];
  if (s !== undefined) return s;
  const b = secret.data?.[key];
  return b === undefined ? undefined : Buffer.from(b, 'base64').toString('utf8');
}
