import { type Attributes, type Link, ROOT_CONTEXT, type SpanContext, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, type ReadableSpan, type SpanProcessor, type TimedEvent } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { ExportTraceServiceRequest } from '../../../test/fakes/otlp-receiver.js';
import { attributeKey, SHARED_BIT } from './attribute-keys.js';
import { attributeGroup, encodeSpan, encodeTraceRequest } from './otlp-protobuf.js';
import { type RecordedSpan, startSpan } from './recorded-span.js';

/** Decoded with the official definitions, every field shown (proto3 leaves zeros out; the SDK writes some). */
function decoded(bytes: Uint8Array): Record<string, unknown> {
  const message = ExportTraceServiceRequest.decode(bytes);
  return ExportTraceServiceRequest.toObject(message, { longs: String, enums: Number, bytes: String, defaults: true, arrays: true });
}

const resourceA = resourceFromAttributes({ 'service.name': 'model-gateway', 'service.version': '1.2.3', 'host.cpus': 2 });
const resourceB = resourceFromAttributes({ 'service.name': 'other', tags: ['a', 'b'] });
const scopeA = { name: 'model-gateway', version: '1.2.3' };
const scopeB = { name: 'other-scope' };

let seq = 0;
function hex(bytes: number): string {
  seq++;
  return `${seq.toString(16).padStart(4, '0')}a1b2c3d4e5f60718293a4b5c6d7e8f90`.slice(0, bytes * 2);
}

function spanOf(o: {
  attributes?: Attributes;
  events?: TimedEvent[];
  links?: Link[];
  parent?: SpanContext;
  traceState?: string;
  kind?: SpanKind;
  status?: { code: SpanStatusCode; message?: string };
  resource?: typeof resourceA;
  scope?: { name: string; version?: string };
  name?: string;
  start?: [number, number];
  dropped?: number;
}): ReadableSpan {
  const context: SpanContext = {
    traceId: hex(16),
    spanId: hex(8),
    traceFlags: TraceFlags.SAMPLED,
    traceState: o.traceState === undefined ? undefined : new TraceState(o.traceState),
  };
  const start = o.start ?? [1_764_190_000, 123_456_789];
  return {
    name: o.name ?? 'chat gpt-4o',
    kind: o.kind ?? SpanKind.CLIENT,
    spanContext: () => context,
    parentSpanContext: o.parent,
    startTime: start,
    endTime: [start[0] + 1, 999_999_999],
    status: o.status ?? { code: SpanStatusCode.UNSET },
    attributes: o.attributes ?? {},
    links: o.links ?? [],
    events: o.events ?? [],
    duration: [1, 0],
    ended: true,
    resource: o.resource ?? resourceA,
    instrumentationScope: o.scope ?? scopeA,
    droppedAttributesCount: o.dropped ?? 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

function expectSameAsSdk(spans: ReadableSpan[]): Record<string, unknown> {
  const ours = encodeTraceRequest(spans);
  const sdk = ProtobufTraceSerializer.serializeRequest(spans)!;
  const mine = decoded(ours);
  expect(mine).toEqual(decoded(sdk));
  return mine;
}

describe('encodeTraceRequest', () => {
  it('encodes what the SDK encodes: ids, names, kinds, times, status, flags and every attribute value type', () => {
    const got = expectSameAsSdk([
      spanOf({
        kind: SpanKind.SERVER,
        name: 'POST /v1/chat/completions',
        attributes: {
          'http.request.method': 'POST',
          'url.path': '/v1/chat/completions',
          'http.response.status_code': 200,
          'gen_ai.usage.input_tokens': 0,
          big: 2 ** 53 - 1,
          large: 2 ** 40 + 7,
          negative: -1,
          'very.negative': -(2 ** 40) - 3,
          edge: 127,
          edge2: 128,
          'gen_ai.response.time_to_first_chunk': 0.0123,
          'minus.half': -0.5,
          'model_gateway.client_aborted': true,
          off: false,
          unicode: 'café — 模型 🚀',
          empty: '',
          strings: ['a', 'ü', ''],
          numbers: [1, 2.5, -3],
          bools: [true, false],
          bytes: new Uint8Array([0, 1, 255]),
          nested: { a: 1, b: 'two', c: [true] },
        } as unknown as Attributes,
        status: { code: SpanStatusCode.ERROR, message: 'failed over: 503' },
      }),
      spanOf({ kind: SpanKind.INTERNAL, status: { code: SpanStatusCode.OK } }),
      spanOf({ kind: SpanKind.PRODUCER, dropped: 3 }),
    ]);
    const spans = (got.resourceSpans as { scopeSpans: { spans: { attributes: unknown[] }[] }[] }[])[0]!.scopeSpans[0]!.spans;
    expect(spans).toHaveLength(3);
    expect(spans[0]!.attributes).toHaveLength(21);
  });

  it('encodes parents (local and remote), trace state, events with attributes and links as the SDK does', () => {
    const remote: SpanContext = { traceId: hex(16), spanId: hex(8), traceFlags: TraceFlags.SAMPLED, isRemote: true };
    const local: SpanContext = { traceId: hex(16), spanId: hex(8), traceFlags: TraceFlags.NONE };
    expectSameAsSdk([
      spanOf({ parent: remote, traceState: 'vendor=abc,other=x-y' }),
      spanOf({
        parent: local,
        events: [
          { name: 'gen_ai.first_token', time: [1_764_190_000, 500_000_000], attributes: { 'gen_ai.response.time_to_first_chunk': 0.25 } },
          { name: 'plain', time: [1_764_190_001, 1] },
        ],
        links: [{ context: { ...remote, traceState: new TraceState('k=v') }, attributes: { why: 'retry' } }, { context: local }],
      }),
    ]);
  });

  it('writes times to the nanosecond, past 2^53 nanoseconds', () => {
    const times: [number, number][] = [
      [0, 0],
      [1, 1],
      [4_294_967_295, 999_999_999],
      [1_764_190_123, 456_789_012],
      [2_147_483_648, 5],
    ];
    const got = expectSameAsSdk(times.map((start) => spanOf({ start })));
    const spans = (got.resourceSpans as { scopeSpans: { spans: { startTimeUnixNano: string }[] }[] }[])[0]!.scopeSpans[0]!.spans;
    expect(spans.map((s) => s.startTimeUnixNano)).toEqual(times.map(([s, ns]) => (BigInt(s) * 1_000_000_000n + BigInt(ns)).toString()));
  });

  it('lengths of one, two and three bytes: long strings, and a batch large enough to move its own messages', () => {
    const long = 'x'.repeat(200);
    const longer = 'é'.repeat(20_000); // 40,000 bytes: a three-byte length
    const spans = Array.from({ length: 300 }, (_, i) => spanOf({ attributes: { i, long, ...(i % 100 === 0 ? { longer } : {}) } }));
    const got = expectSameAsSdk(spans);
    const decodedSpans = (got.resourceSpans as { scopeSpans: { spans: unknown[] }[] }[])[0]!.scopeSpans[0]!.spans;
    expect(decodedSpans).toHaveLength(300);
  });

  it('groups spans by resource and by instrumentation scope, in the order they first appear', () => {
    const got = expectSameAsSdk([
      spanOf({ resource: resourceA, scope: scopeA, name: 'a1' }),
      spanOf({ resource: resourceB, scope: scopeA, name: 'b1' }),
      spanOf({ resource: resourceA, scope: scopeB, name: 'a2' }),
      spanOf({ resource: resourceA, scope: scopeA, name: 'a3' }),
    ]);
    const names = (got.resourceSpans as { scopeSpans: { spans: { name: string }[] }[] }[]).map((rs) => rs.scopeSpans.map((ss) => ss.spans.map((s) => s.name)));
    expect(names).toEqual([[['a1', 'a3'], ['a2']], [['b1']]]);
  });

  it('an empty batch is an empty request', () => {
    expect(encodeTraceRequest([])).toHaveLength(0);
    expect(decoded(encodeTraceRequest([]))).toEqual({ resourceSpans: [] });
  });

  it('writes the same bytes when the attributes repeat (copied from its cache of encoded pairs) as the first time', () => {
    const batch = () => [
      spanOf({ attributes: { method: 'POST', model: 'gpt-4o', status: 200, ok: true, ratio: 0.5, id: `req-${seq}` } }),
      spanOf({ attributes: { method: 'POST', model: 'gpt-4o', status: 200, ok: true, ratio: 0.5, long: 'é'.repeat(300) } }),
    ];
    const first = decoded(encodeTraceRequest(batch()));
    for (let i = 0; i < 3; i++) {
      const again = expectSameAsSdk(batch());
      const attrs = (d: Record<string, unknown>) =>
        (d.resourceSpans as { scopeSpans: { spans: { attributes: unknown[] }[] }[] }[])[0]!.scopeSpans[0]!.spans.map((sp) => sp.attributes.slice(0, 5));
      expect(attrs(again)).toEqual(attrs(first));
    }
  });

  it('copies a cached pair under any field: an event attribute after the same span attribute, and the reverse', () => {
    const batch = () => [
      spanOf({
        attributes: { 'shared.pair': 0.25 },
        events: [{ name: 'e', time: [1_764_190_000, 5], attributes: { 'shared.pair': 0.25, 'event.first': 'x' } }],
      }),
      spanOf({ attributes: { 'event.first': 'x' } }),
    ];
    for (let i = 0; i < 3; i++) {
      const got = expectSameAsSdk(batch());
      const spans = (got.resourceSpans as { scopeSpans: { spans: { events: { attributes: { key: string }[] }[] }[] }[] }[])[0]!.scopeSpans[0]!.spans;
      expect(spans[0]!.events[0]!.attributes.map((a) => a.key)).toEqual(['shared.pair', 'event.first']);
    }
  });

  it('hides a group attribute by name for keys past the 31 with a bit of their own', () => {
    for (let i = 0; i < 40; i++) attributeKey(`filler.${i}`);
    const processor: SpanProcessor = { onStart() {}, onEnd() {}, forceFlush: async () => {}, shutdown: async () => {} };
    const settings = { sampler: new AlwaysOnSampler(), processor, resource: resourceA, scope: scopeA, encode: undefined };
    const span = startSpan(settings, 'x', SpanKind.SERVER, ROOT_CONTEXT) as RecordedSpan;
    span.setAttributeGroup(attributeGroup({ 'late.key': 'group', 'late.third': 3 }));
    span.setAttribute('late.key', 'alone');
    expect(attributeKey('late.key').bit).toBe(SHARED_BIT);
    span.end();
    const got = expectSameAsSdk([span as unknown as ReadableSpan]);
    const list = (got.resourceSpans as { scopeSpans: { spans: { attributes: { key: string }[] }[] }[] }[])[0]!.scopeSpans[0]!.spans;
    expect(list[0]!.attributes.map((a) => a.key)).toEqual(['late.third', 'late.key']);
  });

  it("encodes the gateway's own spans (attributes kept as lists, or encoded as they end) as the SDK encodes them", () => {
    const sdkBytes: Uint8Array[] = [];
    const processor: SpanProcessor = { onStart() {}, onEnd() {}, forceFlush: async () => {}, shutdown: async () => {} };
    const base = { sampler: new AlwaysOnSampler(), processor, resource: resourceA, scope: scopeA };
    for (const encode of [undefined, (s: ReadableSpan) => (sdkBytes.push(ProtobufTraceSerializer.serializeRequest([s])!), encodeSpan(s))]) {
      const settings = { ...base, encode };
      const server = startSpan(settings, 'POST', SpanKind.SERVER, ROOT_CONTEXT) as RecordedSpan;
      server.setAttribute('http.request.method', 'POST').setAttribute('http.response.status_code', 200).setAttribute('gen_ai.usage.input_tokens', 7);
      // Groups: copied whole, or attribute by attribute where a list or a later group hides one of theirs.
      server.setAttributeGroup(attributeGroup({ 'model_gateway.group': 'team-a', 'model_gateway.token.name': 'ci' }));
      server.setAttributeGroup(attributeGroup({ 'gen_ai.request.model': 'm', 'http.response.status_code': 500, 'model_gateway.model': 'm' }));
      server.setAttributeGroup(attributeGroup({ 'model_gateway.model': 'public', 'server.port': 8080 }));
      const attempt = startSpan(settings, 'chat m', SpanKind.CLIENT, trace.setSpan(ROOT_CONTEXT, server));
      attempt.setAttribute('model_gateway.attempt', 1).setAttribute('server.address', '127.0.0.1').setAttribute('model_gateway.attempt', 2);
      attempt.addEvent('gen_ai.first_token');
      attempt.setStatus({ code: SpanStatusCode.ERROR, message: 'failed over: 503' });
      attempt.end();
      server.end();
      // A span under the client's remote parent: its trace and parent ids are read from the hex.
      const remote = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true };
      const joined = startSpan(settings, 'POST', SpanKind.SERVER, trace.setSpanContext(ROOT_CONTEXT, remote));
      joined.end();
      const spans = [attempt, server, joined] as unknown as ReadableSpan[];
      const got = encode ? decoded(encodeTraceRequest(spans)) : expectSameAsSdk(spans);
      const list = (got.resourceSpans as { scopeSpans: { spans: { attributes: { key: string }[] }[] }[] }[])[0]!.scopeSpans[0]!.spans;
      expect(list[0]!.attributes.map((a) => a.key)).toEqual(['model_gateway.attempt', 'server.address']);
      expect(list[1]!.attributes.map((a) => a.key)).toEqual([
        'model_gateway.group',
        'model_gateway.token.name',
        'gen_ai.request.model',
        'model_gateway.model',
        'server.port',
        'http.request.method',
        'http.response.status_code',
        'gen_ai.usage.input_tokens',
      ]);
      expect(list[2]).toMatchObject({
        traceId: Buffer.from(remote.traceId, 'hex').toString('base64'),
        parentSpanId: Buffer.from(remote.spanId, 'hex').toString('base64'),
      });
      if (encode) {
        // Encoded as they ended: the SDK's encoding of each, made at that moment, holds the same span.
        const sdkSpans = sdkBytes.map((b) => (decoded(b).resourceSpans as { scopeSpans: { spans: unknown[] }[] }[])[0]!.scopeSpans[0]!.spans[0]);
        expect(list).toEqual(sdkSpans);
        expect((attempt as unknown as { attributes: object }).attributes).toEqual({});
      }
    }
  });
});
