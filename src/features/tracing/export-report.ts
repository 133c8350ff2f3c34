// What becomes of the spans sent to the collector, for the operator: counters of spans exported, failed, and dropped
// because the batch processor's queue was full (a collector slower than the traffic), and a warning when spans are
// lost, at most one line per window with the counts since the last one (a collector that refuses every batch would
// otherwise fill the log, or, unreported, stay invisible). Export counts come from the results the SDK's exporter
// gives its BatchSpanProcessor (any SpanExporter), wrapped here; queue drops from the processor's self-metrics, the
// only place it tells them. The SDK's `diag` logger is not registered: it is global to the process, and the gateway
// registers nothing globally (tracing.ts).
import { type Attributes, createNoopMeter, type Meter, type MeterProvider } from '@opentelemetry/api';
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
  readonly dropped: Counter;
}

/** The attributes the processor counts a span dropped at its full queue with (otel.sdk.processor.span.processed). */
const QUEUE_FULL = 'queue_full';

export class ExportReport {
  readonly #windowMs: number;
  #sinks: Sinks | undefined;
  /** Losses since the last line: failed spans, batches, the last error's description, spans dropped at the queue. */
  #pending = { spans: 0, batches: 0, error: '', dropped: 0 };
  /** Spans the collector's answer to the export being reported rejected (a partial success), told just before it. */
  #rejected = 0;
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
      dropped: counter('model_gateway_trace_spans_dropped_total', 'Spans dropped unsent because the export queue (OTEL_BSP_MAX_QUEUE_SIZE) was full.'),
    };
  }

  /**
   * For the BatchSpanProcessor's selfObsMeterProvider: of its self-metrics only the count of spans dropped at its full
   * queue is read; the rest goes to a no-op meter.
   */
  readonly meterProvider: MeterProvider = {
    getMeter: () => {
      const meter = Object.create(createNoopMeter()) as Meter;
      meter.createCounter = () => ({
        add: (n: number, attributes?: Attributes) => {
          if (attributes?.['error.type'] === QUEUE_FULL) this.#dropped(n);
        },
      });
      return meter;
    },
  };

  /**
   * The collector accepted an export but rejected this many of its spans (OTLP partial success): they count as failed.
   * Told by the exporter as it reads the answer, synchronously before that export's success is reported.
   */
  readonly rejected = (spans: number): void => {
    this.#rejected = spans;
  };

  /** The SDK's exporter, its results counted. */
  wrap(exporter: SpanExporter): SpanExporter {
    return {
      export: (spans: ReadableSpan[], done: (result: ExportResult) => void) =>
        exporter.export(spans, (result) => {
          const rejected = Math.min(this.#rejected, spans.length);
          this.#rejected = 0;
          if (result.code !== ExportResultCode.SUCCESS) this.#failed(spans.length, result.error);
          else {
            this.#sinks?.exported.inc(spans.length - rejected);
            if (rejected > 0) this.#failed(rejected, new Error('rejected by the collector (partial success)'));
          }
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
    this.#report();
  }

  /** The first loss is written at once; those that follow wait for the window's end. */
  #report(): void {
    if (this.#window) return;
    this.#write();
    this.#startWindow();
  }

  #dropped(spans: number): void {
    const sinks = this.#sinks;
    if (!sinks) return;
    sinks.dropped.inc(spans);
    this.#pending.dropped += spans;
    this.#report();
  }

  #startWindow(): void {
    this.#window = setTimeout(() => {
      this.#window = undefined;
      // Failures during the window: written now, and a new window starts.
      if (this.#pending.batches > 0 || this.#pending.dropped > 0) {
        this.#write();
        this.#startWindow();
      }
    }, this.#windowMs);
    this.#window.unref();
  }

  #write(): void {
    const p = this.#pending;
    if ((p.batches === 0 && p.dropped === 0) || !this.#sinks) return;
    const windowSeconds = this.#windowMs / 1000;
    if (p.batches > 0) {
      this.#sinks.logger.warn(
        { failedSpans: p.spans, failedBatches: p.batches, error: p.error, ...(p.dropped > 0 ? { queueFullSpans: p.dropped } : {}), windowSeconds },
        'trace export failed: spans dropped (counted in model_gateway_trace_spans_failed_total)',
      );
    } else {
      this.#sinks.logger.warn(
        { queueFullSpans: p.dropped, windowSeconds },
        'trace export queue full: spans dropped (counted in model_gateway_trace_spans_dropped_total)',
      );
    }
    this.#pending = { spans: 0, batches: 0, error: '', dropped: 0 };
  }
}

/** An export error in a few words: its message's first line (an HTTP status text, a network error), never a body. */
function describe(error: Error | undefined): string {
  if (!error) return 'unknown';
  const code = (error as { code?: unknown }).code;
  const first = (error.message.split('\n')[0] ?? '').slice(0, 200);
  return typeof code === 'number' || typeof code === 'string' ? `${first} (${code})` : first;
}
