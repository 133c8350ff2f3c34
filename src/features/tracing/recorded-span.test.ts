import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { hrTimeToMilliseconds, TraceState } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, InMemorySpanExporter, ParentBasedSampler, type Sampler, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { attributeKey, SHARED_BIT } from './attribute-keys.js';
import { attributeGroup } from './otlp-protobuf.js';
import { RecordedSpan, type SpanSettings, startSpan } from './recorded-span.js';

function settingsWith(sampler: Sampler): { settings: SpanSettings; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  const settings: SpanSettings = {
    sampler,
    processor: new SimpleSpanProcessor({ exporter }),
    resource: resourceFromAttributes({ 'service.name': 'test' }),
    scope: { name: 'model-gateway', version: 'test' },
    encode: undefined,
  };
  return { settings, exporter };
}

const parentBased = new ParentBasedSampler({ root: new AlwaysOnSampler() });

describe('startSpan', () => {
  it('starts a new sampled trace without a parent, and a child in the same trace under it', () => {
    const { settings } = settingsWith(parentBased);
    const server = startSpan(settings, 'POST', SpanKind.SERVER, ROOT_CONTEXT);
    expect(server).toBeInstanceOf(RecordedSpan);
    const sc = server.spanContext();
    expect(sc.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(sc.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(sc.traceFlags).toBe(TraceFlags.SAMPLED);
    expect((server as RecordedSpan).parentSpanContext).toBeUndefined();

    const child = startSpan(settings, 'chat m', SpanKind.CLIENT, trace.setSpan(ROOT_CONTEXT, server)) as RecordedSpan;
    child.setAttribute('a', 1);
    expect(child.spanContext().traceId).toBe(sc.traceId);
    expect(child.spanContext().spanId).not.toBe(sc.spanId);
    expect(child.parentSpanContext?.spanId).toBe(sc.spanId);
    expect(child.attributes).toEqual({ a: 1 });
  });

  it("joins a remote parent's trace and keeps its trace state; follows its decision not to sample", async () => {
    const { settings, exporter } = settingsWith(parentBased);
    const remote = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.SAMPLED, isRemote: true, traceState: new TraceState('v=1') };
    const joined = startSpan(settings, 'POST', SpanKind.SERVER, trace.setSpanContext(ROOT_CONTEXT, remote)) as RecordedSpan;
    expect(joined.spanContext().traceId).toBe(remote.traceId);
    expect(joined.spanContext().traceState?.serialize()).toBe('v=1');
    expect(joined.parentSpanContext?.isRemote).toBe(true);

    const unsampled = startSpan(settings, 'POST', SpanKind.SERVER, trace.setSpanContext(ROOT_CONTEXT, { ...remote, traceFlags: TraceFlags.NONE }));
    expect(unsampled).not.toBeInstanceOf(RecordedSpan);
    expect(unsampled.isRecording()).toBe(false);
    expect(unsampled.spanContext().traceId).toBe(remote.traceId);
    expect(unsampled.spanContext().traceFlags).toBe(TraceFlags.NONE);
    unsampled.setAttribute('x', 1);
    unsampled.end();
    await settings.processor.forceFlush();
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  it('makes no recording span when the sampler drops the trace', () => {
    const { settings } = settingsWith(new AlwaysOffSampler());
    const span = startSpan(settings, 'POST', SpanKind.SERVER, ROOT_CONTEXT);
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('RecordedSpan', () => {
  it('records attributes, events, status and name until it ends; exports once, with times that add up', async () => {
    const { settings, exporter } = settingsWith(parentBased);
    const span = startSpan(settings, 'POST', SpanKind.SERVER, ROOT_CONTEXT) as RecordedSpan;
    span.setAttribute('first', 'a').setAttribute('n', 3).setAttribute('skipped', undefined).setAttributes({ b: true, first: 'overwritten' });
    await new Promise((r) => setTimeout(r, 15));
    span.addEvent('gen_ai.first_token', { 'gen_ai.response.time_to_first_chunk': 0.015 });
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'failed' });
    span.setStatus({ code: SpanStatusCode.UNSET });
    span.updateName('POST /v1/chat/completions');
    expect(span.ended).toBe(false);
    span.end();
    span.end();
    span.setAttribute('late', 1);
    span.addEvent('late');
    span.updateName('late');
    span.setStatus({ code: SpanStatusCode.OK });
    await settings.processor.forceFlush();

    const [exported, ...more] = exporter.getFinishedSpans();
    expect(more).toHaveLength(0);
    expect(exported).toBe(span);
    expect(span.ended).toBe(true);
    expect(span.isRecording()).toBe(false);
    expect(span.name).toBe('POST /v1/chat/completions');
    expect(span.attributes).toEqual({ first: 'overwritten', n: 3, b: true });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'failed' });
    expect(span.events.map((e) => e.name)).toEqual(['gen_ai.first_token']);
    expect(span.resource.attributes['service.name']).toBe('test');
    expect(span.instrumentationScope.name).toBe('model-gateway');

    const start = hrTimeToMilliseconds(span.startTime);
    const end = hrTimeToMilliseconds(span.endTime);
    const event = hrTimeToMilliseconds(span.events[0]!.time);
    expect(Math.abs(start - Date.now())).toBeLessThan(5_000);
    expect(end - start).toBeGreaterThanOrEqual(14);
    expect(hrTimeToMilliseconds(span.duration)).toBeCloseTo(end - start, 3);
    expect(event).toBeGreaterThanOrEqual(start + 14);
    expect(event).toBeLessThanOrEqual(end);
  });

  it('records exceptions as events and links as given, as the API asks of any span', () => {
    const { settings } = settingsWith(parentBased);
    const span = startSpan(settings, 'x', SpanKind.INTERNAL, ROOT_CONTEXT) as RecordedSpan;
    span.recordException(Object.assign(new Error('upstream reset'), { code: 'ECONNRESET' }));
    span.recordException('plain text');
    const other = { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: TraceFlags.SAMPLED };
    span.addLinks([{ context: other }, { context: other, attributes: { why: 'retry' } }]);
    expect(span.events.map((e) => e.attributes)).toEqual([
      { 'exception.type': 'Error', 'exception.message': 'upstream reset' },
      { 'exception.type': '', 'exception.message': 'plain text' },
    ]);
    expect(span.links).toHaveLength(2);
    expect(span.links[1]!.attributes).toEqual({ why: 'retry' });
  });

  it('an OK status is final, as in the SDK', () => {
    const { settings } = settingsWith(parentBased);
    const span = startSpan(settings, 'x', SpanKind.INTERNAL, ROOT_CONTEXT);
    span.setStatus({ code: SpanStatusCode.OK });
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'no' });
    expect((span as RecordedSpan).status.code).toBe(SpanStatusCode.OK);
  });
});

describe('attribute groups', () => {
  it('reads a group as its attributes; one set alone wins over a group, a later group over an earlier one', () => {
    const { settings } = settingsWith(parentBased);
    const span = startSpan(settings, 'x', SpanKind.SERVER, ROOT_CONTEXT) as RecordedSpan;
    span.setAttribute('status', 200);
    span.setAttributeGroup(attributeGroup({ model: 'a', status: 500, group: 'g' }));
    span.setAttributeGroup(attributeGroup({ group: 'h', backend: 'b' }));
    span.setAttribute('model', 'alone');
    expect(span.attributes).toEqual({ status: 200, model: 'alone', group: 'h', backend: 'b' });
  });

  it('keeps the same rules for keys past the 31 with a bit of their own (compared by name then)', () => {
    for (let i = 0; i < 40; i++) attributeKey(`filler.${i}`);
    const late = attributeKey('late.key');
    expect(late.bit).toBe(SHARED_BIT);
    const { settings } = settingsWith(parentBased);
    const span = startSpan(settings, 'x', SpanKind.SERVER, ROOT_CONTEXT) as RecordedSpan;
    span.setAttribute('late.other', 1);
    span.setAttributeGroup(attributeGroup({ 'late.key': 'group', 'late.third': 3 }));
    span.setAttribute('late.key', 'first');
    span.setAttribute('late.key', 'second');
    expect(span.attributeKeys.map((k) => k.name)).toEqual(['late.other', 'late.key']);
    expect(span.attributes).toEqual({ 'late.third': 3, 'late.other': 1, 'late.key': 'second' });
  });
});
