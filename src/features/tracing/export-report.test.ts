import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { ExportResultCode } from '@opentelemetry/core';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { waitUntil } from '../../../test/support/wait.js';
import { ExportReport } from './export-report.js';

describe('ExportReport', () => {
  it('writes what failed during a window when the window ends, then nothing while exports succeed', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        cb();
      },
    });
    const registry = new Registry();
    const report = new ExportReport(100);
    report.attach(pino({}, sink), registry);
    let fail = true;
    const inner: SpanExporter = {
      export: (_spans, done) => done(fail ? { code: ExportResultCode.FAILED, error: new Error('Service Unavailable') } : { code: ExportResultCode.SUCCESS }),
      shutdown: async () => undefined,
    };
    const exporter = report.wrap(inner);
    const batch = (n: number) =>
      exporter.export(
        Array.from({ length: n }, () => ({}) as ReadableSpan),
        () => undefined,
      );

    batch(3);
    batch(2);
    batch(4);
    await waitUntil(() => lines.length === 1, 2_000, 'the first line');
    expect(lines[0]).toMatchObject({ failedSpans: 3, failedBatches: 1, error: 'Service Unavailable' });
    // The other two batches: in one line as the window ends.
    await waitUntil(() => lines.length === 2, 2_000, 'the line at the end of the window');
    expect(lines[1]).toMatchObject({ failedSpans: 6, failedBatches: 2 });
    fail = false;
    batch(5);
    expect(await registry.getSingleMetricAsString('model_gateway_trace_spans_failed_total')).toMatch(/ 9$/m);
    expect(await registry.getSingleMetricAsString('model_gateway_trace_spans_exported_total')).toMatch(/ 5$/m);
    report.flush();
    expect(lines).toHaveLength(2);
  });

  it("counts and reports the spans the batch processor drops because its queue is full (the SDK's own queue_full count)", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        cb();
      },
    });
    const registry = new Registry();
    const report = new ExportReport(60_000);
    report.attach(pino({}, sink), registry);
    // A collector that never answers: the first batch stays in flight, the queue fills, the rest is dropped.
    const stalled: SpanExporter = { export: () => undefined, shutdown: async () => undefined };
    const processor = new BatchSpanProcessor({
      exporter: report.wrap(stalled),
      maxQueueSize: 3,
      maxExportBatchSize: 2,
      scheduledDelayMillis: 60_000,
      selfObsMeterProvider: report.meterProvider,
    });
    const tracer = new TracerProvider({ spanProcessors: [processor] }).getTracer('test');
    for (let i = 0; i < 10; i++) tracer.startSpan(`span ${i}`).end();
    // 2 went to the exporter as a full batch, 3 wait in the queue, 5 were dropped.
    expect(await registry.getSingleMetricAsString('model_gateway_trace_spans_dropped_total')).toMatch(/ 5$/m);
    expect(await registry.getSingleMetricAsString('model_gateway_trace_spans_failed_total')).toMatch(/ 0$/m);
    // One line at once for the first, the others in the line at the window's end (here: the flush).
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, queueFullSpans: 1, msg: expect.stringContaining('model_gateway_trace_spans_dropped_total') });
    report.flush();
    expect(lines[1]).toMatchObject({ queueFullSpans: 4 });
  });
});
