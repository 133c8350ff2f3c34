// The gateway's spans: what the OpenTelemetry SDK's Tracer and Span do for it, minus the per-attribute work that
// this feature does not need. The SDK validates every attribute value, building a WeakSet and an options object per
// attribute, and copies the attributes a span starts with twice. With every request sampled, the SDK's spans alone
// (nothing exported) made most of tracing's cost (bench/results/performance-history.md).
// The gateway sets only strings, numbers and booleans from its own code, and bounds them (content is clipped to
// CONTENT_CHARS). Its ids are made as the SDK's RandomIdGenerator makes them and kept as words beside their hex
// (span-ids.ts), and the attributes that repeat come in groups encoded once: the encoder copies both without parsing
// or re-encoding. The SDK's own parts do the rest: its samplers decide (OTEL_TRACES_SAMPLER), and its
// BatchSpanProcessor and OTLP exporter send the spans, which they take through its ReadableSpan interface.
import {
  type Attributes,
  type AttributeValue,
  type Context,
  type Exception,
  type HrTime,
  type Link,
  SamplingDecision,
  type Span,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  SpanStatusCode,
  type TimeInput,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { type InstrumentationScope, millisToHrTime } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, Sampler, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace';
import { type AttributeKey, attributeKey } from './attribute-keys.js';
import { type AttributeGroup, type AttributeLists, type EncodedSpan, type IdWords, isHidden, type MillisTimes } from './otlp-protobuf.js';
import { OwnSpanContext, PARENT_WORDS, randomId, randomWords, readHexId, SPAN_WORDS, TRACE_WORDS } from './span-ids.js';

// Shared empty lists, replaced by a span's own when it takes its first: most spans have no links, groups or events.
const NO_LINKS: Link[] = [];
const NO_GROUPS: AttributeGroup[] = [];
const NO_EVENTS: TimedEvent[] = [];
// An ended span's lists, once encoded: it takes no attributes any more.
const ENDED_KEYS: AttributeKey[] = [];
const ENDED_VALUES: AttributeValue[] = [];
const NO_ATTRIBUTES: Attributes = Object.freeze({});
/** A span's status until it is set (setStatus replaces the object). */
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });

/** What every span of one gateway shares. */
export interface SpanSettings {
  readonly sampler: Sampler;
  readonly processor: SpanProcessor;
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
  /** Encodes a span as it ends (otlp-protobuf.ts: encodeSpan), when the exporter sends protobuf; else undefined. */
  readonly encode: ((span: RecordedSpan) => Uint8Array) | undefined;
}

/**
 * Starts a span under `parent` (a context holding the parent span, or none: a new trace). As the SDK's Tracer: the
 * sampler decides, and a span it drops is a non-recording span that still carries the trace for propagation. The
 * attributes come after the start (the OTEL_TRACES_SAMPLER samplers do not read them).
 */
export function startSpan(settings: SpanSettings, name: string, kind: SpanKind, parent: Context): Span {
  const parentSpan = trace.getSpan(parent);
  // A parent of the gateway's own is valid as made; a remote one (the client's traceparent) is checked.
  const local = parentSpan instanceof RecordedSpan ? parentSpan : undefined;
  const parentContext = parentSpan?.spanContext();
  const joined = local !== undefined || (parentContext !== undefined && trace.isSpanContextValid(parentContext));
  const words = [0, 0, 0, 0, 0, 0, 0, 0];
  const traceId = joined ? parentContext!.traceId : randomId(words, TRACE_WORDS, 4);
  randomWords(words, SPAN_WORDS, 2);
  const sampled = settings.sampler.shouldSample(parent, traceId, name, kind, NO_ATTRIBUTES, NO_LINKS);
  const context = new OwnSpanContext(
    traceId,
    words,
    sampled.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
    sampled.traceState ?? (joined ? parentContext!.traceState : undefined),
  );
  // The words before any return: a span that is not recorded still writes its traceparent from them.
  if (local) {
    const from = local.idWords;
    for (let i = 0; i < 4; i++) words[TRACE_WORDS + i] = from[TRACE_WORDS + i]!;
    words[PARENT_WORDS] = from[SPAN_WORDS]!;
    words[PARENT_WORDS + 1] = from[SPAN_WORDS + 1]!;
  } else if (joined) {
    readHexId(traceId, words, TRACE_WORDS);
    readHexId(parentContext!.spanId, words, PARENT_WORDS);
  }
  if (sampled.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(context);
  const span = new RecordedSpan(settings, name, kind, context, joined ? parentContext : undefined, words, local);
  if (sampled.attributes) span.setAttributes(sampled.attributes);
  settings.processor.onStart(span, parent);
  return span;
}

/** The span as one of the gateway's own when it records; undefined otherwise (its attributes are not made then). */
export function recorded(span: Span): RecordedSpan | undefined {
  return span instanceof RecordedSpan && span.isRecording() ? span : undefined;
}

export class RecordedSpan implements Span, ReadableSpan, AttributeLists, EncodedSpan, IdWords, MillisTimes {
  name: string;
  readonly kind: SpanKind;
  readonly parentSpanContext: SpanContext | undefined;
  /** The ids as words (span-ids.ts), for the encoder: trace, span, and parent when there is one. */
  readonly idWords: readonly number[];
  /**
   * The attributes as two lists, in the order they were first set: appending costs less than adding properties
   * to an object one by one (V8 changes the object's shape each time). The encoder reads the lists.
   */
  attributeKeys: AttributeKey[] = [];
  attributeValues: AttributeValue[] = [];
  /** The bits of the keys in the lists (attribute-keys.ts): whether a key is there, without comparing names. */
  keyMask = 0;
  /** Groups of attributes set at once, encoded once (otlp-protobuf.ts); a key in the lists hides a group's. */
  attributeGroups: AttributeGroup[] = NO_GROUPS;
  /**
   * The span's encoded message, once it ended, when the settings encode spans as they end. Its attributes and events
   * are dropped then (the queue holds the bytes alone): `attributes` and `events` read empty after the end.
   */
  encoded: Uint8Array | undefined;
  links: Link[] = NO_LINKS;
  events: TimedEvent[] = NO_EVENTS;
  status: SpanStatus = UNSET;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly #settings: SpanSettings;
  readonly #context: SpanContext;
  readonly #startWall: number;
  readonly #start: number;
  #end = -1;

  constructor(
    settings: SpanSettings,
    name: string,
    kind: SpanKind,
    context: SpanContext,
    parent: SpanContext | undefined,
    idWords: number[],
    local: RecordedSpan | undefined,
  ) {
    this.#settings = settings;
    // As the SDK's span: the start from the wall clock, durations from the monotonic clock; a child of one of the
    // gateway's spans reads the wall clock through its parent's.
    this.#start = performance.now();
    this.#startWall = local ? local.wallNow(this.#start) : Date.now();
    this.idWords = idWords;
    this.name = name;
    this.kind = kind;
    this.#context = context;
    this.parentSpanContext = parent;
  }

  /** As an object, for any other reader of a ReadableSpan. */
  get attributes(): Attributes {
    const out: Attributes = {};
    // In the encoder's order: the groups' attributes that nothing hides, then the lists.
    const groups = this.attributeGroups;
    for (let g = 0; g < groups.length; g++) {
      const { keys, values } = groups[g]!;
      for (let i = 0; i < keys.length; i++) if (!isHidden(keys[i]!, groups, g, this.attributeKeys)) out[keys[i]!.name] = values[i];
    }
    for (let i = 0; i < this.attributeKeys.length; i++) out[this.attributeKeys[i]!.name] = this.attributeValues[i];
    return out;
  }

  spanContext(): SpanContext {
    return this.#context;
  }

  get resource(): Resource {
    return this.#settings.resource;
  }

  get instrumentationScope(): InstrumentationScope {
    return this.#settings.scope;
  }

  get ended(): boolean {
    return this.#end >= 0;
  }

  isRecording(): boolean {
    return this.#end < 0;
  }

  get startMillis(): number {
    return this.#startWall;
  }

  get endMillis(): number {
    return this.wallNow(this.#end);
  }

  /** The wall clock now, as this span's clocks read it (a child started under it reads the clock once). */
  wallNow(now: number): number {
    return this.#startWall + now - this.#start;
  }

  get startTime(): HrTime {
    return millisToHrTime(this.startMillis);
  }

  get endTime(): HrTime {
    return millisToHrTime(this.endMillis);
  }

  get duration(): HrTime {
    return millisToHrTime(this.#end - this.#start);
  }

  setAttribute(key: string, value: AttributeValue | undefined): this {
    return this.set(attributeKey(key), value);
  }

  /** setAttribute with the key's object (span-names.ts: A), as the gateway sets its own attributes. */
  set(key: AttributeKey, value: AttributeValue | undefined): this {
    if (this.#end >= 0 || value === undefined) return this;
    const keys = this.attributeKeys;
    // Looked for by name only when the mask says the key may be there already.
    if ((this.keyMask & key.bit) !== 0) {
      for (let i = 0; i < keys.length; i++) {
        if (keys[i]!.name === key.name) {
          this.attributeValues[i] = value;
          return this;
        }
      }
    }
    keys.push(key);
    this.attributeValues.push(value);
    this.keyMask |= key.bit;
    return this;
  }

  /**
   * Sets a group's attributes at once (the gateway's repeating ones: a token's, a backend's). An attribute set alone
   * wins over a group's of the same key, whichever came first, and a later group over an earlier one.
   */
  setAttributeGroup(group: AttributeGroup): this {
    if (this.#end >= 0) return this;
    if (this.attributeGroups === NO_GROUPS) this.attributeGroups = [group];
    else this.attributeGroups.push(group);
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key of Object.keys(attributes)) this.setAttribute(key, attributes[key]);
    return this;
  }

  /** Only attributes, no explicit time: the gateway stamps events when they happen. */
  addEvent(name: string, attributes?: Attributes | TimeInput): this {
    if (this.#end >= 0) return this;
    const time = millisToHrTime(this.wallNow(performance.now()));
    const isAttributes = typeof attributes === 'object' && !Array.isArray(attributes) && !(attributes instanceof Date);
    if (this.events === NO_EVENTS) this.events = [];
    this.events.push(isAttributes ? { name, time, attributes } : { name, time });
    return this;
  }

  addLink(link: Link): this {
    if (this.#end < 0) this.links = [...this.links, link];
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    // As the SDK's: UNSET changes nothing, and OK is final.
    if (this.#end < 0 && status.code !== SpanStatusCode.UNSET && this.status.code !== SpanStatusCode.OK) this.status = status;
    return this;
  }

  updateName(name: string): this {
    if (this.#end < 0) this.name = name;
    return this;
  }

  recordException(exception: Exception): void {
    const e = typeof exception === 'string' ? { message: exception } : exception;
    this.addEvent('exception', { 'exception.type': e.name ?? String(e.code ?? ''), 'exception.message': e.message ?? '' });
  }

  /** Once; the processor queues the span for export if it is sampled. */
  end(): void {
    if (this.#end >= 0) return;
    this.#end = performance.now();
    const encode = this.#settings.encode;
    if (encode && this.#context.traceFlags & TraceFlags.SAMPLED) {
      this.encoded = encode(this);
      this.attributeKeys = ENDED_KEYS;
      this.attributeValues = ENDED_VALUES;
      this.attributeGroups = NO_GROUPS;
      this.events = NO_EVENTS;
    }
    this.#settings.processor.onEnd(this);
  }
}
