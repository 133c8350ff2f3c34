// A process-wide budget of request-body bytes held in memory. Each request may buffer up to its own limit
// (20 MiB JSON, 100 MiB multipart) before its model is even checked, so without a shared cap N concurrent
// uploads from any valid key make the process hold N × 100 MiB and the pod is OOM-killed, taking every open
// stream with it. Bytes are reserved as they are read; a request that would go over the budget is refused
// (503 + retry-after, which the OpenAI SDKs retry) and what it had reserved is given back at once. Everything
// a request reserved is released when its response closes: finished, failed, answered with an error or cut by
// a client that went away. Pure bookkeeping: no I/O, no timers. Answers are not counted because none is ever held
// whole: the gateway rewrites them (sealed ids, masked keys) as they stream, a few bytes at a time (proxy/*-scan.ts).
import { freemem, totalmem } from 'node:os';
import type { Exchange } from '../exchange/exchange.js';

const MiB = 1024 * 1024;
/** Upper bound of the derived default: five 100 MiB uploads, or 25 maximal JSON bodies, at once. */
export const MAX_DEFAULT_BUFFERED_BYTES = 512 * MiB;
/** Lower bound of the derived default, so a tiny container still admits one maximal JSON body. */
export const MIN_DEFAULT_BUFFERED_BYTES = 32 * MiB;

/**
 * The default budget for a process with `memoryBytes` of memory (the container's limit): a quarter of it, between
 * 32 MiB and 512 MiB. A quarter because the bytes counted are only the raw bodies and their rewritten copies:
 * parsing adds transient copies (a multipart form's file parts, a JSON body's parsed object on the V8 heap), and
 * the process itself needs its baseline (Node and its modules) and the heap of everything else in flight. Request bodies live
 * outside the V8 heap (Buffers), so the heap limit says nothing about them; the cgroup limit is what kills the pod.
 */
export function defaultBufferedBudget(memoryBytes: number): number {
  return Math.min(MAX_DEFAULT_BUFFERED_BYTES, Math.max(MIN_DEFAULT_BUFFERED_BYTES, Math.floor(memoryBytes / 4)));
}

/** The memory this process may use: the cgroup limit when there is one, else the machine's memory. */
export function processMemoryLimit(): number {
  const total = totalmem();
  // Without a limit Node reports 0 (or, on some cgroup setups, 2^64); either way the machine's memory is the bound.
  const constrained = typeof process.constrainedMemory === 'function' ? process.constrainedMemory() : 0;
  return constrained > 0 && constrained < total ? constrained : Math.max(total, freemem());
}

export class BodyBudget {
  readonly limit: number;
  #used = 0;

  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit <= 0) throw new Error('the buffered body budget must be a positive integer');
    this.limit = limit;
  }

  /** Bytes reserved right now by requests in flight. */
  get used(): number {
    return this.#used;
  }

  /** True when `bytes` more fit now (a cheap early refusal of a declared Content-Length). */
  fits(bytes: number): boolean {
    return this.#used + bytes <= this.limit;
  }

  /**
   * One request's share, released (once) when its response is over: finished, errored, or its connection gone
   * (client abort, drain cut). A request whose response is already over can reserve nothing.
   */
  open(exchange: Pick<Exchange, 'onEnd'>): BodyReservation {
    const r = new BodyReservation(this);
    exchange.onEnd(() => r.release());
    return r;
  }

  /** @internal */
  take(bytes: number, force: boolean): boolean {
    if (!force && this.#used + bytes > this.limit) return false;
    this.#used += bytes;
    return true;
  }

  /** @internal */
  give(bytes: number): void {
    this.#used -= bytes;
  }
}

export class BodyReservation {
  readonly #budget: BodyBudget;
  #held = 0;
  #released = false;

  constructor(budget: BodyBudget) {
    this.#budget = budget;
  }

  /** Bytes this request holds. */
  get held(): number {
    return this.#held;
  }

  /** Whether `bytes` more would fit now. */
  fits(bytes: number): boolean {
    return !this.#released && (this.#alone() || this.#budget.fits(bytes));
  }

  /**
   * Reserves bytes being read; false (nothing reserved) when they do not fit or the request has ended. A request
   * holding the whole budget's use on its own may always go on, so a budget set below the per-request limit
   * still admits one maximal body at a time instead of refusing it forever.
   */
  tryReserve(bytes: number): boolean {
    if (this.#released || !this.#budget.take(bytes, this.#alone())) return false;
    this.#held += bytes;
    return true;
  }

  /**
   * Counts a copy derived from a body already admitted (a re-serialised JSON body, a re-encoded form). It may go
   * over the budget: refusing a request whose body was already read would waste the work, and new bodies are
   * refused while the budget is over.
   */
  add(bytes: number): void {
    if (this.#released) return;
    this.#budget.take(bytes, true);
    this.#held += bytes;
  }

  #alone(): boolean {
    return this.#budget.used === this.#held;
  }

  /** Gives back everything this request holds; idempotent, and nothing is reserved afterwards. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#budget.give(this.#held);
    this.#held = 0;
  }
}
