// createApp(deps) builds the express app for the API port without listening; main.ts and the tests listen.
import { DEFAULT_BODY_LIMITS, type BodyLimits } from '../model/body-limits.js';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { RoutingTable, TableHolder } from '../model/routing-table.js';
import { FAMILIES } from '../model/families.js';
import { accessLog } from '../dataplane/observe/access-log.js';
import { authMiddleware } from '../dataplane/request/auth.js';
import { wantedMembers } from '../dataplane/request/payload.js';
import { BodyBudget, defaultBufferedBudget, processMemoryLimit } from '../dataplane/request/body-budget.js';
import { exchangeOf } from '../dataplane/exchange/exchange.js';
import { errors, toGatewayError } from '../model/errors.js';
import { sendError } from '../dataplane/server/send-error.js';
import { familyHandler } from '../dataplane/handlers/family-handler.js';
import { RESPONSES_CALLS } from '../dataplane/handlers/responses-calls.js';
import { upstreamCaller } from '../dataplane/handlers/upstream-call.js';
import { FAMILY_PATHS } from '../model/families.js';
import { listModels, retrieveModel } from '../dataplane/handlers/models.js';
import { idOnEveryHead, requestId } from '../dataplane/request/request-id.js';
import { RouteRegistry, runInOrder } from '../dataplane/server/route-registry.js';
import { sealedCreateFeature } from '../features/sealed-ids/sealed-create.js';
import { registerSealedRoutes } from '../features/sealed-ids/sealed-routes.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { firstTokenTimer } from '../dataplane/observe/first-token.js';
import { UpstreamClient } from '../dataplane/upstream/upstream-client.js';
import { Identities } from '../dataplane/upstream/identity/identities.js';
import { registerBackendStateGauge } from '../dataplane/observe/backend-metrics.js';
import { registerBufferedBodyGauge } from '../dataplane/observe/body-metrics.js';
import { closeAfterDraining, DEFAULT_LINGER, lingerForUnreadBody } from '../dataplane/server/lingering-close.js';
import { BackendHealth, configuredBackends } from '../dataplane/policy/health.js';
import type { Random } from '../dataplane/policy/plan.js';
import { generateIdKey, GENERATED_KEY_WARNING } from '../features/sealed-ids/id-keys.js';
import { IdSealer } from '../features/sealed-ids/sealed-id.js';
import { Limits, type LimitsOptions } from '../features/limits/limits.js';
import { limitsFeature } from '../features/limits/limits-transform.js';
import { type UsageMetricsOptions, usageRecorder } from '../features/usage/usage-metrics.js';
import { type UsageOptions, usageFeature } from '../features/usage/usage-transform.js';
import type { Tracing } from '../features/tracing/tracing.js';
import { messagesFeature } from '../features/messages/messages-transform.js';
import type { KeptResponses } from '../features/responses-chat/kept-responses.js';
import { keptFollowUps, keptResponsesStore } from '../features/responses-chat/kept-responses-store.js';
import { responsesChatFeature } from '../features/responses-chat/responses-chat-transform.js';
import { chatClaudeFeature } from '../features/chat-claude/chat-claude-transform.js';
import { wholeStreamFeature } from '../features/whole-stream/whole-stream-transform.js';
import { COUNT_TOKENS_PATH, countTokensCall } from '../features/messages/count-tokens.js';
import { estimateInputTokens } from '../features/usage/input-estimate.js';
import { estimateInput } from '../features/usage/estimate.js';

export interface AppDeps {
  readonly tables: TableHolder;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** True once the first complete config snapshot is compiled and while not draining (/readyz also waits for the limits store). */
  readonly isReady: () => boolean;
  readonly bodyLimits?: BodyLimits;
  /**
   * Most request-body bytes held in memory at once across all requests (see dataplane/request/body-budget.ts); a body that
   * does not fit gets 503 with retry-after. Default: a quarter of the process's memory limit, 32 MiB to 512 MiB.
   */
  readonly maxBufferedBytes?: number;
  /**
   * Outbound client (one keep-alive pool per upstream origin). Default: a new one owned by the app, closed by
   * closeApp(app). When passed in, the caller owns it and closes it.
   */
  readonly upstream?: UpstreamClient;
  /** Random source for weighted backend choice (tests make it deterministic). Default Math.random. */
  readonly random?: Random;
  /** Passive backend health (outlier ejection) of this replica. Default: a new one with the default thresholds. */
  readonly health?: BackendHealth;
  /**
   * HMAC keys for sealed video/response ids (first signs, all verify; each >= 32 bytes; see features/sealed-ids/id-keys.ts).
   * Default: a random key, with a warning: ids then do not survive a restart and other replicas cannot serve them.
   */
  readonly idKeys?: readonly Uint8Array[];
  /**
   * Redis where the responses the gateway translated are kept for later requests (previous_response_id,
   * item_reference), shared by every replica (default: in this process).
   */
  readonly responsesRedisUrl?: string;
  /** Where the counters of Group, GatewayToken and backend limits live (default: in this process). */
  readonly usageLimits?: LimitsOptions;
  /** Usage metrics per GatewayToken (opt-in: one series per token). */
  readonly usageMetrics?: UsageMetricsOptions;
  /** How the usage feature reads and prices usage: how far an answer is read on after its client left, the currency. */
  readonly usage?: UsageOptions;
  /** OpenTelemetry tracing (features/tracing/); absent: off, and nothing of it runs per request. */
  readonly tracing?: Tracing;
  /** Run-time credentials of awsSigV4, gcp and azureAD backends. Default: a new set, without status reporting. */
  readonly identities?: Identities;
}

interface AppState {
  readonly upstream: UpstreamClient;
  readonly ownsUpstream: boolean;
  readonly unsubscribe: () => void;
  readonly limits: Limits;
  readonly keptResponses: KeptResponses;
}

const STATE = 'modelGateway';

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  idOnEveryHead(app.response);

  const upstream = deps.upstream ?? new UpstreamClient();
  const health = deps.health ?? new BackendHealth();
  const identities = deps.identities ?? new Identities({ logger: deps.logger });
  // Pools for origins that left the table are closed (gracefully) when a new table arrives, and health forgets
  // backends that are gone.
  const unsubscribeTables = deps.tables.onChange((t) => {
    // Nothing awaits this; a rejection here would be an unhandled rejection, which ends the process.
    upstream.retainOrigins(originsOf(t)).catch((err: unknown) => deps.logger.warn({ error: (err as Error).message }, 'closing a retired upstream pool failed'));
    health.prune(configuredBackends(t.routes.values()));
    identities.retain(t);
  });
  const current = deps.tables.get();
  if (current) {
    identities.retain(current);
    health.prune(configuredBackends(current.routes.values()));
  }
  const unsubscribeHealth = health.onChange((c) => {
    if (c.state === 'ejected') deps.logger.warn({ backend: c.backendId, ejectedForMs: c.forMs, reason: c.reason }, 'backend ejected');
    else deps.logger.info({ backend: c.backendId }, 'backend healthy again');
  });
  const unsubscribe = () => {
    unsubscribeTables();
    unsubscribeHealth();
  };
  if (!deps.metrics.registry.getSingleMetric('model_gateway_backend_state')) registerBackendStateGauge(deps.metrics.registry, deps.tables, health);
  const usageLimits = new Limits(deps.usageLimits ?? {}, deps.logger, deps.metrics.registry);
  deps.tracing?.reportTo(deps.logger, deps.metrics.registry);
  const keptResponses = keptResponsesStore(deps.responsesRedisUrl, deps.logger, deps.metrics.registry);
  const state: AppState = { upstream, ownsUpstream: deps.upstream === undefined, unsubscribe, limits: usageLimits, keptResponses };
  app.locals[STATE] = state;

  const routes = new RouteRegistry();
  // What every request goes through, as one layer of express's router: the exchange and its id, the access log, the
  // server span, then the exact routes (route-registry.ts).
  const front = [requestId, accessLog(deps.logger, deps.metrics), ...(deps.tracing ? [deps.tracing.middleware] : []), routes.fast];
  app.use((req: Request, res: Response, next: NextFunction) => runInOrder(front, req, res, next));
  routes.add(app, 'get', '/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  routes.add(app, 'get', '/readyz', (_req, res) => {
    // Not before the counters can count: traffic sent the moment a replica is ready must meet its limits.
    const ready = deps.isReady() && usageLimits.answered;
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready' });
  });

  const auth = authMiddleware(deps.tables);
  routes.add(app, 'get', '/v1/models', auth, listModels);
  routes.add(app, 'get', '/v1/models/*model', auth, retrieveModel);

  const bodyLimits = deps.bodyLimits ?? DEFAULT_BODY_LIMITS;
  // A refused body is drained at most as far as the largest body the gateway would have accepted.
  const linger = { ...DEFAULT_LINGER, maxBytes: Math.max(bodyLimits.jsonBytes, bodyLimits.multipartBytes) };
  const budget = new BodyBudget(deps.maxBufferedBytes ?? defaultBufferedBudget(processMemoryLimit()));
  registerBufferedBodyGauge(deps.metrics.registry, budget);
  const sealer = idSealer(deps);
  // The features on the call path, in order: the Messages API (its body per backend, and its answer translated or
  // read before the others see it), the Responses API on chat completions backends and chat completions on anthropic backends (likewise), the sealed ids of videos and responses, usage (whose handler returns the usage
  // the others settle with), limits, and a whole answer to a stream request told as the family's events (after usage,
  // which reads the answer whole). Each declares the request members it reads.
  const features = [
    messagesFeature(),
    responsesChatFeature(keptResponses),
    chatClaudeFeature(),
    sealedCreateFeature(sealer, (body) => estimateInput('responses', body)),
    usageFeature(usageRecorder(deps.metrics, deps.metrics.registry, deps.usageMetrics ?? {}), (claimKey) => usageLimits.claimOnce(claimKey), deps.usage),
    limitsFeature(usageLimits),
    wholeStreamFeature(),
  ];
  // The one call path to upstreams, for the create calls and the follow-ups alike (dataplane/handlers/upstream-call.ts).
  const call = upstreamCaller({
    upstream,
    identities,
    metrics: deps.metrics,
    health,
    // Every exchange's transforms, after the features' per-request ones; tracing, when on, reads every answer last.
    transforms: deps.tracing ? [firstTokenTimer(deps.metrics), deps.tracing.transform] : [firstTokenTimer(deps.metrics)],
    features,
  });
  const handlerDeps = { call, health, bodyLimits, random: deps.random ?? Math.random, budget, members: wantedMembers(features) };
  for (const family of FAMILIES) routes.add(app, 'post', `/v1${FAMILY_PATHS[family]}`, auth, familyHandler(family, handlerDeps));
  const countTokens = countTokensCall((body) => estimateInputTokens('messages', body));
  routes.add(app, 'post', `/v1${COUNT_TOKENS_PATH}`, auth, familyHandler('messages', handlerDeps, countTokens));
  for (const c of RESPONSES_CALLS) routes.add(app, 'post', `/v1${c.path}`, auth, familyHandler('responses', handlerDeps, c));
  registerSealedRoutes(app, routes, auth, { call, sealer, bodyLimits, budget, local: keptFollowUps(keptResponses) });

  // Anything unmatched: 405 with Allow when the path exists under another method, else 404; both in OpenAI's shape.
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const allow = routes.allowed(req.path);
    next(allow.length > 0 ? errors.methodNotAllowed(req.method, req.path, allow) : errors.unknownRoute(req.method, req.path));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (req.socket.destroyed) {
      // The client is gone (e.g. hung up mid-upload): nobody to answer, nothing unexpected to log.
      exchangeOf(res).aborted = true;
      return;
    }
    const gatewayError = toGatewayError(err);
    // Only unexpected failures are logged here (the access log covers the rest); their messages come from
    // code, not from request data.
    if (gatewayError.status === 500) deps.logger.error({ reqId: exchangeOf(res)?.id, err }, 'unhandled error');
    // Refused before a large body was read to its end (413, 415, 503 body budget, 401 …): the connection is
    // closed after the answer, lingering so that a client still sending gets to read it.
    if (!res.headersSent && lingerForUnreadBody(req)) closeAfterDraining(req, res, linger);
    sendError(req, res, gatewayError);
  });
  return app;
}

/** Releases what createApp acquired: the table subscription and, if the app created it, the upstream client. */
export async function closeApp(app: Express, options: { graceful?: boolean } = {}): Promise<void> {
  const state = app.locals[STATE] as AppState | undefined;
  if (!state) return;
  state.unsubscribe();
  await Promise.all([state.limits.close(), state.keptResponses.close()]);
  if (!state.ownsUpstream) return;
  await (options.graceful ? state.upstream.close() : state.upstream.destroy());
}

function idSealer(deps: AppDeps): IdSealer {
  if (deps.idKeys && deps.idKeys.length > 0) return new IdSealer(deps.idKeys);
  deps.logger.warn(GENERATED_KEY_WARNING);
  return new IdSealer([generateIdKey()]);
}

/** The limits feature's app state, for main.ts (waiting for its store at startup) and the status of limits. */
export function limitsOf(app: Express): Limits {
  return (app.locals[STATE] as AppState).limits;
}

function originsOf(table: RoutingTable): Set<string> {
  const origins = new Set<string>();
  for (const route of table.routes.values()) for (const b of route.backends) origins.add(b.origin);
  return origins;
}
