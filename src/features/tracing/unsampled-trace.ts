// A request the sampler dropped: nothing is recorded, so nothing is built for it (no attributes, no content, no
// answer observer, no end hook, no attempt span). Its upstream still gets a traceparent with the sampled flag off, as
// W3C Trace Context asks: every attempt names the request's own non-recording server span as its parent (no span
// of either kind is ever exported, so one id serves them all).
import type { Span, TextMapPropagator } from '@opentelemetry/api';
import type { AttemptTrace, ExchangeTrace } from '../../dataplane/exchange/trace-hooks.js';
import { injectParent } from './attempt-span.js';

export class UnsampledTrace implements ExchangeTrace, AttemptTrace {
  readonly traceId: string;
  readonly exemplarId = undefined;
  readonly #propagator: TextMapPropagator;
  readonly #span: Span;

  /** `span`: the request's server span, not recording. */
  constructor(propagator: TextMapPropagator, span: Span) {
    this.#propagator = propagator;
    this.#span = span;
    this.traceId = span.spanContext().traceId;
  }

  attempt(): AttemptTrace {
    return this;
  }

  inject(headers: Record<string, string | string[]>): void {
    injectParent(this.#propagator, this.#span, headers);
  }

  outcome(): void {}

  end(): void {}
}
