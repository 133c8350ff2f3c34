// The only outbound I/O of the data plane: one undici Pool per upstream origin with keep-alive, reused by every
// request to that origin. undici fixes the connect timeout per pool, so a pool is keyed by origin and connect
// timeout (routes almost always share the default, so in practice it is one pool per origin). Requests go through
// undici's dispatcher API, not request(): the answer's body is handed to one consumer without a stream
// (upstream-body.ts). Behind an egress proxy (HTTPS_PROXY / HTTP_PROXY set), each such pool is undici's
// EnvHttpProxyAgent instead, which tunnels through the proxy unless NO_PROXY names the origin (egress/egress-proxy.ts).
import { type Dispatcher, Pool } from 'undici';
import type { CompiledBackend } from '../../model/routing-table.js';
import { SHUTDOWN_CODE } from '../policy/retry-policy.js';
import type { AbortListener, AttemptSignal } from './attempt-abort.js';
import { envProxyAgent, proxyConfigured } from './egress/egress-proxy.js';
import { type BodyController, UpstreamBody } from './upstream-body.js';

export interface UpstreamRequest {
  readonly backend: CompiledBackend;
  readonly method: string;
  /** Full request path on the upstream origin (the backend's base path included), with any query string. */
  readonly path: string;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer | null;
  /** The route's connect timeout (undici fixes it per pool, hence pools keyed by it). */
  readonly connectMs: number;
  readonly signal?: AttemptSignal;
}

export interface UpstreamResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: UpstreamBody;
}

export interface UpstreamClientOptions {
  /**
   * Idle keep-alive sockets are closed after this long unless the upstream's Keep-Alive hint says otherwise.
   * Default: undici's (4s), short enough to beat most servers' idle timeouts and so avoid resets on reuse.
   */
  readonly keepAliveTimeoutMs?: number;
  /**
   * Cap on sockets per origin (default 1024). High, as a proxy should rarely queue behind its own pool, but
   * bounded so a stampede cannot exhaust file descriptors; a request queued here still counts against its
   * attempt's first-byte deadline, so a saturated origin fails over instead of stalling.
   */
  readonly connections?: number;
  /** Where proxy variables are read (default: the process's environment, when the client is made). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const DEFAULT_CONNECTIONS_PER_ORIGIN = 1024;

/** Bodies up to this size leave in one write the kernel takes whole on a fresh or reused connection. */
const FLUSHED_BODY_BYTES = 64 * 1024;

/**
 * undici counts a Buffer body as sent once it is handed to the socket, though what the kernel did not take waits in
 * the socket's buffer until the upstream reads it. An upstream that answers before reading the body and then keeps
 * the connection open (neither reading nor closing) would so get its connection back into the pool with the body
 * still unsent, and the next request put on it waits behind those bytes for its whole first-byte deadline. Given as
 * an iterable, the body is written with undici's own flow control, which waits for the socket to drain before it
 * counts the body as sent: until then the connection is busy, and an answer that completes first closes it
 * instead of returning it. (A Readable does not do: undici counts it sent at its 'end', before the drain.)
 */
function trackedBody(body: Buffer | null): Buffer | null {
  // undici accepts iterable bodies (its Request checks for them, and its error message lists them); its type
  // definitions do not, hence the cast.
  return body !== null && body.length > FLUSHED_BODY_BYTES ? ([body] as unknown as Buffer) : body;
}

export class UpstreamClient {
  readonly #pools = new Map<string, { origin: string; pool: Dispatcher }>();
  readonly #options: UpstreamClientOptions;
  /** Whether a proxy variable is set: decided once, so the direct path never looks at the environment again. */
  readonly #proxied: boolean;
  #closed = false;

  constructor(options: UpstreamClientOptions = {}) {
    this.#options = options;
    this.#proxied = proxyConfigured(options.env);
  }

  request(r: UpstreamRequest): Promise<UpstreamResponse> {
    return new Promise((resolve, reject) => {
      const pool = this.#pool(r.backend.origin, r.connectMs);
      const handler = new AnswerHandler(resolve, reject, r.signal);
      pool.dispatch(
        {
          // Read by the proxy agent (which serves many origins); a Pool knows its own.
          origin: r.backend.origin,
          method: r.method as Dispatcher.HttpMethod,
          path: r.path,
          headers: r.headers,
          body: trackedBody(r.body),
          // Both deadlines are the exchange's own (precise native timers; undici's fire up to ~0.5 s late, and a
          // second timer for the same deadline is wasted work): the attempt's headers deadline in failover.ts, the
          // silence inside the body in forward.ts. The signal carries them here.
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        handler,
      );
    });
  }

  #pool(origin: string, connectMs: number): Dispatcher {
    if (this.#closed) throw shutdownError();
    const key = `${origin} ${connectMs}`;
    let entry = this.#pools.get(key);
    if (!entry) {
      const options = {
        connect: { timeout: connectMs },
        ...(this.#options.keepAliveTimeoutMs !== undefined ? { keepAliveTimeout: this.#options.keepAliveTimeoutMs } : {}),
        connections: this.#options.connections ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
      };
      // One proxy agent per origin, like the pools: retainOrigins closes it with its origin. Its connection to the
      // proxy (and the tunnel through it) takes the connect timeout as `connectTimeout`.
      const pool = this.#proxied ? envProxyAgent({ ...options, connectTimeout: connectMs }) : new Pool(origin, options);
      entry = { origin, pool };
      this.#pools.set(key, entry);
    }
    return entry.pool;
  }

  /** Sockets open across all direct pools (connected, busy or idle); for tests and leak checks. */
  get socketCount(): number {
    let n = 0;
    for (const e of this.#pools.values()) if (e.pool instanceof Pool) n += e.pool.stats.connected;
    return n;
  }

  /** Number of pools open; for tests and metrics. */
  get poolCount(): number {
    return this.#pools.size;
  }

  /** Closes (gracefully: in-flight requests finish) the pools of origins that are no longer in use. */
  async retainOrigins(origins: ReadonlySet<string>): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [key, entry] of this.#pools) {
      if (origins.has(entry.origin)) continue;
      this.#pools.delete(key);
      closing.push(entry.pool.close());
    }
    await Promise.all(closing);
  }

  /** Graceful close: waits for in-flight requests. */
  async close(): Promise<void> {
    this.#closed = true;
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((e) => e.pool.close()));
  }

  /**
   * Hard close: aborts in-flight requests (end of a drain deadline, tests) with an error coded SHUTDOWN_CODE, so
   * that what they end in says so: an error event ends a stream, a waiting request gets 503 (forward.ts).
   */
  async destroy(): Promise<void> {
    this.#closed = true;
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((e) => e.pool.destroy(shutdownError())));
  }
}

type Resolve = (r: UpstreamResponse) => void;
type Reject = (err: unknown) => void;

/**
 * One request's handler (undici's dispatcher API): resolves with the status and headers, then feeds the body. The
 * signal aborts the request; before the answer the promise rejects with its reason, after it the body ends with
 * it, on the next microtask, as undici's request() did: a client that left is then seen by the relay's own end
 * hook first (the exchange ends it in the same turn), and the body's error comes after the relay is done.
 */
class AnswerHandler implements Dispatcher.DispatchHandler, AbortListener {
  readonly #resolve: Resolve;
  readonly #reject: Reject;
  readonly #signal: AttemptSignal | undefined;
  #controller: BodyController | undefined;
  #body: UpstreamBody | undefined;
  #settled = false;

  constructor(resolve: Resolve, reject: Reject, signal: AttemptSignal | undefined) {
    this.#resolve = resolve;
    this.#reject = reject;
    this.#signal = signal;
    if (signal?.aborted) {
      // Rejected now; undici drops the request when it would start (onRequestStart).
      this.#settled = true;
      reject(signal.reason);
      return;
    }
    signal?.listen(this);
  }

  attemptAborted(reason: unknown): void {
    if (this.#body) {
      const body = this.#body;
      queueMicrotask(() => body.abort(reason as Error));
    } else if (this.#controller) this.#controller.abort(reason);
    else this.#fail(reason); // still queued in the pool: undici drops a request aborted before its start
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#settled) return controller.abort(this.#signal?.reason as Error);
    this.#controller = controller;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return; // 1xx: the answer is still to come
    const body = new UpstreamBody(controller);
    this.#body = body;
    this.#settled = true;
    this.#resolve({ statusCode, headers, body });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#body?.push(chunk);
  }

  onResponseEnd(): void {
    this.#signal?.listen(undefined);
    this.#body?.finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.#body) {
      this.#signal?.listen(undefined);
      this.#body.fail(err);
    } else this.#fail(err);
  }

  #fail(err: unknown): void {
    this.#signal?.listen(undefined);
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(err);
  }
}

function shutdownError(): Error {
  return Object.assign(new Error('upstream client is closed'), { code: SHUTDOWN_CODE });
}
