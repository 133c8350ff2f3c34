// A request the sampler dropped: nothing is recorded, so nothing is built for it (no attributes, no content, no
// answer observer, no end hook). Its attempts still start a (non-recording) span each, so that the upstream gets a
// traceparent of the gateway's own with the sampled flag off, as W3C Trace Context asks.
import { type Context, SpanKind } from '@opentelemetry/api';
import type { AttemptTrace, ExchangeTrace } from '../../dataplane/exchange/trace-hooks.js';
import { injectParent } from './attempt-span.js';
import type { SpanTools } from './exchange-trace.js';

export class UnsampledTrace implements ExchangeTrace {
  readonly traceId: string;
  readonly exemplarId = undefined;
  readonly #tools: SpanTools;
  readonly #context: Context;

  /** `context` holds the request's non-recording server span. */
  constructor(tools: SpanTools, context: Context, traceId: string) {
    this.#tools = tools;
    this.#context = context;
    this.traceId = traceId;
  }

  attempt(): AttemptTrace {
    const span = this.#tools.tracer.startSpan('attempt', { kind: SpanKind.CLIENT }, this.#context);
    const propagator = this.#tools.propagator;
    return {
      inject: (headers) => injectParent(propagator, span, headers),
      outcome: () => {},
      end: () => span.end(),
    };
  }
}
