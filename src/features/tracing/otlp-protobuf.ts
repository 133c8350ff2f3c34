// Finished spans as an OTLP/protobuf ExportTraceServiceRequest, for the OpenTelemetry SDK's own OTLP/HTTP exporter
// (tracing.ts hands it this serializer in place of the SDK's). Why not the SDK's: with every request sampled its
// encoder was the largest part of tracing's cost; it measures every message first and writes every string a
// character at a time in JavaScript (docs/performance.md). This writes each message once into one growing buffer
// and fixes a nested message's length up after it; it writes short ASCII strings byte by byte and others through
// Buffer's native UTF-8 write, and copies key/value pairs it has written before from a bounded cache.
// Pure but for that cache: spans in, bytes out. Field numbers are opentelemetry-proto's:
// collector/trace/v1/trace_service.proto, trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto.
// The tests decode the output with the official definitions and compare it with the SDK's own serializer's.
import type { AttributeValue, Attributes, HrTime, Link, SpanContext } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import { A } from './span-names.js';

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

const TWO_32 = 2 ** 32;
// Called as a known function rather than as `s.charCodeAt`: the gateway's strings come in many representations
// (literal, concatenated, sliced from a body), and a per-character method load on them went megamorphic: it cost
// more than the rest of the encoder together.
const charCodeAt = String.prototype.charCodeAt;
// OTLP's span flags: bits 0-7 the W3C trace flags, bit 8 "is_remote is known", bit 9 the parent is remote.
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/** One buffer that grows by doubling; a nested message reserves one length byte and moves itself if it needs more. */
class Writer {
  buf: Buffer;
  pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** A non-negative integer up to 2^53. */
  varint(v: number): void {
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    while (v >= 0x80) {
      buf[pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    buf[pos++] = v;
    this.pos = pos;
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  /** int64 as a varint: a negative value is its 64-bit two's complement (ten bytes). */
  int64(v: number): void {
    if (v >= 0) return this.varint(v);
    let hi = Math.floor(v / TWO_32);
    let lo = v - hi * TWO_32;
    hi >>>= 0;
    this.ensure(10);
    for (let i = 0; i < 9; i++) {
      this.buf[this.pos++] = (lo & 0x7f) | 0x80;
      lo = (lo >>> 7) | ((hi & 0x7f) << 25);
      hi >>>= 7;
    }
    this.buf[this.pos++] = lo & 1;
  }

  /** Opens a length-delimited field: returns where its one reserved length byte is. */
  begin(field: number): number {
    this.tag(field, LEN);
    this.ensure(1);
    return this.pos++;
  }

  /** Closes what begin() opened: writes the length, moving the message up when it needs more than one byte. */
  end(at: number): void {
    const len = this.pos - at - 1;
    if (len < 0x80) {
      this.buf[at] = len;
      return;
    }
    let extra = 1;
    while (len >= 0x80 ** (extra + 1)) extra++;
    this.ensure(extra);
    this.buf.copyWithin(at + 1 + extra, at + 1, this.pos);
    this.pos += extra;
    const end = this.pos;
    this.pos = at;
    this.varint(len);
    this.pos = end;
  }

  string(field: number, s: string): void {
    const at = this.begin(field);
    if (!this.#shortAscii(s)) {
      this.ensure(s.length * 3);
      this.pos += this.buf.write(s, this.pos, 'utf8');
    }
    this.end(at);
  }

  /**
   * Writes a short ASCII string byte by byte, or nothing and returns false. Most values are short and ASCII, and for
   * them this is several times cheaper than a call into Buffer's native write.
   */
  #shortAscii(s: string): boolean {
    const n = s.length;
    if (n > 64) return false;
    this.ensure(n);
    const buf = this.buf;
    const pos = this.pos;
    for (let i = 0; i < n; i++) {
      const c = charCodeAt.call(s, i);
      if (c >= 0x80) return false;
      buf[pos + i] = c;
    }
    this.pos = pos + n;
    return true;
  }

  /** Bytes encoded before. */
  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** A span or trace id given as lowercase hex (as the SDK makes them, and as the W3C propagator accepts them). */
  id(field: number, hex: string): void {
    const n = hex.length >> 1;
    this.tag(field, LEN);
    this.varint(n);
    this.ensure(n);
    const buf = this.buf;
    const pos = this.pos;
    for (let i = 0; i < n; i++) buf[pos + i] = (nibble(charCodeAt.call(hex, 2 * i)) << 4) | nibble(charCodeAt.call(hex, 2 * i + 1));
    this.pos = pos + n;
  }

  bytes(field: number, b: Uint8Array): void {
    this.tag(field, LEN);
    this.varint(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** fixed64 nanoseconds since the epoch, exact (seconds × 1e9 is past 2^53, so the low word is computed apart). */
  time(field: number, t: HrTime): void {
    this.tag(field, I64);
    this.ensure(8);
    const s = Math.trunc(t[0]);
    const ns = Math.trunc(t[1]);
    const lo = (Math.imul(s, 1e9) + ns) >>> 0;
    const hi = Math.round((s * 1e9 + ns - lo) / TWO_32);
    this.buf.writeUInt32LE(lo, this.pos);
    this.buf.writeUInt32LE(hi >>> 0, this.pos + 4);
    this.pos += 8;
  }

  fixed32(field: number, v: number): void {
    this.tag(field, I32);
    this.ensure(4);
    this.buf.writeUInt32LE(v >>> 0, this.pos);
    this.pos += 4;
  }

  double(field: number, v: number): void {
    this.tag(field, I64);
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** An optional non-zero varint field (proto3 leaves zero out). */
  count(field: number, v: number | undefined): void {
    if (!v) return;
    this.tag(field, VARINT);
    this.varint(v);
  }
}

/** A hex digit's value (0 for anything else: ids are validated where they are made or received). */
function nibble(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return 0;
}

/** common.v1.AnyValue's fields, by the value's type (as the SDK's serializers choose them). */
function anyValue(w: Writer, v: unknown): void {
  switch (typeof v) {
    case 'string':
      return w.string(1, v);
    case 'boolean':
      w.tag(2, VARINT);
      return w.varint(v ? 1 : 0);
    case 'number':
      if (Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63) {
        w.tag(3, VARINT);
        return w.int64(v);
      }
      return w.double(4, v);
  }
  if (v instanceof Uint8Array) return w.bytes(7, v);
  if (Array.isArray(v)) {
    const list = w.begin(5);
    for (const item of v) {
      const at = w.begin(1);
      anyValue(w, item);
      w.end(at);
    }
    return w.end(list);
  }
  if (typeof v === 'object' && v !== null) {
    const list = w.begin(6);
    keyValues(w, 1, v as Attributes);
    w.end(list);
  }
}

/**
 * KeyValue messages encoded before, by key and value. Most of a span's attributes repeat from request to request
 * (the method, the route, the model, the backend, the token): copying their bytes costs a fraction of encoding
 * them again. Only primitive values, strings of up to 256 characters, at most 256 values per key and 1 MiB in all:
 * a value seen once (a request id) takes a slot and is never looked up again. Never prompts or completions
 * (--trace-content): they stay in memory no longer than their span.
 */
const PAIRS = new Map<string, Map<AttributeValue, Uint8Array>>();
const MAX_VALUES_PER_KEY = 256;
const MAX_CACHED_BYTES = 1024 * 1024;
let cachedBytes = 0;

function keyValue(w: Writer, field: number, key: string, value: AttributeValue): void {
  const cacheable = typeof value !== 'object' && (typeof value !== 'string' || (value.length <= 256 && key !== A.inputMessages && key !== A.outputMessages));
  let values = PAIRS.get(key);
  const known = cacheable ? values?.get(value) : undefined;
  if (known !== undefined) {
    w.tag(field, LEN);
    w.varint(known.length);
    return w.raw(known);
  }
  const kv = w.begin(field);
  w.string(1, key);
  const at = w.begin(2);
  anyValue(w, value);
  w.end(at);
  if (cacheable && cachedBytes < MAX_CACHED_BYTES) {
    if (values === undefined) PAIRS.set(key, (values = new Map()));
    if (values.size < MAX_VALUES_PER_KEY) {
      const bytes = Uint8Array.prototype.slice.call(w.buf, kv + 1, w.pos);
      values.set(value, bytes);
      cachedBytes += bytes.length + key.length;
    }
  }
  w.end(kv);
}

/**
 * Repeated common.v1.KeyValue under `field`, in the object's key order; undefined values are left out. Attributes
 * are plain objects: no inherited keys to skip.
 */
function keyValues(w: Writer, field: number, attributes: Attributes): void {
  for (const key in attributes) {
    const value: AttributeValue | undefined = attributes[key];
    if (value !== undefined) keyValue(w, field, key, value);
  }
}

function flags(ctx: SpanContext, remote: boolean | undefined): number {
  return (ctx.traceFlags & 0xff) | HAS_IS_REMOTE | (remote ? IS_REMOTE : 0);
}

function status(w: Writer, span: ReadableSpan): void {
  const at = w.begin(15);
  if (span.status.message) w.string(2, span.status.message);
  w.count(3, span.status.code);
  w.end(at);
}

function event(w: Writer, e: TimedEvent): void {
  const at = w.begin(11);
  w.time(1, e.time);
  w.string(2, e.name);
  if (e.attributes) keyValues(w, 3, e.attributes);
  w.count(4, e.droppedAttributesCount);
  w.end(at);
}

function link(w: Writer, l: Link): void {
  const at = w.begin(13);
  w.id(1, l.context.traceId);
  w.id(2, l.context.spanId);
  const state = l.context.traceState?.serialize();
  if (state) w.string(3, state);
  if (l.attributes) keyValues(w, 4, l.attributes);
  w.count(5, l.droppedAttributesCount);
  w.fixed32(6, flags(l.context, l.context.isRemote));
  w.end(at);
}

/** A span that keeps its attributes as two lists (the gateway's: recorded-span.ts), read without an object. */
export interface AttributeLists {
  readonly attributeKeys: readonly string[];
  readonly attributeValues: readonly AttributeValue[];
}

/** A span whose Span message was encoded when it ended: the request copies the bytes. */
export interface EncodedSpan {
  readonly encoded: Uint8Array | undefined;
}

function span(w: Writer, s: ReadableSpan): void {
  const at = w.begin(2);
  const ctx = s.spanContext();
  w.id(1, ctx.traceId);
  w.id(2, ctx.spanId);
  const state = ctx.traceState?.serialize();
  if (state) w.string(3, state);
  const parent = s.parentSpanContext;
  if (parent?.spanId) w.id(4, parent.spanId);
  w.string(5, s.name);
  // OTLP's SpanKind counts from UNSPECIFIED = 0; the API's from INTERNAL = 0.
  w.count(6, s.kind + 1);
  w.time(7, s.startTime);
  w.time(8, s.endTime);
  const lists = s as Partial<AttributeLists>;
  if (lists.attributeKeys && lists.attributeValues) {
    const keys = lists.attributeKeys;
    const values = lists.attributeValues;
    for (let i = 0; i < keys.length; i++) keyValue(w, 9, keys[i]!, values[i]!);
  } else keyValues(w, 9, s.attributes);
  w.count(10, s.droppedAttributesCount);
  for (const e of s.events) event(w, e);
  w.count(12, s.droppedEventsCount);
  for (const l of s.links) link(w, l);
  w.count(14, s.droppedLinksCount);
  status(w, s);
  w.fixed32(16, flags(ctx, parent?.isRemote));
  w.end(at);
}

function scope(w: Writer, sc: InstrumentationScope): void {
  const at = w.begin(1);
  w.string(1, sc.name);
  if (sc.version) w.string(2, sc.version);
  w.end(at);
}

function resource(w: Writer, r: Resource): void {
  const at = w.begin(1);
  keyValues(w, 1, r.attributes);
  w.end(at);
}

/** Spans grouped by resource, then by instrumentation scope (one group each for the gateway's own spans). */
function groups(spans: readonly ReadableSpan[]): Map<Resource, Map<InstrumentationScope, ReadableSpan[]>> {
  const out = new Map<Resource, Map<InstrumentationScope, ReadableSpan[]>>();
  for (const s of spans) {
    let scopes = out.get(s.resource);
    if (!scopes) out.set(s.resource, (scopes = new Map()));
    const list = scopes.get(s.instrumentationScope);
    if (list) list.push(s);
    else scopes.set(s.instrumentationScope, [s]);
  }
  return out;
}

/** Bytes per span to start the buffer with: the gateway's spans take 0.5–1 KB. */
const SPAN_BYTES = 1024;

/** One writer for encodeSpan, reused: each span is copied out at its exact size. */
const scratch = new Writer(16 * 1024);

/**
 * A finished span's Span message (as a ScopeSpans field: tag and length included), for EncodedSpan. Encoding a span
 * when it ends leaves the batch processor's queue holding a few hundred bytes per span instead of the span's
 * objects, which the garbage collector would otherwise trace and promote while they wait to be exported.
 */
export function encodeSpan(s: ReadableSpan): Uint8Array {
  scratch.pos = 0;
  span(scratch, s);
  const out = Buffer.allocUnsafe(scratch.pos);
  scratch.buf.copy(out, 0, 0, scratch.pos);
  return out;
}

/** ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1 }. */
export function encodeTraceRequest(spans: readonly ReadableSpan[]): Uint8Array {
  const w = new Writer(Math.max(4096, spans.length * SPAN_BYTES));
  for (const [r, scopes] of groups(spans)) {
    const rs = w.begin(1);
    resource(w, r);
    for (const [sc, list] of scopes) {
      const ss = w.begin(2);
      scope(w, sc);
      for (const s of list) {
        const encoded = (s as Partial<EncodedSpan>).encoded;
        if (encoded) w.raw(encoded);
        else span(w, s);
      }
      if (sc.schemaUrl) w.string(3, sc.schemaUrl);
      w.end(ss);
    }
    if (r.schemaUrl) w.string(3, r.schemaUrl);
    w.end(rs);
  }
  return w.buf.subarray(0, w.pos);
}
