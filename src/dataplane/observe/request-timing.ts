// Where a proxied request's time goes: the upstream's share (from sending each attempt until its response
// headers, or its failure, summed over attempts) and the gateway's own share (everything else since the request
// arrived). Feeds the Server-Timing header and the model_gateway_overhead_seconds histogram, so operators see
// the gateway's overhead in production and not only in a benchmark.

export class RequestTiming {
  readonly #start: number;
  #upstreamMs = 0;
  #sentAt: number | undefined;

  /** `start`: performance.now() when the request arrived. */
  constructor(start: number) {
    this.#start = start;
  }

  /** An attempt is being sent upstream. */
  sent(now: number = performance.now()): void {
    this.#sentAt = now;
  }

  /** The attempt in flight got its response headers, or failed. */
  answered(now: number = performance.now()): void {
    if (this.#sentAt === undefined) return;
    this.#upstreamMs += now - this.#sentAt;
    this.#sentAt = undefined;
  }

  upstreamMs(): number {
    return this.#upstreamMs;
  }

  /** Time since arrival that was not spent waiting for the upstream, up to `now`. */
  gatewayMs(now: number = performance.now()): number {
    return Math.max(0, now - this.#start - this.#upstreamMs);
  }
}

/** The Server-Timing header value (W3C Server-Timing, durations in milliseconds). */
export function serverTiming(gatewayMs: number, upstreamMs: number): string {
  return `gateway;dur=${gatewayMs.toFixed(3)}, upstream;dur=${upstreamMs.toFixed(3)}`;
}
