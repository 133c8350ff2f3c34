// The handler shared by every POST family: read the payload once, resolve and authorize the model, and make the
// create call through upstream-call.ts (where the features' transforms prepare it: a feature may refuse it or pin
// its backend). Thin on purpose; the work lives in request/, the transforms and upstream/.
import type { Request, Response } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import { errors } from '../../model/errors.js';
import { FAMILY_PATHS, type Family, MULTIPART_FAMILIES } from '../../model/families.js';
import type { BodyLimits } from '../../model/body-limits.js';
import { authenticatedOf, clientGone, type Routed, routed } from '../exchange/exchange.js';
import type { CompiledBackend, CompiledRoute } from '../../model/routing-table.js';
import { bodiesFor, type CallKind, type ExchangeTransform, membersFor, type RequestPlan } from '../exchange/transform.js';
import type { BackendHealth } from '../policy/health.js';
import { planAttempts, type Random } from '../policy/plan.js';
import type { BodyBudget, BodyReservation } from '../request/body-budget.js';
import type { JsonBody } from '../request/json-body.js';
import { formField, formInteger, type MultipartForm } from '../request/multipart.js';
import { bodyBuilder, modelRename, type Payload, readPayload } from '../request/payload.js';
import type { WantedKeys } from '../request/json-scan.js';
import { readBody } from '../request/read-body.js';
import type { CallUpstream } from './upstream-call.js';

export interface FamilyHandlerDeps {
  readonly call: CallUpstream;
  readonly bodyLimits: BodyLimits;
  readonly random: Random;
  readonly health?: BackendHealth;
  /** Process-wide cap on buffered request bodies; absent: no cap. */
  readonly budget?: BodyBudget;
  /** The top-level members of a JSON body the data plane and the wired features read (wantedMembers). */
  readonly members: WantedKeys;
}

const CREATE: CallKind = { create: true, consumes: true };

/**
 * Another call of a family than its create, on a path of its own that takes the same payload (the Messages API's
 * count_tokens): the path, the kind of call, and maybe an answer the gateway gives itself.
 */
export interface FamilyCall {
  /** The path below /v1, and below the backend's base URL. */
  readonly path: string;
  readonly kind: CallKind;
  /**
   * Once the model is resolved and authorized and the backends planned: a JSON value to answer with instead of
   * calling an upstream, or undefined to call the plan's backends (which it may narrow).
   */
  readonly local?: (x: Routed, plan: RequestPlan) => Promise<unknown>;
}

export function familyHandler(family: Family, deps: FamilyHandlerDeps, variant?: FamilyCall) {
  const path = variant?.path ?? FAMILY_PATHS[family];
  const kind = variant?.kind ?? CREATE;
  const publicPath = `/v1${path}`;
  const accept = { multipart: MULTIPART_FAMILIES.has(family), path: publicPath };
  return async (req: Request, res: Response): Promise<void> => {
    const x = authenticatedOf(res);
    x.family = family;
    const reservation = deps.budget?.open(x);
    const payload = await readPayload(req, deps.bodyLimits, (r, limit) => readBody(r, limit, reservation), accept, deps.members);
    // The client may have left while a large form was being parsed (that yields to the event loop; the exchange
    // has then seen its response close already), or the connection was answered 408 meanwhile: do not send a
    // request nobody reads.
    if (clientGone(req, res)) {
      x.aborted = true;
      return;
    }
    const route = x.table.routes.get(payload.model);
    if (!route) throw errors.modelNotFound(payload.model);
    const r = routed(x, route, family); // a known model: safe as a metrics label from here on, even when refused below
    if (!x.token.modelSet.has(route.model)) throw errors.modelNotAllowed(route.model);
    if (!route.families.has(family)) throw errors.familyNotServed(route.model, publicPath);
    const plan = new PayloadPlan(payload, req.headers, planAttempts(route.backends, deps.random, deps.health));
    if (variant?.local) {
      const answer = await variant.local(r, plan);
      if (answer !== undefined) {
        res.json(answer);
        return;
      }
    }
    const q = req.url.indexOf('?');
    await deps.call(r, req, res, {
      kind,
      method: 'POST',
      path: q < 0 ? path : path + req.url.slice(q),
      own: payload.model === route.model ? ownNameRename(route) : modelRename(payload.model),
      plan,
      body: (transforms) =>
        counted(
          bodiesFor(
            transforms,
            bodyBuilder(payload, (backend) => membersFor(transforms, backend)),
          ),
          payload.raw,
          reservation,
        ),
    });
  };
}

/**
 * The request's payload as the transforms read it (methods, not closures: nothing allocated per member). A form's
 * text fields are its members (an image edit's `size`, `quality` and `n`, a video's `seconds`), as a JSON body's are.
 */
class PayloadPlan implements RequestPlan {
  readonly #json: JsonBody | undefined;
  readonly #form: MultipartForm | undefined;
  readonly json: Buffer | undefined;
  readonly bytes: number;
  readonly stream: boolean;
  readonly headers: IncomingHttpHeaders;
  backends: readonly CompiledBackend[];

  constructor(payload: Payload, headers: IncomingHttpHeaders, backends: readonly CompiledBackend[]) {
    this.headers = headers;
    const json = payload.kind === 'json' ? payload.json : undefined;
    this.#json = json;
    this.#form = payload.kind === 'multipart' ? payload.form : undefined;
    this.json = json?.raw;
    this.bytes = payload.raw.length;
    // A form asks for a stream with a `stream` field of "true", as both openai SDKs write a boolean in a form
    // (streamed image edits and transcriptions): such a stream gets keep-alives and a stream's time budget.
    this.stream = json ? json.isTrue('stream') : this.member('stream') === 'true';
    this.backends = backends;
  }

  member(name: string): string | undefined {
    if (this.#form) return formField(this.#form, name);
    return this.#json?.string(name);
  }

  integer(name: string): number | undefined {
    if (this.#form) return formInteger(this.#form, name);
    return this.#json?.integer(name);
  }

  raw(name: string): string | undefined {
    return this.#json?.text(name);
  }
}

const ownNameRenames = new WeakMap<CompiledRoute, ExchangeTransform>();

/** The model rename of a route's own name, made once per compiled route (it depends on the name alone). */
function ownNameRename(route: CompiledRoute): ExchangeTransform {
  let rename = ownNameRenames.get(route);
  if (!rename) ownNameRenames.set(route, (rename = modelRename(route.model)));
  return rename;
}

/** Counts each rewritten body (a copy beside the client's bytes, held for failover replays) against the budget once. */
function counted(build: ReturnType<typeof bodyBuilder>, raw: Buffer, reservation: BodyReservation | undefined): ReturnType<typeof bodyBuilder> {
  if (!reservation) return build;
  let seen: Set<Buffer> | undefined; // the rewritten bodies counted so far; the client's own bytes are counted already
  return (backend) => {
    const out = build(backend);
    if (out.body !== raw && !seen?.has(out.body)) {
      (seen ??= new Set()).add(out.body);
      reservation.add(out.body.length);
    }
    return out;
  };
}
