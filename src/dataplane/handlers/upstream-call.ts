// Every upstream call of the API goes through callUpstream: the one place an exchange's transforms are assembled
// (the caller's own, then every feature's for the family and kind of call, then those every exchange gets),
// prepared before the first attempt, and handed to forward(). A route that called forward() itself would skip
// limits, usage and tracing; the import rules (.dependency-cruiser.cjs) let nothing else import forward.ts.
import type { Request, Response } from 'express';
import { FAMILIES, type Family } from '../../model/families.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { Routed } from '../exchange/exchange.js';
import type { CallKind, ExchangeTransform, Feature, RequestPlan, TransformFactory } from '../exchange/transform.js';
import { type ForwardCall, type ForwardDeps, forward } from '../upstream/forward.js';

/** What the features add to every upstream call. */
export interface CallTransforms {
  /** Transforms every exchange gets (time to first token, tracing), after the per-request ones. */
  readonly transforms: readonly ExchangeTransform[];
  /** The features wired in gateway/app.ts (sealed ids, usage, limits), in order: their per-request transforms by family. */
  readonly features?: readonly Feature[];
}

interface UpstreamCall {
  readonly kind: CallKind;
  readonly method: string;
  /** Path below the backend's base URL, with the client's query string if any. */
  readonly path: string;
  /** The caller's own transform, first of all (the model rename; a follow-up's sealing of the ids it answers). */
  readonly own: ExchangeTransform;
  /** The request as the transforms read it; its backends after every `prepare` are the ones tried. */
  readonly plan: RequestPlan;
  /** The body for each backend, given the call's transforms (the members they set). */
  readonly body: (transforms: readonly ExchangeTransform[]) => ForwardCall['body'];
}

export type CallUpstream = (x: Routed, req: Request, res: Response, call: UpstreamCall) => Promise<void>;

/** The call path of an app: its features' factories resolved per family once, here. */
export function upstreamCaller(deps: ForwardDeps & CallTransforms): CallUpstream {
  const byFamily = new Map<Family, TransformFactory[]>(FAMILIES.map((f) => [f, (deps.features ?? []).flatMap((feature) => feature.families[f] ?? [])]));
  return async (x, req, res, call) => {
    const transforms = [call.own];
    for (const factory of byFamily.get(x.family)!) {
      const t = factory(x, call.kind);
      if (t) transforms.push(t);
    }
    for (const t of deps.transforms) transforms.push(t);
    // The first transform that can estimate the usage does, when no answer handler returns it (the usage feature).
    for (const t of transforms) {
      if (!t.unreported) continue;
      x.estimateUsage(t);
      break;
    }
    const { plan } = call;
    for (const t of transforms) {
      const pending = t.prepare?.(plan);
      if (pending) await pending;
    }
    await forward(deps, x, req, res, {
      method: call.method,
      path: call.path,
      backends: plan.backends,
      // Keep-alives while waiting and no total deadline: the client asked for a stream (plan.stream says it for every call).
      streaming: plan.stream,
      body: call.body(transforms),
      transforms,
      admits: failoverAdmits(transforms),
    });
  };
}

/** Every transform that has a say on failover must admit the backend; undefined when none has (nothing allocated). */
function failoverAdmits(transforms: readonly ExchangeTransform[]): ((backend: CompiledBackend) => Promise<boolean>) | undefined {
  if (!transforms.some((t) => t.admitsFailover)) return undefined;
  return async (backend) => {
    for (const t of transforms) if (t.admitsFailover && !(await t.admitsFailover(backend))) return false;
    return true;
  };
}
