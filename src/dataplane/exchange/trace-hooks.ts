// What the data plane tells a tracer about one exchange, without knowing which tracer it is: the tracing feature
// (features/tracing/) sets `Exchange.trace` when it is on, and forwarding reports each upstream attempt through
// it. When tracing is off the field stays undefined and the request path allocates nothing for it.
import type { CompiledBackend } from '../../model/routing-table.js';

export interface ExchangeTrace {
  /** The trace this request belongs to (lowercase hex), for the access log. */
  readonly traceId: string;
  /** The trace id when this request's trace is exported (sampled), else undefined: for metric exemplars. */
  readonly exemplarId: string | undefined;
  /**
   * An upstream attempt starts (n counts from 1); its trace lasts until the attempt's answer is relayed or dropped.
   * `body` is the request body sent (read only when the operator opted in to recording content).
   */
  attempt(backend: CompiledBackend, n: number, path: string, body: Buffer | undefined): AttemptTrace;
}

export interface AttemptTrace {
  /** Sets the propagation headers (W3C traceparent, tracestate) on the upstream request's headers. */
  inject(headers: Record<string, string | string[]>): void;
  /** The attempt's outcome as the failover loop saw it: a response status, or a failure kind (outcomeLabel). */
  outcome(status: number | undefined, label: string): void;
  /** The attempt is over: `failedOver` when another attempt follows, `error` when its body failed mid-way. */
  end(o?: { failedOver?: boolean; error?: unknown }): void;
}
