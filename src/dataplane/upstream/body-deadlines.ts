// The body phase's deadlines of a relayed answer: the route's streamIdle and, for a JSON answer, its total deadline.
import type { UpstreamBody } from './upstream-body.js';

/** Error codes the gateway's own deadlines end a body with (the upstream did not fail: health is not told). */
type DeadlineCode = 'MG_DEADLINE' | 'MG_STREAM_IDLE';

function codedError(code: DeadlineCode): Error {
  return Object.assign(new Error(code === 'MG_DEADLINE' ? 'total deadline reached' : 'upstream body idle'), { code });
}

/**
 * The body phase's deadlines on one timer: silence inside the body longer than idleMs (time during which the body
 * is paused by back-pressure does not count: then the client is the slow one, not the upstream) and, for a JSON
 * answer, the route's total deadline. The relay reports each chunk with touch(), a clock read: no listener and no
 * timer update per chunk. The timer fires only when a deadline may have passed, and is re-armed for what is left.
 */
export class BodyDeadlines {
  readonly #body: UpstreamBody;
  readonly #idleMs: number;
  readonly #totalAt: number | undefined;
  #last: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(body: UpstreamBody, idleMs: number, totalMs: number | undefined) {
    this.#body = body;
    this.#idleMs = idleMs;
    const now = performance.now();
    this.#last = now;
    this.#totalAt = totalMs === undefined ? undefined : now + totalMs;
    this.#arm(now);
  }

  touch(): void {
    this.#last = performance.now();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(now: number): void {
    const idleIn = this.#idleMs > 0 ? this.#last + this.#idleMs - now : Number.POSITIVE_INFINITY;
    const totalIn = this.#totalAt === undefined ? Number.POSITIVE_INFINITY : this.#totalAt - now;
    const delay = Math.min(idleIn, totalIn);
    this.#timer = delay === Number.POSITIVE_INFINITY ? undefined : setTimeout(() => this.#check(), Math.max(0, delay));
  }

  #check(): void {
    const now = performance.now();
    if (this.#totalAt !== undefined && now >= this.#totalAt) return void this.#body.destroy(codedError('MG_DEADLINE'));
    if (this.#idleMs > 0 && now - this.#last >= this.#idleMs) {
      if (!this.#body.paused) return void this.#body.destroy(codedError('MG_STREAM_IDLE'));
      this.#last = now; // paused by the client: the silence is not the upstream's
    }
    this.#arm(now);
  }
}
