// One Exchange per request: what the middleware, the handlers, the forwarding and the access log know about it,
// kept in res.locals under one key (nothing is attached to node's request objects). It owns the request's one
// `close` listener on the response, and from it the one end-of-response hook (`onEnd`, for everything to do once the
// response is over, `aborted` already settled): it is also the one abort path, for everything that must stop when
// the client leaves (the attempt in flight, the relay). What reports on the finished request (the access log, the
// server span) waits for its usage instead (`onSettled`), which an estimate may take a moment to produce.
import type { Request, Response } from 'express';
import type { Family } from '../../model/families.js';
import type { CompiledRoute, CompiledToken, RoutingTable } from '../../model/routing-table.js';
import type { Usage } from '../../model/usage.js';
import type { ExchangeTrace } from './trace-hooks.js';

export class Exchange {
  readonly id: string;
  /** performance.now() at arrival (ms): a clock read without an allocation, unlike process.hrtime.bigint(). */
  readonly start: number;
  /** The table this request reads from start to end (one snapshot, even if a reload swaps it meanwhile). */
  table: RoutingTable | undefined;
  token: CompiledToken | undefined;
  family: Family | undefined;
  route: CompiledRoute | undefined;
  /** Name of the backend that answered (or was tried last). */
  backend: string | undefined;
  attempts = 0;
  /** True when the client went away before the response finished. */
  aborted = false;
  /** What the request consumed, once recorded (see recordUsage). */
  usage: Usage | undefined;
  /** Set by the tracing feature when tracing is on; undefined otherwise (nothing allocated). */
  trace: ExchangeTrace | undefined;
  readonly #res: Response;
  // Each kind of hook as a chain in registration order, first and last: a hook costs one small object, where an
  // array would grow to 17 slots at its first push.
  #ends: Hook<void> | undefined;
  #lastEnd: Hook<void> | undefined;
  #usageListeners: Hook<Usage> | undefined;
  #lastUsageListener: Hook<Usage> | undefined;
  #unrecorded: (() => Usage | Promise<Usage>) | undefined;
  #settledHooks: Hook<void> | undefined;
  #lastSettledHook: Hook<void> | undefined;
  #settled = false;
  #closed = false;

  constructor(id: string, res: Response, start = performance.now()) {
    this.id = id;
    this.start = start;
    this.#res = res;
    // 'close' comes once; once() would wrap the listener in two more objects.
    res.on('close', () => this.#close());
  }

  /** The response is over (finished, or its connection gone). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Runs fn once when the response is over, after `aborted` is settled; at once when it already is. */
  onEnd(fn: () => void): void {
    if (this.#closed) return fn();
    this.#lastEnd = append(this.#lastEnd, fn);
    this.#ends ??= this.#lastEnd;
  }

  /**
   * Records what the request consumed, once (a second call is ignored), and runs the usage listeners. The usage
   * feature calls it when the response is over. Listeners are separate from onEnd because the order of end hooks
   * follows registration, and a transform that reserves in prepare registers before the usage is known.
   */
  recordUsage(u: Usage): void {
    if (this.usage) return;
    this.usage = u;
    const listeners = this.#usageListeners;
    this.#usageListeners = this.#lastUsageListener = undefined;
    runHooks(listeners, u);
  }

  /** Runs fn with the request's usage when it is recorded; at once when it already is. */
  onUsage(fn: (u: Usage) => void): void {
    if (this.usage) return fn(this.usage);
    this.#lastUsageListener = append(this.#lastUsageListener, fn);
    this.#usageListeners ??= this.#lastUsageListener;
  }

  /**
   * What to record when the response is over and no usage was (the usage feature's estimate). It runs after the end
   * hooks (nothing that must stop when the client leaves waits for it) and before the settled hooks, which so see
   * the request's final usage; when it returns a promise (the tokenizer is loading), they run once it settles.
   */
  whenUnrecorded(fn: () => Usage | Promise<Usage>): void {
    this.#unrecorded = fn;
  }

  /** Runs fn once the response is over and its usage recorded (or found missing); at once when it already is. */
  onSettled(fn: () => void): void {
    if (this.#settled) return fn();
    this.#lastSettledHook = append(this.#lastSettledHook, fn);
    this.#settledHooks ??= this.#lastSettledHook;
  }

  #close(): void {
    this.#closed = true;
    if (!this.#res.writableFinished) {
      this.aborted = true;
    }
    const ends = this.#ends;
    this.#ends = this.#lastEnd = undefined;
    runHooks(ends, undefined);
    const unrecorded = this.#unrecorded;
    this.#unrecorded = undefined;
    if (unrecorded && !this.usage) {
      let usage: Usage | Promise<Usage> | undefined;
      try {
        usage = unrecorded();
      } catch {
        // Runs in the response's 'close' listener, where a throw would end the process: the request goes
        // unrecorded (the settled hooks still run) rather than every request with it.
      }
      if (usage instanceof Promise) {
        usage
          .then(
            (u) => this.recordUsage(u),
            () => undefined, // an estimate that failed records nothing; the settled hooks still run
          )
          .finally(() => this.#settle());
        return;
      }
      if (usage) this.recordUsage(usage);
    }
    this.#settle();
  }

  #settle(): void {
    this.#settled = true;
    const hooks = this.#settledHooks;
    this.#settledHooks = this.#lastSettledHook = undefined;
    runHooks(hooks, undefined);
  }
}

class Hook<A> {
  readonly fn: (a: A) => void;
  next: Hook<A> | undefined;

  constructor(fn: (a: A) => void) {
    this.fn = fn;
  }
}

/** A hook for fn after `last` (the first of a chain when there is none); the new last. */
function append<A>(last: Hook<A> | undefined, fn: (a: A) => void): Hook<A> {
  const hook = new Hook(fn);
  if (last) last.next = hook;
  return hook;
}

function runHooks<A>(first: Hook<A> | undefined, a: A): void {
  for (let h = first; h; h = h.next) h.fn(a);
}

/** An exchange past authentication: its table and token are set. */
export interface Authenticated extends Exchange {
  readonly table: RoutingTable;
  readonly token: CompiledToken;
}

/** An authenticated exchange whose route and family are known. */
export interface Routed extends Authenticated {
  readonly route: CompiledRoute;
  readonly family: Family;
}

const KEY = 'gateway';

export function attachExchange(res: Response, x: Exchange): void {
  res.locals[KEY] = x;
}

export function exchangeOf(res: Response): Exchange {
  return res.locals[KEY] as Exchange;
}

/** The exchange of a request behind the auth middleware (a handler mounted without it is a programming error). */
export function authenticatedOf(res: Response): Authenticated {
  const x = exchangeOf(res);
  if (!x.table || !x.token) throw new Error('handler mounted without authentication');
  return x as Authenticated;
}

/** Narrows once the route and family are set. */
export function routed(x: Authenticated, route: CompiledRoute, family: Family): Routed {
  x.route = route;
  x.family = family;
  return x as Routed;
}

/**
 * True when nobody can receive this request's answer any more: the client left, or the connection was already
 * answered and ended at the protocol level (e.g. a 408 when the upload outlived the request timeout, after
 * which a late body may still arrive). Checked after reading a body, before anything is sent upstream.
 */
export function clientGone(req: Request, res: Response): boolean {
  return res.destroyed || req.socket.destroyed || !req.socket.writable;
}
