// Id rewriting (pure): which fields of upstream bodies carry routable ids, sealed on the way out. Only ids
// that name an object the gateway routes follow-ups for are sealed (videos, stored responses); item ids
// (msg_…, fc_…), which are input_items pagination cursors, and conversation ids pass through unchanged.
import { type BackgroundCreate, SEALED_PREFIX, type IdSealer, type SealedKind, type SealedRef } from './sealed-id.js';

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
  /** What a background create recorded: sealed into the answer's own id only, never into an id it quotes. */
  readonly background?: BackgroundCreate;
}

/** `own`: the id is the answer's own (`id`), not one it quotes (`previous_response_id`). */
export function sealId(ctx: SealContext, kind: SealedKind, upstreamId: string, own = false): string {
  if (ctx.known && ctx.known.upstreamId === upstreamId && ctx.known.sealedId.startsWith(SEALED_PREFIX[kind])) return ctx.known.sealedId;
  const bg = own ? ctx.background : undefined;
  const ref: SealedRef = { kind, upstreamId, model: ctx.model, backend: ctx.backend, owner: ctx.owner, ...(bg ? { background: bg } : {}) };
  return ctx.sealer.seal(ref);
}

/** The fields of an answer body that hold routable ids, by what the body is. */
export const SEALED_FIELDS: Readonly<Record<SealedKind, readonly string[]>> = {
  // The answer's own id first: its index (OWN_ID_FIELD) is how a scanner tells it from the ids it quotes.
  // A Video (create, retrieve, remix) or a video.deleted answer. The source of a remix lives on the same backend
  // (remix is pinned there) and was reachable by the same owner.
  video: ['id', 'remixed_from_video_id'],
  // A Response object (create, retrieve, cancel) or a response.deleted answer.
  response: ['id', 'previous_response_id'],
};

/** The index of the answer's own id in SEALED_FIELDS (and in the scanners' paths built from them). */
export const OWN_ID_FIELD = 0;

/**
 * In a Responses stream, the lifecycle events (response.created, .queued, .in_progress, .completed, .failed,
 * .incomplete) carry the whole Response under this key; other events carry only item ids.
 */
export const RESPONSE_EVENT_KEY = 'response';

/**
 * Seals one id given as a JSON string literal (as it stands in the upstream's bytes) and returns the sealed id's
 * literal; undefined (keep it) for an empty string or a value that is not a string. A literal that is not valid
 * JSON throws: it is never passed on unsealed.
 */
export function sealIdLiteral(ctx: SealContext, kind: SealedKind, literal: string, own = false): string | undefined {
  const id: unknown = JSON.parse(literal);
  return typeof id === 'string' && id.length > 0 ? JSON.stringify(sealId(ctx, kind, id, own)) : undefined;
}

/**
 * Upstream error bodies of follow-up calls may quote the upstream id ("Video 'video_123' not found"); the client
 * only knows the sealed id, so that is quoted instead. Ids this short are left alone: they could match ordinary text.
 */
export const MIN_QUOTED_ID_CHARS = 4;
