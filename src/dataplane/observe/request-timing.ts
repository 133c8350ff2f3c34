// Where a proxied request's time goes: the upstream's share (from sending each attempt until its response
// headers, or its failure, summed over attempts) and the gateway's own share (everything else since the request
// arrived). Feeds the Server-Timing header and the model_gateway_overhead_seconds histogram, so operators see
// the gateway's overhead in production and not only in a benchmark.

export class RequestTiming {
  readonly #start: bigint;
  #upstreamNs = 0n;
  #sentAt: bigint | undefined;

  /** `start`: process.hrtime.bigint() when the request arrived. */
  constructor(start: bigint) {
    this.#start = start;
  }

  /** An attempt is being sent upstream. */
  sent(now: bigint = process.hrtime.bigint()): void {
    this.#sentAt = now;
  }

  /** The attempt in flight got its response headers, or failed. */
  answered(now: bigint = process.hrtime.bigint()): void {
    if (this.#sentAt === undefined) return;
    this.#upstreamNs += now - this.#sentAt;
    this.#sentAt = undefined;
  }

  upstreamMs(): number {
    return Number(this.#upstreamNs) / 1e6;
  }

  /** Time since arrival that was not spent waiting for the upstream, up to `now`. */
  gatewayMs(now: bigint = process.hrtime.bigint()): number {
    const ns = now - this.#start - this.#upstreamNs;
    return ns > 0n ? Number(ns) / 1e6 : 0;
  }
}

/** The Server-Timing header value (W3C Server-Timing, durations in milliseconds). */
export function serverTiming(gatewayMs: number, upstreamMs: number): string {
  return `gateway;dur=${gatewayMs.toFixed(3)}, upstream;dur=${upstreamMs.toFixed(3)}`;
}
