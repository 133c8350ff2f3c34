// The one place per-request policy plugs into an exchange. The model rename, sealed ids, usage, limits, time to
// first token and tracing are transforms. For each upstream call, handlers/upstream-call.ts collects the
// transforms that apply (the caller's own and those of the features wired in gateway/app.ts), runs every
// `prepare` before the first upstream call, builds each backend's body from their `members`, and forwarding puts
// each `answer` stage on the answer that is relayed.
import type { Transform } from 'node:stream';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { Routed } from './exchange.js';

/** What a Responses event stream told the gateway so far, for an error event it may have to end the stream with. */
export interface StreamProgress {
  /** The last `sequence_number` seen in the upstream's events. */
  lastSequenceNumber: number | undefined;
}

/** The request as the transforms see it before any upstream call. */
export interface RequestPlan {
  /** A top-level string member of the client's JSON body, as the gateway read it (undefined for forms). */
  member(name: string): string | undefined;
  /** A top-level non-negative integer member of the client's JSON body (max_tokens and kin), else undefined. */
  integer(name: string): number | undefined;
  /** A top-level member of the client's JSON body as its raw JSON text (any type), else undefined. */
  raw(name: string): string | undefined;
  /** The client's JSON body (undefined for forms), for what must read more than a top-level member. */
  readonly json: Buffer | undefined;
  /** Size of the client's body in bytes. */
  readonly bytes: number;
  /** The client asked for an event stream (`"stream": true`). */
  readonly stream: boolean;
  /** The backends to try, in order. A transform may pin or reorder them. */
  backends: readonly CompiledBackend[];
}

/** The upstream answer that will be relayed. */
export interface Answer {
  readonly exchange: Routed;
  readonly backend: CompiledBackend;
  readonly statusCode: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly contentType: string;
  readonly isStream: boolean;
  /** Set on the Responses family: a stage that reads its event stream records the sequence here. */
  readonly progress: StreamProgress | undefined;
}

/**
 * A synchronous editor of an answer's bytes: each chunk in, the bytes to pass on now out (it may hold some back);
 * at the end, what it still holds. Cheaper than a Transform (no stream machinery per chunk), for edits that never
 * wait.
 */
export interface ChunkEditor {
  push(chunk: Buffer): Buffer;
  end(): Buffer;
}

/** What a transform does to an answer's body. */
export interface AnswerStage {
  /** A stage the body (decoded, when the upstream compressed it) passes through; Content-Length is then dropped. */
  readonly rewrite?: Transform;
  /** A synchronous edit of the body after the rewrites (Content-Length is then dropped too). */
  readonly edit?: ChunkEditor;
  /** Sees every chunk the client gets, in order (after the rewrites and edits, before credentials are masked). */
  readonly observe?: (chunk: Buffer) => void;
  /** After the last chunk, when the body completed. */
  readonly end?: () => void;
}

export interface ExchangeTransform {
  /**
   * After the route is resolved and authorized, before any upstream call: may refuse (throw a GatewayError), may
   * pin or reorder the backends, may wait (a shared store), and reads the request through `plan.member`.
   */
  prepare?(plan: RequestPlan): void | Promise<void>;
  /** Top-level members (serialised JSON values) to set in the body sent to this backend; undefined: none. */
  members?(backend: CompiledBackend): Readonly<Record<string, string>> | undefined;
  /** The stage to put on this answer, if any. */
  answer?(answer: Answer): AnswerStage | undefined;
}

/** What an upstream call does, for the features that treat calls differently (limits, usage, sealed ids). */
export interface CallKind {
  /** The family's own create call (POST /v1/<family>); false for a follow-up on an object by its sealed id. */
  readonly create: boolean;
  /** The call makes something the upstream charges for: every create, and a video remix (a new generation). */
  readonly consumes: boolean;
}

/** Makes the transforms of one exchange; undefined when it has none for this request. */
export type TransformFactory = (x: Routed, kind: CallKind) => ExchangeTransform | undefined;

/** The members every transform sets for one backend, merged in order (a later transform wins a conflict). */
export function membersFor(transforms: readonly ExchangeTransform[], backend: CompiledBackend): Readonly<Record<string, string>> | undefined {
  let out: Record<string, string> | undefined;
  for (const t of transforms) {
    const m = t.members?.(backend);
    if (m) out = out ? { ...out, ...m } : { ...m };
  }
  return out;
}
