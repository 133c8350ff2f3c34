// Finished spans as an OTLP/protobuf ExportTraceServiceRequest, for the OpenTelemetry SDK's own OTLP/HTTP exporter
// (tracing.ts hands it this serializer in place of the SDK's). Why not the SDK's: with every request sampled its
// encoder was the largest part of tracing's cost; it measures every message first and writes every string a
// character at a time in JavaScript (bench/results/performance-history.md). This writes each message once into one growing buffer
// and fixes a nested message's length up after it; it writes strings through Buffer's native UTF-8 write, and
// copies key/value pairs it has written before from a bounded cache kept on their keys (attribute-keys.ts). The
// gateway's own spans hand it more: attribute groups encoded once, ids as words rather than hex, times as epoch
// milliseconds. Pure but for that cache (and the chunks encodeSpan writes into): spans in, bytes out. Field
// numbers are opentelemetry-proto's:
// collector/trace/v1/trace_service.proto, trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto.
// The tests decode the output with the official definitions and compare it with the SDK's own serializer's.
import type { AttributeValue, Attributes, HrTime, Link, SpanContext } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import { type AttributeKey, attributeKey } from './attribute-keys.js';
import { PARENT_WORDS, SPAN_WORDS, TRACE_WORDS } from './span-ids.js';

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

  /**
   * A string, through Buffer's UTF-8 write. A call into C++, which for the gateway's short strings now costs less
   * than the loop over their characters in JavaScript that this encoder used before.
   */
  string(field: number, s: string): void {
    const at = this.begin(field);
    this.ensure(s.length * 3);
    this.pos += this.buf.write(s, this.pos, 'utf8');
    this.end(at);
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

  /** An id given as words (span-ids.ts): `count` of them from `at`, four bytes each, high byte first. */
  words(field: number, words: readonly number[], at: number, count: number): void {
    this.tag(field, LEN);
    this.ensure(1 + count * 4);
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = count * 4;
    for (let i = at; i < at + count; i++) {
      const word = words[i]!;
      buf[pos] = word >>> 24;
      buf[pos + 1] = word >>> 16;
      buf[pos + 2] = word >>> 8;
      buf[pos + 3] = word;
      pos += 4;
    }
    this.pos = pos;
  }

  /** A length-delimited field of the given bytes (a bytes value, or a message encoded before). */
  bytes(field: number, b: Uint8Array): void {
    this.tag(field, LEN);
    this.varint(b.length);
    this.raw(b);
  }

  /** fixed64 nanoseconds since the epoch, from an HrTime. */
  time(field: number, t: HrTime): void {
    this.nanos(field, t[0], t[1]);
  }

  /** fixed64 nanoseconds since the epoch, from epoch milliseconds, split as the SDK's millisToHrTime splits them. */
  millis(field: number, ms: number): void {
    this.nanos(field, Math.trunc(ms / 1e3), Math.round((ms % 1e3) * 1e6));
  }

  /** fixed64 seconds × 1e9 + nanoseconds, exact (past 2^53, so the low word is computed apart). */
  nanos(field: number, seconds: number, nanoseconds: number): void {
    this.tag(field, I64);
    this.ensure(8);
    const s = Math.trunc(seconds);
    const ns = Math.trunc(nanoseconds);
    const lo = (Math.imul(s, 1e9) + ns) >>> 0;
    const hi = Math.round((s * 1e9 + ns - lo) / TWO_32);
    this.#uint32le(lo);
    this.#uint32le(hi);
  }

  /** Four bytes, low first, without Buffer's range checks (ensure() made the room). */
  #uint32le(v: number): void {
    const buf = this.buf;
    const pos = this.pos;
    buf[pos] = v;
    buf[pos + 1] = v >>> 8;
    buf[pos + 2] = v >>> 16;
    buf[pos + 3] = v >>> 24;
    this.pos = pos + 4;
  }

  fixed32(field: number, v: number): void {
    this.tag(field, I32);
    this.ensure(4);
    this.#uint32le(v);
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
 * KeyValue messages encoded before, cached on their key (attribute-keys.ts) by value. Most of a span's attributes
 * that are not in a group repeat from request to request (the status, the route, the answering model, token
 * counts): copying their bytes costs a fraction of encoding them again. Only primitive values and strings of up to
 * 256 characters; 1 MiB in all. A key that reaches 256 values (a request id) is no longer cached: its values are
 * unique. Never prompts or completions (--trace-content): they stay in memory no longer than their span.
 */
const MAX_VALUES_PER_KEY = 256;
const MAX_CACHED_BYTES = 1024 * 1024;
let cachedBytes = 0;

/** A KeyValue as a Span's attribute (field 9): the tag the cached messages start with. */
const ATTRIBUTE_TAG = (9 << 3) | LEN;

function keyValue(w: Writer, field: number, key: AttributeKey, value: AttributeValue): void {
  // Only a cacheable value is ever `last`, so a value equal to it is one too (strings are compared by content).
  if (value === key.last) return cachedKeyValue(w, field, key.lastBytes!);
  const values = key.values;
  const cacheable = values !== null && typeof value !== 'object' && (typeof value !== 'string' || value.length <= 256);
  if (!cacheable) return void writeKeyValue(w, field, key.name, value);
  let bytes = values.get(value);
  if (bytes !== undefined) {
    cachedKeyValue(w, field, bytes);
  } else {
    const start = w.pos;
    writeKeyValue(w, field, key.name, value);
    if (cachedBytes >= MAX_CACHED_BYTES) return;
    if (values.size >= MAX_VALUES_PER_KEY) {
      key.values = null;
      key.last = key.lastBytes = undefined;
      return;
    }
    // Kept as a Span's attribute, tag and length included: copied whole as one, re-tagged as anything else.
    bytes = Uint8Array.prototype.slice.call(w.buf, start, w.pos);
    bytes[0] = ATTRIBUTE_TAG;
    values.set(value, bytes);
    cachedBytes += bytes.length + key.name.length;
  }
  key.last = value;
  key.lastBytes = bytes;
}

/** A cached KeyValue under `field` (every field a KeyValue goes under has a one-byte tag, as field 9 has). */
function cachedKeyValue(w: Writer, field: number, bytes: Uint8Array): void {
  if (field === 9) return w.raw(bytes);
  w.tag(field, LEN);
  w.raw(bytes.subarray(1));
}

/** A KeyValue message written anew. */
function writeKeyValue(w: Writer, field: number, key: string, value: AttributeValue): void {
  const kv = w.begin(field);
  w.string(1, key);
  const at = w.begin(2);
  anyValue(w, value);
  w.end(at);
  w.end(kv);
}

/**
 * Repeated common.v1.KeyValue under `field`, in the object's key order; undefined values are left out. Attributes
 * are plain objects: no inherited keys to skip.
 */
function keyValues(w: Writer, field: number, attributes: Attributes): void {
  for (const key in attributes) {
    const value: AttributeValue | undefined = attributes[key];
    if (value !== undefined) keyValue(w, field, attributeKey(key), value);
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

/**
 * Attributes that many spans share (a token's, a backend's), with their KeyValue messages encoded once: a span
 * that carries the group copies the bytes. Made by attributeGroup(), kept by whoever knows what repeats
 * (exchange-trace.ts caches them on the routing table's compiled objects).
 */
export interface AttributeGroup {
  readonly keys: readonly AttributeKey[];
  readonly values: readonly AttributeValue[];
  /** The bits of its keys (attribute-keys.ts). */
  readonly mask: number;
  /** The KeyValue messages as a Span's attributes (field 9), tags and lengths included. */
  readonly encoded: Uint8Array;
}

export function attributeGroup(attributes: Attributes): AttributeGroup {
  const keys: AttributeKey[] = [];
  const values: AttributeValue[] = [];
  let mask = 0;
  const w = new Writer(256);
  for (const name in attributes) {
    const value = attributes[name];
    if (value === undefined) continue;
    const key = attributeKey(name);
    keys.push(key);
    values.push(value);
    mask |= key.bit;
    writeKeyValue(w, 9, name, value);
  }
  return { keys, values, mask, encoded: Uint8Array.prototype.slice.call(w.buf, 0, w.pos) };
}

/**
 * A span that keeps its attributes as groups and two lists (the gateway's: recorded-span.ts), read without an
 * object. A key in the lists hides a group's, and a later group's an earlier one's.
 */
export interface AttributeLists {
  readonly attributeGroups: readonly AttributeGroup[];
  readonly attributeKeys: readonly AttributeKey[];
  readonly attributeValues: readonly AttributeValue[];
  /** The bits of the keys in the lists. */
  readonly keyMask: number;
}

/**
 * The groups' attributes that no list or later group hides. The masks answer for most groups at once: a group
 * whose bits meet none of those set over it is copied whole; one whose bits meet some is looked at key by key.
 */
function groupAttributes(w: Writer, groups: readonly AttributeGroup[], lists: AttributeLists): void {
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g]!;
    let over = lists.keyMask;
    for (let later = g + 1; later < groups.length; later++) over |= groups[later]!.mask;
    if ((group.mask & over) === 0) {
      w.raw(group.encoded);
      continue;
    }
    for (let i = 0; i < group.keys.length; i++) {
      if (!isHidden(group.keys[i]!, groups, g, lists.attributeKeys)) keyValue(w, 9, group.keys[i]!, group.values[i]!);
    }
  }
}

/** Whether a key of groups[g] is set in the lists or in a later group (the value that counts is there). */
export function isHidden(key: AttributeKey, groups: readonly AttributeGroup[], g: number, keys: readonly AttributeKey[]): boolean {
  for (let i = 0; i < keys.length; i++) if (keys[i]!.name === key.name) return true;
  for (let later = g + 1; later < groups.length; later++) {
    const other = groups[later]!.keys;
    for (let i = 0; i < other.length; i++) if (other[i]!.name === key.name) return true;
  }
  return false;
}

/** A span that keeps its ids as words (span-ids.ts), the parent's too when it has one. */
export interface IdWords {
  readonly idWords: readonly number[];
}

/** A span that keeps its start and end as epoch milliseconds (the gateway's): written without making HrTimes. */
export interface MillisTimes {
  readonly startMillis: number;
  readonly endMillis: number;
}

/** A span whose Span message was encoded when it ended: the request copies the bytes. */
export interface EncodedSpan {
  readonly encoded: Uint8Array | undefined;
}

function span(w: Writer, s: ReadableSpan): void {
  const at = w.begin(2);
  const ctx = s.spanContext();
  const parent = s.parentSpanContext;
  const words = (s as Partial<IdWords>).idWords;
  if (words) {
    w.words(1, words, TRACE_WORDS, 4);
    w.words(2, words, SPAN_WORDS, 2);
  } else {
    w.id(1, ctx.traceId);
    w.id(2, ctx.spanId);
  }
  const state = ctx.traceState?.serialize();
  if (state) w.string(3, state);
  if (words && parent) w.words(4, words, PARENT_WORDS, 2);
  else if (parent?.spanId) w.id(4, parent.spanId);
  w.string(5, s.name);
  // OTLP's SpanKind counts from UNSPECIFIED = 0; the API's from INTERNAL = 0.
  w.count(6, s.kind + 1);
  const millis = s as Partial<MillisTimes>;
  if (millis.startMillis !== undefined && millis.endMillis !== undefined) {
    w.millis(7, millis.startMillis);
    w.millis(8, millis.endMillis);
  } else {
    w.time(7, s.startTime);
    w.time(8, s.endTime);
  }
  const lists = s as Partial<AttributeLists>;
  if (lists.attributeGroups && lists.attributeKeys && lists.attributeValues) {
    groupAttributes(w, lists.attributeGroups, lists as AttributeLists);
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
function groups(spans: readonly ReadableSpan[]): Map<Resource, Map<InstrumentationScope, readonly ReadableSpan[]>> {
  // The gateway's spans share one resource and scope: one group then, without two lookups per span.
  const first = spans[0];
  if (first && spans.every((s) => s.resource === first.resource && s.instrumentationScope === first.instrumentationScope)) {
    return new Map([[first.resource, new Map([[first.instrumentationScope, spans]])]]);
  }
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

/**
 * Where encodeSpan writes: chunks of ARENA_BYTES, each span's message a view into one. A span's bytes are written
 * once, where the batch's request copies them from; a chunk is freed when the last span written into it has been
 * exported. A new chunk starts when less than a span's usual size is left (a larger span grows the chunk, copying it).
 */
const ARENA_BYTES = 64 * 1024;
let arena = new Writer(ARENA_BYTES);

/**
 * A finished span's Span message (as a ScopeSpans field: tag and length included), for EncodedSpan. Encoding a span
 * when it ends leaves the batch processor's queue holding a few hundred bytes per span instead of the span's
 * objects, which the garbage collector would otherwise trace and promote while they wait to be exported.
 */
export function encodeSpan(s: ReadableSpan): Uint8Array {
  if (arena.buf.length - arena.pos < SPAN_BYTES) arena = new Writer(ARENA_BYTES);
  const start = arena.pos;
  span(arena, s);
  return arena.buf.subarray(start, arena.pos);
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
