// What becomes of the spans sent to the collector, for the operator: counters of spans exported and failed, and a
// warning when exports fail, at most one line per window with the count since the last one (a collector that
// refuses every batch would otherwise fill the log, or, unreported, stay invisible). The counts come from the
// results the SDK's exporter gives its BatchSpanProcessor (any SpanExporter), wrapped here. The SDK's `diag`
// logger is not registered: it is global to the process, and the gateway registers nothing globally (tracing.ts).
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../../observability/logger.js';

/** At most one warning line per this many milliseconds. */
const FAILURE_LOG_WINDOW_MS = 30_000;

interface Sinks {
  readonly logger: Logger;
  readonly exported: Counter;
  readonly failed: Counter;
}

export class ExportReport {
  readonly #windowMs: number;
  #sinks: Sinks | undefined;
  /** Failures since the last line: spans, batches, and the last error's description. */
  #pending = { spans: 0, batches: 0, error: '' };
  /** While set, a line was written less than a window ago; it writes what piled up since, when the window ends. */
  #window: NodeJS.Timeout | undefined;

  constructor(windowMs = FAILURE_LOG_WINDOW_MS) {
    this.#windowMs = windowMs;
  }

  /** Where the report goes: the gateway's log and metrics registry (until then, results are not counted). */
  attach(logger: Logger, registry: Registry): void {
    const counter = (name: string, help: string) =>
      (registry.getSingleMetric(name) as Counter | undefined) ?? new Counter({ name, help, registers: [registry] });
    this.#sinks = {
      logger,
      exported: counter('model_gateway_trace_spans_exported_total', 'Spans the OTLP collector accepted.'),
      failed: counter('model_gateway_trace_spans_failed_total', 'Spans dropped because their export failed (after the retries).'),
    };
  }

  /** The SDK's exporter, its results counted. */
  wrap(exporter: SpanExporter): SpanExporter {
    return {
      export: (spans: ReadableSpan[], done: (result: ExportResult) => void) =>
        exporter.export(spans, (result) => {
          if (result.code === ExportResultCode.SUCCESS) this.#sinks?.exported.inc(spans.length);
          else this.#failed(spans.length, result.error);
          done(result);
        }),
      shutdown: () => exporter.shutdown(),
      ...(exporter.forceFlush ? { forceFlush: () => exporter.forceFlush!() } : {}),
    };
  }

  /** Writes what is still pending (at shutdown). */
  flush(): void {
    clearTimeout(this.#window);
    this.#window = undefined;
    this.#write();
  }

  #failed(spans: number, error: Error | undefined): void {
    const sinks = this.#sinks;
    if (!sinks) return;
    sinks.failed.inc(spans);
    this.#pending.spans += spans;
    this.#pending.batches++;
    this.#pending.error = describe(error);
    if (this.#window) return;
    this.#write();
    this.#startWindow();
  }

  #startWindow(): void {
    this.#window = setTimeout(() => {
      this.#window = undefined;
      // Failures during the window: written now, and a new window starts.
      if (this.#pending.batches > 0) {
        this.#write();
        this.#startWindow();
      }
    }, this.#windowMs);
    this.#window.unref();
  }

  #write(): void {
    const p = this.#pending;
    if (p.batches === 0 || !this.#sinks) return;
    this.#sinks.logger.warn(
      { failedSpans: p.spans, failedBatches: p.batches, error: p.error, windowSeconds: this.#windowMs / 1000 },
      'trace export failed: spans dropped (counted in model_gateway_trace_spans_failed_total)',
    );
    this.#pending = { spans: 0, batches: 0, error: '' };
  }
}

/** An export error in a few words: its message's first line (an HTTP status text, a network error), never a body. */
function describe(error: Error | undefined): string {
  if (!error) return 'unknown';
  const code = (error as { code?: unknown }).code;
  const first = (error.message.split('\n')[0] ?? '').slice(0, 200);
  return typeof code === 'number' || typeof code === 'string' ? `${first} (${code})` : first;
}
