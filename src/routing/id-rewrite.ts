// Id rewriting (pure): which fields of upstream bodies carry routable ids, sealed on the way out. Only ids
// that name an object the gateway routes follow-ups for are sealed (videos, stored responses); item ids
// (msg_…, fc_…), which are input_items pagination cursors, and conversation ids pass through unchanged.
import { SEALED_PREFIX, type IdSealer, type SealedKind, type SealedRef } from './sealed-id.js';

/** Everything a sealed id carries besides the upstream id: the same for every id in one upstream answer. */
export interface SealContext {
  readonly sealer: IdSealer;
  readonly model: string;
  readonly backend: string;
  readonly owner: string;
  /**
   * The sealed id the client presented for this upstream id (follow-ups, previous_response_id): given back
   * as it was, so an object keeps the id the client knows even after a key rotation re-signs new ids.
   */
  readonly known?: { readonly upstreamId: string; readonly sealedId: string };
}

export function sealId(ctx: SealContext, kind: SealedKind, upstreamId: string): string {
  if (ctx.known && ctx.known.upstreamId === upstreamId && ctx.known.sealedId.startsWith(SEALED_PREFIX[kind])) return ctx.known.sealedId;
  const ref: SealedRef = { kind, upstreamId, model: ctx.model, backend: ctx.backend, owner: ctx.owner };
  return ctx.sealer.seal(ref);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sealField(obj: Record<string, unknown>, field: string, ctx: SealContext, kind: SealedKind): boolean {
  const v = obj[field];
  if (typeof v !== 'string' || v.length === 0) return false;
  obj[field] = sealId(ctx, kind, v);
  return true;
}

/**
 * A Video (create, retrieve, remix) or a video.deleted answer: seals `id` and `remixed_from_video_id` in place.
 * The source of a remix lives on the same backend (remix is pinned there) and was reachable by the same owner.
 */
export function sealVideoBody(body: unknown, ctx: SealContext): boolean {
  if (!isRecord(body)) return false;
  const a = sealField(body, 'id', ctx, 'video');
  const b = sealField(body, 'remixed_from_video_id', ctx, 'video');
  return a || b;
}

/** A Response object (create, retrieve, cancel) or a response.deleted answer: seals `id` and `previous_response_id`. */
export function sealResponseBody(body: unknown, ctx: SealContext): boolean {
  if (!isRecord(body)) return false;
  const a = sealField(body, 'id', ctx, 'response');
  const b = sealField(body, 'previous_response_id', ctx, 'response');
  return a || b;
}

/**
 * One Responses streaming event: the lifecycle events (response.created, .queued, .in_progress, .completed,
 * .failed, .incomplete) carry the whole Response under `response`; other events carry only item ids.
 */
export function sealResponseEvent(event: unknown, ctx: SealContext): boolean {
  if (!isRecord(event)) return false;
  return sealResponseBody(event.response, ctx);
}

/**
 * Upstream error bodies of follow-up calls may quote the upstream id ("Video 'video_123' not found"); the
 * client only knows the sealed id, so quote that instead. Everything else in the body is left as it was.
 */
export function replaceUpstreamId(text: string, upstreamId: string, sealedId: string): string {
  return upstreamId.length >= 4 ? text.split(upstreamId).join(sealedId) : text;
}
