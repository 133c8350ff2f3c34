// Follow-up calls on sealed ids: the id in the path must verify and belong to the calling token (else 404
// not_found, and nothing reaches an upstream); the call then goes to the one backend holding the object, with
// the upstream id in the path, the client's query string as it came (variant, stream, starting_after, after,
// limit, order, include) and the answer's ids sealed again. The call goes through the same path as every create
// (dataplane/handlers/upstream-call.ts), so limits count it and usage records a remix. GET /v1/videos (list) is
// refused: the upstream's list spans every token of the shared upstream account. A response id that is not sealed
// may name a response the gateway answered itself (a translated backend's, kept by features/responses-chat): a
// retrieve, a delete or a list of input items of one is answered from what the gateway kept; a cancel is refused,
// as OpenAI refuses one of a response that was not a background one.
import type { Express, Request, RequestHandler, Response } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import type { BodyLimits } from '../../model/body-limits.js';
import type { Family } from '../../model/families.js';
import type { SealedBody } from './sealing-transforms.js';
import { resolveOwned } from './owned-object.js';
import type { BackgroundCreate, IdSealer, SealedKind, SealedRef } from './sealed-id.js';
import type { BodyBudget } from '../../dataplane/request/body-budget.js';
import { authenticatedOf, clientGone, exchangeOf, routed } from '../../dataplane/exchange/exchange.js';
import type { CallKind, ExchangeTransform, RequestPlan } from '../../dataplane/exchange/transform.js';
import type { CallUpstream } from '../../dataplane/handlers/upstream-call.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import { GatewayError } from '../../model/errors.js';
import { checkContentType } from '../../dataplane/request/payload.js';
import { readBody } from '../../dataplane/request/read-body.js';
import type { RouteRegistry } from '../../dataplane/server/route-registry.js';
import { sealStage } from './sealed-create.js';
import { sealedErrors } from './sealed-errors.js';

export interface SealedRouteDeps {
  readonly call: CallUpstream;
  readonly sealer: IdSealer;
  readonly bodyLimits: BodyLimits;
  readonly budget?: BodyBudget;
  /** The responses the gateway answered itself, which no upstream holds. */
  readonly local?: LocalResponses;
}

/** Responses the gateway answered itself (for translated backends), under the GatewayToken that got them. */
export interface LocalResponses {
  /** The Response kept for `owner`, or undefined. */
  retrieve(owner: string, id: string): Promise<object | undefined>;
  /** Forgets it; false when none was kept for `owner`. */
  delete(owner: string, id: string): Promise<boolean>;
  /** A page of its input items as the query (after, limit, order) asks, or undefined. */
  inputItems(owner: string, id: string, query: Readonly<Record<string, unknown>>): Promise<object | undefined>;
}

interface FollowUp {
  readonly kind: SealedKind;
  /** Path after the id, e.g. "/content". */
  readonly suffix: string;
  /** What a successful answer holds (its ids are sealed); 'none' relays it untouched. */
  readonly answer: SealedBody;
  /** Whether the client's body is forwarded (remix, cancel). */
  readonly withBody: boolean;
  /** A remix makes a new video (usage, token limits); reads, deletes and cancels consume nothing. */
  readonly call: CallKind;
  /** The answer is the Response itself (retrieve, cancel): it may show a background response finished. */
  readonly showsResponse?: boolean;
  /** The answer is the video itself (retrieve): it may show the video failed, which credits its create. */
  readonly showsVideo?: boolean;
  /** What the call does to a response the gateway answered itself (LocalResponses); absent: such an id is not found. */
  readonly local?: 'retrieve' | 'delete' | 'inputItems' | 'cancel';
}

const READS: CallKind = { create: false, consumes: false };
const GENERATES: CallKind = { create: false, consumes: true };
/** A response's retrieve: a stream request when its query string asks for one (`stream=true`). */
const RETRIEVE: CallKind = { ...READS, retrieve: true };

const FAMILY: Readonly<Record<SealedKind, Family>> = { video: 'videos', response: 'responses' };
const COLLECTION: Readonly<Record<SealedKind, string>> = { video: '/videos/', response: '/responses/' };

export function registerSealedRoutes(app: Express, routes: RouteRegistry, auth: RequestHandler, deps: SealedRouteDeps): void {
  const add = (method: 'get' | 'post' | 'delete', path: string, f: FollowUp) => routes.add(app, method, path, auth, followUpHandler(f, deps));
  routes.add(app, 'get', '/v1/videos', auth, (_req, res) => {
    exchangeOf(res).family = 'videos';
    throw sealedErrors.listNotSupported();
  });
  add('get', '/v1/videos/:id', { kind: 'video', suffix: '', answer: 'video', withBody: false, call: READS, showsVideo: true });
  add('delete', '/v1/videos/:id', { kind: 'video', suffix: '', answer: 'video', withBody: false, call: READS });
  add('get', '/v1/videos/:id/content', { kind: 'video', suffix: '/content', answer: 'none', withBody: false, call: READS });
  add('post', '/v1/videos/:id/remix', { kind: 'video', suffix: '/remix', answer: 'video', withBody: true, call: GENERATES });
  add('get', '/v1/responses/:id', {
    kind: 'response',
    suffix: '',
    answer: 'response',
    withBody: false,
    call: RETRIEVE,
    showsResponse: true,
    local: 'retrieve',
  });
  add('delete', '/v1/responses/:id', { kind: 'response', suffix: '', answer: 'response', withBody: false, call: READS, local: 'delete' });
  add('post', '/v1/responses/:id/cancel', {
    kind: 'response',
    suffix: '/cancel',
    answer: 'response',
    withBody: true,
    call: READS,
    showsResponse: true,
    local: 'cancel',
  });
  // input_items pages hold item ids (the pagination cursors): relayed untouched.
  add('get', '/v1/responses/:id/input_items', { kind: 'response', suffix: '/input_items', answer: 'none', withBody: false, call: READS, local: 'inputItems' });
}

function followUpHandler(f: FollowUp, deps: SealedRouteDeps) {
  const family = FAMILY[f.kind];
  return async (req: Request, res: Response): Promise<void> => {
    const x = authenticatedOf(res);
    x.family = family;
    const sealedId = String(req.params['id']);
    const owned = resolveOwned(x.table, x.token, deps.sealer, f.kind, sealedId);
    if (!owned) {
      if (f.local && deps.local && (await answerLocally(f.local, deps.local, x.token.ref, sealedId, req, res))) return;
      throw sealedErrors.notFound(f.kind);
    }
    const r = routed(x, owned.route, family);
    const { backend, ref } = owned;
    let body: { body: Buffer; contentType: string | undefined } | null = null;
    if (f.withBody) {
      // Remix and cancel take JSON (or nothing) in the OpenAI API; a form would only buy the larger upload limit.
      checkContentType(req, { multipart: false, path: req.path });
      const type = req.headers['content-type'];
      const raw = await readBody(req, deps.bodyLimits.jsonBytes, deps.budget?.open(x));
      if (raw.length > 0) body = { body: raw, contentType: type };
      if (clientGone(req, res)) {
        x.aborted = true;
        return;
      }
    }
    const q = req.url.indexOf('?');
    // The one backend above answers; its ids (and error texts) give back the id the client sent.
    const known = { upstreamId: ref.upstreamId, sealedId };
    const seal: ExchangeTransform = { onResponseStart: (a) => sealStage(f.answer, deps.sealer, x.token, a, known) };
    await deps.call(r, req, res, {
      kind: f.showsVideo
        ? videoCall(f.call, ref, sealedId)
        : f.showsResponse && ref.background
          ? backgroundCall(f.call, ref, ref.background, sealedId)
          : f.call,
      // HEAD stays HEAD (express serves HEAD on GET routes).
      method: req.method,
      path: COLLECTION[f.kind] + encodeURIComponent(ref.upstreamId) + f.suffix + (q < 0 ? '' : req.url.slice(q)),
      own: seal,
      // The object exists on this backend only: no failover to another one.
      plan: new FollowUpPlan(backend, body?.body.length ?? 0, req, f.call.retrieve === true && asksStream(req)),
      body: () => () => body,
    });
  };
}

/** A follow-up on a response the gateway answered itself; false when it kept none of that id for `owner`. */
async function answerLocally(
  op: NonNullable<FollowUp['local']>,
  local: LocalResponses,
  owner: string,
  id: string,
  req: Request,
  res: Response,
): Promise<boolean> {
  if (op === 'delete') {
    const deleted = await local.delete(owner, id);
    if (deleted) res.json({ id, object: 'response', deleted: true });
    return deleted;
  }
  if (op === 'inputItems') {
    const page = await local.inputItems(owner, id, req.query);
    if (page) res.json(page);
    return page !== undefined;
  }
  const response = await local.retrieve(owner, id);
  if (!response) return false;
  if (op === 'cancel') {
    throw new GatewayError(400, 'Only a response created with background: true can be cancelled; this one is complete.', { code: 'invalid_request' });
  }
  // Its events were told as it was answered, and it is complete: a stream of it would be a replay nobody waits for.
  if (asksStream(req)) {
    throw new GatewayError(400, 'This response is complete (the gateway answered it through a translated backend): retrieve it without stream=true.', {
      code: 'unsupported_parameter',
      param: 'stream',
    });
  }
  res.json(response);
  return true;
}

/**
 * A call that may show a background response finished: usage records what it generated, once in all replicas (by
 * its claim key), beyond what its create recorded.
 */
function backgroundCall(call: CallKind, ref: SealedRef, create: BackgroundCreate, sealedId: string): CallKind {
  return {
    ...call,
    background: {
      responseId: sealedId,
      claimKey: `${ref.model}/${ref.backend}:${ref.upstreamId}`,
      create: { inputTokens: create.inputTokens, reqId: create.reqId },
    },
  };
}

/** A retrieve of a video: usage credits its create once in all replicas (by its claim key) if it shows it failed. */
function videoCall(call: CallKind, ref: SealedRef, sealedId: string): CallKind {
  const createReqId = ref.background?.reqId;
  return { ...call, video: { videoId: sealedId, claimKey: `failed:${ref.model}/${ref.backend}:${ref.upstreamId}`, ...(createReqId ? { createReqId } : {}) } };
}

/** A retrieve's query string asks for its event stream, as the openai SDKs write it (`stream=true`); a HEAD has no body to stream. */
function asksStream(req: Request): boolean {
  return req.method === 'GET' && req.query['stream'] === 'true';
}

/**
 * A follow-up as the transforms read it: one backend, and no member of its body read (the body goes as it came); its
 * integers are its query's (a streamed retrieve's `starting_after`). A streamed retrieve is a stream request
 * (keep-alives, no total deadline, a whole answer told as events).
 */
class FollowUpPlan implements RequestPlan {
  readonly json = undefined;
  readonly stream: boolean;
  readonly bytes: number;
  readonly headers: IncomingHttpHeaders;
  backends: readonly CompiledBackend[];
  readonly #query: Request['query'];

  constructor(backend: CompiledBackend, bytes: number, req: Request, stream: boolean) {
    this.backends = [backend];
    this.bytes = bytes;
    this.headers = req.headers;
    this.#query = req.query;
    this.stream = stream;
  }

  member(): undefined {
    return undefined;
  }

  integer(name: string): number | undefined {
    const v = this.#query[name];
    return typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : undefined;
  }

  raw(): undefined {
    return undefined;
  }
}
