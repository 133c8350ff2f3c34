// One upstream attempt of a sampled request: its client span, what the failover loop and the answer tell it, and
// the W3C headers that make the upstream's spans its children.
import { defaultTextMapSetter, ROOT_CONTEXT, type Span, SpanStatusCode, type TextMapPropagator, trace } from '@opentelemetry/api';
import type { AttemptTrace } from '../../dataplane/exchange/trace-hooks.js';
import type { Usage } from '../../model/usage.js';
import type { InputContent } from './content.js';
import { A } from './span-names.js';

export class AttemptSpan implements AttemptTrace {
  readonly #span: Span;
  readonly #propagator: TextMapPropagator;
  /** performance.now() as the attempt started: its request is sent next. */
  readonly #start = performance.now();
  #label: string | undefined;
  #ended = false;

  constructor(span: Span, propagator: TextMapPropagator) {
    this.#span = span;
    this.#propagator = propagator;
  }

  inject(headers: Record<string, string | string[]>): void {
    injectParent(this.#propagator, this.#span, headers);
  }

  outcome(status: number | undefined, label: string): void {
    this.#label = label;
    const span = this.#span;
    span.setAttribute(A.outcome, label);
    if (status !== undefined) span.setAttribute(A.status, status);
    // HTTP client conventions: a 4xx is an error of the client span too (only server spans leave it unset).
    if (status === undefined || status >= 400) {
      span.setAttribute(A.errorType, status === undefined ? label : String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }

  firstChunk(now: number): void {
    this.#span.setAttribute(A.timeToFirstChunk, (now - this.#start) / 1e3);
  }

  answered(model: string): void {
    this.#span.setAttribute(A.responseModel, model);
  }

  usage(u: Usage): void {
    // After the attempt ended, an attribute set now would not be exported: usage settles as the body ends, first.
    if (!this.#ended) setUsage(this.#span, u);
  }

  output(text: string): void {
    this.#span.setAttribute(A.outputMessages, text);
  }

  end(o: { failedOver?: boolean; error?: unknown } = {}): void {
    if (this.#ended) return;
    this.#ended = true;
    const span = this.#span;
    if (o.failedOver) {
      span.setAttribute(A.failoverReason, this.#label ?? 'unknown');
      span.setStatus({ code: SpanStatusCode.ERROR, message: `failed over: ${this.#label ?? 'unknown'}` });
    } else if (o.error !== undefined) {
      // A fixed description: an error's message may quote an upstream URL.
      const code = (o.error as { code?: unknown } | null)?.code;
      span.setAttribute(A.errorType, typeof code === 'string' ? code : 'body_failed');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the upstream body failed mid-way' });
    }
    span.end();
  }
}

/**
 * W3C traceparent/tracestate naming `span` as the upstream's parent, by the SDK's propagator. The client's own were
 * copied with its headers: its tracestate goes when the span has none (the propagator writes only what it has).
 */
export function injectParent(propagator: TextMapPropagator, span: Span, headers: Record<string, string | string[]>): void {
  delete headers.tracestate;
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
}

export function setInput(span: Span, input: InputContent): void {
  if (input.messages !== undefined) span.setAttribute(A.inputMessages, input.messages);
  if (input.systemInstructions !== undefined) span.setAttribute(A.systemInstructions, input.systemInstructions);
}

/** The request's usage as the usage feature recorded it (the upstream's counts, or the gateway's estimate). */
export function setUsage(span: Span, usage: Usage): void {
  span.setAttribute(A.inputTokens, usage.inputTokens);
  span.setAttribute(A.outputTokens, usage.outputTokens);
  if (usage.estimated) span.setAttribute(A.usageEstimated, true);
  // The settled usage carries its cost (a number in the currency's units); an unknown cost is left off, never 0.
  if (usage.cost?.known) span.setAttributes({ [A.cost]: usage.cost.micros / 1e6, [A.costCurrency]: usage.cost.currency });
}
