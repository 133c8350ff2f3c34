// The one place per-request policy plugs into an exchange. The model rename, sealed ids, usage, limits, time to
// first token and tracing are transforms. For each upstream call, handlers/upstream-call.ts collects the
// transforms that apply (the caller's own and those of the features wired in gateway/app.ts), runs every
// `prepare` before the first upstream call, builds each backend's body from their `members` (or a transform's own
// `body`), and forwarding asks each for the handler of the answer that is relayed (`onResponseStart`).
import type { IncomingHttpHeaders } from 'node:http';
import type { Transform } from 'node:stream';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { Family } from '../../model/families.js';
import type { Usage } from '../../model/usage.js';
import type { Routed } from './exchange.js';

/** What a Responses event stream told the gateway so far, for an error event it may have to end the stream with. */
export interface StreamProgress {
  /** The last `sequence_number` seen in the upstream's events. */
  lastSequenceNumber: number | undefined;
}

/** The request as the transforms see it before any upstream call. */
export interface RequestPlan {
  /** A top-level string member of the client's JSON body, as the gateway read it, or the first text field of that name of a form. */
  member(name: string): string | undefined;
  /**
   * A top-level non-negative integer member of the client's JSON body (max_tokens and kin), a form's field of digits,
   * or a follow-up's query parameter of digits (a streamed retrieve's `starting_after`); else undefined.
   */
  integer(name: string): number | undefined;
  /** A top-level member of the client's JSON body as its raw JSON text (any type), else undefined. */
  raw(name: string): string | undefined;
  /** The client's JSON body (undefined for forms), for what must read more than a top-level member. */
  readonly json: Buffer | undefined;
  /** Size of the client's body in bytes. */
  readonly bytes: number;
  /**
   * The client asked for an event stream (`"stream": true`, a form's `stream` field of `true`, or a retrieve's
   * `stream=true` query).
   */
  readonly stream: boolean;
  /** The client's request headers (lower-case names), for a transform that lays a body out from them. */
  readonly headers: IncomingHttpHeaders;
  /** The backends to try, in order. A transform may pin or reorder them. */
  backends: readonly CompiledBackend[];
}

/** The upstream answer that will be relayed. */
export interface Answer {
  readonly exchange: Routed;
  readonly backend: CompiledBackend;
  readonly statusCode: number;
  /** The upstream's headers as relayed; onResponseStart may add a gateway header of its own (a budget warning). */
  readonly headers: Record<string, string | string[] | undefined>;
  readonly contentType: string;
  readonly isStream: boolean;
  /** Set on the Responses family: a stage that reads its event stream records the sequence here. */
  readonly progress: StreamProgress | undefined;
}

/**
 * A feature's view of one answer, in the manner of undici's interceptors: made by `onResponseStart` when the answer's
 * head is known, then told each chunk of the body, its end or its failure. Every call is synchronous: nothing on the
 * relay's path waits.
 */
export interface AnswerHandler {
  /**
   * A stream the body passes through (decoded first, before any onData; Content-Length is then dropped). Only for
   * rewrites that are streams already and must fail the body when they fail: the sealed ids' field scanners, which
   * also read an upstream error body that is retold as an event. Everything else uses onData.
   */
  readonly rewrite?: Transform;
  /** onData may pass on other bytes than it was given (Content-Length is then dropped); absent: it only observes. */
  readonly edits?: boolean;
  /**
   * The handler passes nothing on before its flush (it remakes a whole, non-streamed body at its end): the answer's
   * head then waits for the body, so a body the handler fails is answered with the error (a GatewayError's status,
   * else 502) rather than cut after a 200.
   */
  readonly holdsBody?: boolean;
  /**
   * The handler tells a whole 2xx answer as the family's event stream (the client asked for a stream, the upstream
   * answered whole): the client gets a stream, so a 200 the keep-alives committed carries it (rather than an error
   * event), and a failure after the head is an error event.
   */
  readonly streams?: boolean;
  /**
   * Each chunk, in order, as the handlers before this one passed it on; returns what to pass on: the chunk itself
   * to observe only; with `edits`, other bytes, fewer or none (holding some back). A throw fails the body (an error
   * event for a stream, a cut connection otherwise).
   */
  onData?(chunk: Buffer): Buffer;
  /** The body completed: what this handler still holds (passed on through the handlers after it). */
  flush?(): Buffer | undefined;
  /**
   * After the body completed and every handler flushed. `usage` is what the handlers before this one returned; the
   * handler returns the request's usage when it read one (the usage feature), else undefined. The last usage
   * returned is what the exchange settles with.
   */
  onEnd?(usage: Usage | undefined): Usage | undefined;
  /** The body failed, or the client left, before it completed. */
  onError?(err: unknown): void;
  /**
   * After onError: the counts the answer had reported before it ended (a Messages stream's message_start holds the
   * exact input and cache counts), exact as far as they go; the estimate completes them. Absent or undefined: none.
   */
  partial?(): Usage | undefined;
  /**
   * When the client leaves before the body completed: read the rest of it within this bound (through onData, the
   * bytes dropped) for what comes at its end, the usage; past the bound the body is cut and onError told. The
   * client is not held: its response is over, only the exchange's settlement waits. Absent: cut at once.
   */
  readonly readOn?: ReadOnBound;
}

/** How far an answer is read after its client left: the longest any handler asks for. */
export interface ReadOnBound {
  readonly ms: number;
  readonly bytes: number;
}

/** A request body as sent to one backend. */
export interface OutgoingBody {
  readonly body: Buffer;
  readonly contentType: string | undefined;
  /**
   * The path below the backend's base URL this body goes to, when a transform sends it elsewhere than the call's
   * own path (a Messages request translated to /chat/completions); undefined: the call's path.
   */
  readonly path?: string;
  /**
   * Header edits this body needs (a cloud's own layout of the API), made before the backend's credential is added
   * and the request signed: `drop` client headers not to forward, `set` headers to send (lower-case names).
   */
  readonly headers?: { readonly drop: readonly string[]; readonly set: Readonly<Record<string, string>> };
  /**
   * The content type of a 2xx answer that is an event stream in the backend's own framing (Bedrock's
   * application/vnd.amazon.eventstream): it counts as a stream and reaches the client as text/event-stream, which an
   * answer handler of the same transform (with `edits`) must make of it.
   */
  readonly eventStream?: string;
}

export interface ExchangeTransform {
  /**
   * After the route is resolved and authorized, before any upstream call: may refuse (throw a GatewayError), may
   * pin or reorder the backends, may wait (a shared store), and reads the request through `plan.member` (the
   * members its feature declared it reads).
   */
  prepare?(plan: RequestPlan): void | Promise<void>;
  /** Top-level members (serialised JSON values) to set in the body sent to this backend; undefined: none. */
  members?(backend: CompiledBackend): Readonly<Record<string, string>> | undefined;
  /**
   * The whole body to send to this backend, when the transform rebuilds it (e.g. a request translated to another
   * API for this backend); undefined: the client's body with the members set. The first transform that gives one wins.
   */
  body?(backend: CompiledBackend): OutgoingBody | undefined;
  /**
   * Header edits for the client's body as sent to this backend (when no transform rebuilt it, whose own body carries
   * its edits); undefined: none. The first transform that gives some wins.
   */
  headers?(backend: CompiledBackend): OutgoingBody['headers'];
  /**
   * Before failing over to a backend after the first planned one: false skips it (its upstream account's limits are
   * reached). Asked once the transforms are prepared; `prepare` admitted the first backend already.
   */
  admitsFailover?(backend: CompiledBackend): boolean | Promise<boolean>;
  /** The handler of this answer, if the transform reads or edits it. */
  onResponseStart?(answer: Answer): AnswerHandler | undefined;
  /**
   * What the request consumed when no answer handler returned it (no answer, an answer cut short, or one without a
   * usage object): an estimate, keeping the counts an answer cut short had reported (`partial`). Asked once the
   * response is over, of the first transform that offers it. Undefined: nothing to record.
   */
  unreported?(partial?: Usage): Usage | undefined | Promise<Usage | undefined>;
  /** The error event that ends a stream of this exchange, in the API's own shape; undefined: OpenAI's. */
  errorEvent?(e: SseError): string | undefined;
}

/** An error as the gateway tells it inside an event stream. */
export interface SseError {
  readonly message: string;
  readonly type: string;
  readonly code: string | null;
}

/** What an upstream call does, for the features that treat calls differently (limits, usage, sealed ids). */
export interface CallKind {
  /** The family's own create call (POST /v1/<family>); false for a follow-up on an object by its sealed id. */
  readonly create: boolean;
  /** The call makes something the upstream charges for: every create, and a video remix (a new generation). */
  readonly consumes: boolean;
  /** Set on a call that may show a background response finished (its retrieve, its cancel): what records it. */
  readonly background?: BackgroundFollowUp;
  /**
   * The call reads a response back (GET /v1/responses/{id}), which with `stream=true` in its query string is its
   * create's event stream told again: a stream request, whose answer is the family's events as a create's.
   */
  readonly retrieve?: boolean;
  /** Set on a retrieve of a video: what credits its create, once, if it shows the video failed. */
  readonly video?: VideoFollowUp;
}

/** A retrieve of a video (GET /v1/videos/{id}): its create was charged, and a failed video is not billed. */
export interface VideoFollowUp {
  /** The video's id as the client knows it (its sealed id). */
  readonly videoId: string;
  /** Names the video in every replica (its route, backend and upstream id): its credit is claimed once by it. */
  readonly claimKey: string;
  /** The request id of its create, when its id carries it (ids minted before it did do not). */
  readonly createReqId?: string;
}

/** A follow-up call on a response created in background mode (docs/usage-and-limits.md). */
export interface BackgroundFollowUp {
  /** The response's id as the client knows it (its sealed id). */
  readonly responseId: string;
  /** Names the response in every replica (its route, backend and upstream id): its record is claimed once by it. */
  readonly claimKey: string;
  /** What the create recorded: its input tokens (an estimate) and its request id. */
  readonly create: { readonly inputTokens: number; readonly reqId: string };
}

/** Makes the transforms of one exchange; undefined when it has none for this request. */
export type TransformFactory = (x: Routed, kind: CallKind) => ExchangeTransform | undefined;

/** A feature as gateway/app.ts wires it into the call path. */
export interface Feature {
  /**
   * The top-level members of a JSON request body its transforms read (through RequestPlan): the request reader
   * reads these and skips the rest unread. `model` and `stream` are the data plane's own and always read.
   */
  readonly reads: readonly string[];
  /** Its transform factory per API family (none: the feature does not apply to that family). */
  readonly families: Partial<Record<Family, TransformFactory>>;
}

/**
 * The answer reaches the client as an event stream: the upstream's own, or a whole answer that a handler before the
 * asking one tells as the family's events (whole-stream, the Messages translation), which sets the relayed type.
 */
export function toldAsEvents(a: Answer): boolean {
  const type = a.headers['content-type'];
  return a.isStream || (typeof type === 'string' && type.startsWith('text/event-stream'));
}

/** The body for each backend: the first transform's own (`body`), else what `build` makes with the first header edits given. */
export function bodiesFor(
  transforms: readonly ExchangeTransform[],
  build: (backend: CompiledBackend) => OutgoingBody,
): (backend: CompiledBackend) => OutgoingBody {
  if (!transforms.some((t) => t.body || t.headers)) return build;
  return (backend) => {
    for (const t of transforms) {
      const own = t.body?.(backend);
      if (own) return own;
    }
    const built = build(backend);
    for (const t of transforms) {
      const headers = t.headers?.(backend);
      if (headers) return { ...built, headers };
    }
    return built;
  };
}

/** The members every transform sets for one backend, merged in order (a later transform wins a conflict). */
export function membersFor(transforms: readonly ExchangeTransform[], backend: CompiledBackend): Readonly<Record<string, string>> | undefined {
  let out: Record<string, string> | undefined;
  for (const t of transforms) {
    const m = t.members?.(backend);
    if (m) out = out ? { ...out, ...m } : { ...m };
  }
  return out;
}
