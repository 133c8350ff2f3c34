// One Exchange per request: what the middleware, the handlers, the forwarding and the access log know about it,
// kept in res.locals under one key (nothing is attached to node's request objects). It owns the request's one
// `close` listener on the response, and from it the one end-of-response hook (`onEnd`, for everything to do once the
// response is over, `aborted` already settled): it is also the one abort path, for everything that must stop when
// the client leaves (the attempt in flight, the relay). What reports on the finished request (the access log, the
// server span, limits' settlement, usage metrics) waits for its usage instead (`onSettled`, given the usage), which
// an estimate may take a moment to produce.
import type { Request, Response } from 'express';
import type { Family } from '../../model/families.js';
import type { CompiledBackend, CompiledRoute, CompiledToken, RoutingTable } from '../../model/routing-table.js';
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
  /**
   * Why each attempt that did not give the answer failed, in order, as "backend:reason" (ECONNREFUSED,
   * DEPTH_ZERO_SELF_SIGNED_CERT, timeout, a status that failed over), for the access line; undefined when none did.
   */
  upstreamError: string[] | undefined;
  /** True when the client went away before the response finished. */
  aborted = false;
  /** Set by the tracing feature when tracing is on; undefined otherwise (nothing allocated). */
  trace: ExchangeTrace | undefined;
  readonly #res: Response;
  // Each kind of hook as a chain in registration order, first and last: a hook costs one small object, where an
  // array would grow to 17 slots at its first push.
  #ends: Hook<void> | undefined;
  #lastEnd: Hook<void> | undefined;
  /** What an answer handler returned at the body's end (forwarding reports it). */
  #reported: Usage | undefined;
  #partial: Usage | undefined;
  #estimate: UsageEstimate | undefined;
  /** Read on after the client left, for the usage that comes last; settlement waits for it (bounded by the relay). */
  #readingOn: Promise<void> | undefined;
  #price: ((u: Usage) => Usage) | undefined;
  #settledHooks: Hook<Usage | undefined> | undefined;
  #lastSettledHook: Hook<Usage | undefined> | undefined;
  #settled = false;
  #usage: Usage | undefined;
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

  /** An attempt that was not the answer, as "backend:reason" (the failover loop tells it; never on a first answer). */
  attemptFailed(why: string): void {
    (this.upstreamError ??= []).push(why);
  }

  /**
   * Runs fn once the response is over and the request's usage is final, with that usage (undefined when no feature
   * reads usage, or none could be had); at once when it already is. The usage is what an answer handler returned at
   * the body's end, else the estimate of the call path (`estimateUsage`), which may be asynchronous: nothing that
   * must stop when the client leaves waits for it (that is `onEnd`).
   */
  onSettled(fn: (usage: Usage | undefined) => void): void {
    if (this.#settled) return fn(this.#usage);
    this.#lastSettledHook = append(this.#lastSettledHook, fn);
    this.#settledHooks ??= this.#lastSettledHook;
  }

  /** For forwarding: the usage the answer handlers returned when the body completed (the first report stands). */
  reportUsage(u: Usage): void {
    this.#reported ??= u;
  }

  /** For forwarding: the counts an answer that failed or was left had reported, handed to the estimate. */
  reportPartialUsage(u: Usage): void {
    this.#partial ??= u;
  }

  /** For the call path (handlers/upstream-call.ts): what estimates the usage when none is reported. */
  estimateUsage(estimate: UsageEstimate): void {
    this.#estimate = estimate;
  }

  /**
   * The last step on the final usage before the settled hooks read it, whoever reported or estimated it: the usage
   * feature puts the cost on it at the prices of the backend that answered. One per exchange.
   */
  priceUsage(price: (u: Usage) => Usage): void {
    this.#price = price;
  }

  /**
   * For forwarding, from an end hook: the answer is read on after the client left, for the usage that comes at its
   * end; settlement waits until `done` (which the relay bounds), then takes what was reported or the estimate.
   */
  readOnForUsage(done: Promise<void>): void {
    this.#readingOn = done;
  }

  #close(): void {
    this.#closed = true;
    if (!this.#res.writableFinished) {
      this.aborted = true;
    }
    const ends = this.#ends;
    this.#ends = this.#lastEnd = undefined;
    runHooks(ends, undefined);
    const readingOn = this.#readingOn;
    this.#readingOn = undefined;
    if (readingOn) {
      const settle = () => this.#settleReported();
      void readingOn.then(settle, settle);
    } else this.#settleReported();
  }

  /** Settles with the usage an answer handler reported, else the estimate. */
  #settleReported(): void {
    const estimate = this.#estimate;
    this.#estimate = undefined;
    if (this.#reported || !estimate) return this.#settle(this.#reported);
    let usage: Usage | Promise<Usage | undefined> | undefined;
    try {
      usage = estimate.unreported!(this.#partial);
    } catch {
      // Runs in the response's 'close' listener, where a throw would end the process: the request goes
      // unrecorded (the settled hooks still run) rather than every request with it.
    }
    if (usage instanceof Promise) {
      usage.then(
        (u) => this.#settle(u),
        () => this.#settle(undefined), // an estimate that failed records nothing; the settled hooks still run
      );
      return;
    }
    this.#settle(usage);
  }

  #settle(reported: Usage | undefined): void {
    let usage = reported;
    try {
      if (usage && this.#price) usage = this.#price(usage);
    } catch {
      // A price that cannot be computed leaves the usage unpriced rather than the settled hooks unrun.
    }
    this.#settled = true;
    this.#usage = usage;
    const hooks = this.#settledHooks;
    this.#settledHooks = this.#lastSettledHook = undefined;
    runHooks(hooks, usage);
  }
}

/** What estimates a request's usage (a transform that offers `unreported`). */
export interface UsageEstimate {
  unreported?(partial?: Usage): Usage | undefined | Promise<Usage | undefined>;
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

/** The backend that answered (or was tried last), found by the name the exchange holds; undefined before any. */
export function namedBackend(x: Routed): CompiledBackend | undefined {
  return x.backend === undefined ? undefined : x.route.backends.find((b) => b.name === x.backend);
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
