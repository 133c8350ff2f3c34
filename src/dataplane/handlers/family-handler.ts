// The handler shared by every POST family: read the payload once, resolve and authorize the model, plan the
// backends and forward. Thin on purpose; the work lives in payload.ts and proxy/.
import type { Request, Response } from 'express';
import type { Family } from '../../model/families.js';
import type { CompiledBackend, CompiledRoute } from '../../model/routing-table.js';
import type { AppLimits } from '../../model/limits.js';
import { forward, type ForwardDeps, type ResponseTransform } from '../upstream/forward.js';
import { planAttempts, type Random } from '../policy/plan.js';
import { clientGone, getContext, type RequestContext } from '../exchange/context.js';
import { errors } from '../../model/errors.js';
import type { BodyBudget, BodyReservation } from '../request/body-budget.js';
import { FAMILY_PATHS, MULTIPART_FAMILIES } from '../../model/families.js';
import { bodyBuilder, readPayload, type Payload } from '../request/payload.js';
import { readBody } from '../request/read-body.js';

/**
 * A per-family step between authorization and forwarding (e.g. sealed ids: unseal a previous_response_id,
 * pin the backend that holds it, seal the ids of the answer). May throw a GatewayError.
 */
export type CreateHook = (args: { payload: Payload; route: CompiledRoute; ctx: RequestContext }) => {
  readonly payload?: Payload;
  /** Replaces the planned backends (in order). */
  readonly backends?: readonly CompiledBackend[];
  readonly transform?: ResponseTransform;
};

export interface FamilyHandlerDeps extends ForwardDeps {
  readonly limits: AppLimits;
  readonly random: Random;
  readonly transform?: ResponseTransform;
  readonly hooks?: Partial<Record<Family, CreateHook>>;
  /** Process-wide cap on buffered request bodies; absent: no cap. */
  readonly budget?: BodyBudget;
}

export function familyHandler(family: Family, deps: FamilyHandlerDeps) {
  const path = FAMILY_PATHS[family];
  const publicPath = `/v1${path}`;
  const accept = { multipart: MULTIPART_FAMILIES.has(family), path: publicPath };
  return async (req: Request, res: Response): Promise<void> => {
    const ctx = getContext(res);
    ctx.family = family;
    const reservation = deps.budget?.open(res);
    let payload = await readPayload(req, deps.limits, (r, limit) => readBody(r, limit, reservation), accept);
    // The client may have left while a large form was being parsed (that yields to the event loop; its 'close'
    // has then fired already and forward() would never see it), or the connection was answered 408 meanwhile:
    // do not send a request nobody reads.
    if (clientGone(req, res)) {
      ctx.aborted = true;
      return;
    }
    const route = ctx.table!.routes.get(payload.model);
    if (!route) throw errors.modelNotFound(payload.model);
    ctx.route = route; // known model: safe as a metrics label from here on, even when refused below
    if (!ctx.token!.modelSet.has(route.model)) throw errors.modelNotAllowed(route.model);
    if (!route.families.has(family)) throw errors.familyNotServed(route.model, publicPath);
    const hooked = deps.hooks?.[family]?.({ payload, route, ctx });
    if (hooked?.payload) payload = hooked.payload;
    const transform = hooked?.transform ?? deps.transform;
    const q = req.url.indexOf('?');
    const backends = hooked?.backends ?? planAttempts(route.backends, deps.random, deps.health);
    const body = counted(bodyBuilder(payload), payload.raw, reservation);
    await forward(deps, {
      req,
      res,
      ctx,
      method: 'POST',
      path: q < 0 ? path : path + req.url.slice(q),
      backends,
      timeouts: route.timeouts,
      retry: route.retry,
      streaming: payload.kind === 'json' && payload.json.isTrue('stream'),
      keepAliveMs: route.keepAliveMs,
      body,
      ...(transform ? { transform } : {}),
      labels: { family, model: route.model },
    });
  };
}

/** Counts each rewritten body (a copy beside the client's bytes, held for failover replays) against the budget once. */
function counted(build: ReturnType<typeof bodyBuilder>, raw: Buffer, reservation: BodyReservation | undefined): ReturnType<typeof bodyBuilder> {
  if (!reservation) return build;
  const seen = new Set<Buffer>([raw]);
  return (backend) => {
    const out = build(backend);
    if (!seen.has(out.body)) {
      seen.add(out.body);
      reservation.add(out.body.length);
    }
    return out;
  };
}
