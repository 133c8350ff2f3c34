// The compiled, immutable routing table: everything the data plane reads, precomputed so a request does
// one hash and a few map reads. Built only by compile.ts; replaced atomically, never mutated.
import type { BackendAuth, BackendParam, PathStyle } from './backend-auth.js';
import type { Family } from './families.js';
import type { MoneyLimitRule } from './money-limits.js';
import type { Pricing } from './pricing.js';
import type { LimitRule } from './usage-limits.js';

type BackendApi = 'openai' | 'anthropic' | 'chatCompletions';

export interface CompiledBackend {
  /** Stable id `namespace/route/backend`, used in metrics, logs, health tracking and sealed ids. */
  readonly id: string;
  readonly name: string;
  /** Base URL with no trailing slash, e.g. https://api.openai.com/v1. */
  readonly baseURL: string;
  /** Origin (scheme://host:port) the upstream pool is keyed by. */
  readonly origin: string;
  /** Path prefix of baseURL (e.g. "/v1"), joined with the family path. */
  readonly basePath: string;
  /** The credential sent upstream, Secret values resolved; never logged. */
  readonly auth: BackendAuth;
  /** Headers added to every request (names in lower case); they replace a client's of the same name. */
  readonly headers: readonly BackendParam[];
  /** Query parameters added to every request. */
  readonly query: readonly BackendParam[];
  readonly pathStyle: PathStyle;
  /**
   * The API the backend speaks: `openai` (chat completions and the other OpenAI families), `anthropic` (the
   * Messages API) or `chatCompletions` (OpenAI's without /responses). A Messages request goes to an anthropic backend
   * as sent, and to the others translated; a Responses request goes to a chatCompletions backend translated.
   */
  readonly api: BackendApi;
  /** Equal for backends reaching the same upstream with the same credential (a digest: compare, never show). */
  readonly account: string;
  /** Model name sent upstream. */
  readonly model: string;
  /**
   * The anthropic-beta flags this backend receives (spec.backends[].anthropicBetas.allow); undefined: the API's
   * default (all, but none to Bedrock's InvokeModel: features/messages/backends/anthropic-betas.ts).
   */
  readonly anthropicBetas?: ReadonlySet<string>;
  readonly priority: number;
  readonly weight: number;
  /** The upstream account's requests and tokens per minute (spec.backends[].limits); empty when unset. */
  readonly limits: readonly LimitRule[];
  /** What the upstream account charges (spec.backends[].pricing), in micro-units; undefined: every cost unknown. */
  readonly pricing?: Pricing;
}

export interface RouteTimeouts {
  readonly connectMs: number;
  readonly firstByteMs: number;
  readonly streamIdleMs: number;
  readonly totalMs: number;
}

export const DEFAULT_TIMEOUTS: RouteTimeouts = {
  connectMs: 5_000,
  firstByteMs: 60_000,
  streamIdleMs: 120_000,
  totalMs: 300_000,
};

/** Failover policy of a route, compiled from spec.retry (see resources.ts for the meaning of each field). */
export interface RetryPolicy {
  /** Most attempts per request, the first included. */
  readonly attempts: number;
  /** Time budget for all attempts together, from the moment the request arrived. */
  readonly budgetMs: number;
  readonly onConnectFailure: boolean;
  readonly onTimeout: boolean;
  /** Upstream statuses that fail over. */
  readonly statuses: ReadonlySet<number>;
}

export const DEFAULT_RETRY_ATTEMPTS = 3;

export interface CompiledRoute {
  /** Public model id. */
  readonly model: string;
  /** `namespace/name` of the ModelRoute. */
  readonly ref: string;
  readonly namespace: string;
  readonly name: string;
  /** The families this route serves: `spec.endpoints`, named as in the resource. */
  readonly families: ReadonlySet<Family>;
  /** Backends sorted by priority (ascending), then name; weight-0 backends are kept (fallback of last resort is a planner decision). */
  readonly backends: readonly CompiledBackend[];
  readonly timeouts: RouteTimeouts;
  readonly retry: RetryPolicy;
  /** Interval of SSE keep-alive comments while a streaming request waits for its first byte; 0 = off. */
  readonly keepAliveMs: number;
  /** Unix seconds, for the `created` field of /v1/models. */
  readonly created: number;
  readonly ownedBy: string;
  /** Output tokens a token limit reserves when a request names no maximum (spec.defaultMaxOutputTokens). */
  readonly defaultMaxOutputTokens: number;
}

export interface CompiledGroup {
  /** `namespace/name`. */
  readonly ref: string;
  readonly name: string;
  readonly namespace: string;
  /** Public model ids this group may use, in sorted order (the /v1/models listing before token narrowing). */
  readonly models: readonly string[];
  readonly modelSet: ReadonlySet<string>;
  /** The group's own limits (spec.limits), for every model. */
  readonly limits: readonly LimitRule[];
  /** Per-model limits (spec.limits.models), by public model id: the first entry whose pattern matches the model. */
  readonly modelLimits: ReadonlyMap<string, readonly LimitRule[]>;
  /** The group's own costPerDay and costPerMonth. */
  readonly moneyLimits: readonly MoneyLimitRule[];
  /** Per-model money limits, by public model id, from the same first-matching entry as modelLimits. */
  readonly modelMoneyLimits: ReadonlyMap<string, readonly MoneyLimitRule[]>;
}

export interface CompiledToken {
  /** `namespace/name` of the GatewayToken. */
  readonly ref: string;
  readonly name: string;
  readonly namespace: string;
  readonly group: CompiledGroup;
  /** Models this token may use: the group's, narrowed by the token's own list; sorted. */
  readonly models: readonly string[];
  readonly modelSet: ReadonlySet<string>;
  /** Epoch milliseconds, or undefined for no expiry. Checked per request, since time passes between compiles. */
  readonly expiresAtMs: number | undefined;
  readonly disabled: boolean;
  /** The token's own limits and its group's (both apply), without the group's per-model ones. */
  readonly limits: readonly LimitRule[];
  /** The same for money limits. */
  readonly moneyLimits: readonly MoneyLimitRule[];
}

export interface RoutingTable {
  /** Increases with every compile in this process; for logs and tests. */
  readonly version: number;
  readonly routes: ReadonlyMap<string, CompiledRoute>;
  readonly groups: ReadonlyMap<string, CompiledGroup>;
  /** Keyed by lowercase hex SHA-256 of the client key. */
  readonly tokensByDigest: ReadonlyMap<string, CompiledToken>;
}

/** Holds the current table; readers call get() per request, the config pipeline swaps it. */
export class TableHolder {
  #table: RoutingTable | undefined;
  #listeners = new Set<(t: RoutingTable) => void>();

  get(): RoutingTable | undefined {
    return this.#table;
  }

  set(table: RoutingTable): void {
    this.#table = table;
    for (const l of this.#listeners) l(table);
  }

  onChange(listener: (t: RoutingTable) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
