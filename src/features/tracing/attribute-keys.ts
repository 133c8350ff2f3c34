// Attribute keys as the gateway's spans and its OTLP/protobuf encoder use them: one object per key name, found once
// when the attribute is set, that carries what would otherwise be found again by name for every span. Its bit
// stands for it in a span's mask of the keys it holds, so a span sees without comparing names whether a key is set
// again or hides a group's (recorded-span.ts, otlp-protobuf.ts); its cache holds the KeyValue messages encoded for
// it before.
import type { AttributeValue } from '@opentelemetry/api';

/** The mask bit of every key past the 31 that have their own: such keys are told apart by name. */
export const SHARED_BIT = 1 << 31;
const OWN_BITS = 31;
/** Keys kept past this many are made afresh on each lookup, uncached: names are bounded in practice. */
const MAX_KEYS = 1024;

export class AttributeKey {
  readonly name: string;
  /** This key's bit in a span's key mask: its own for the first 31 keys made, SHARED_BIT for the others. */
  readonly bit: number;
  /**
   * The encoder's cache (otlp-protobuf.ts: keyValue): the value last written for this key and its KeyValue's bytes
   * (most keys repeat one value, found then without hashing it), and every value cached, or null when this key's
   * values are not cached (content, or values that never repeat).
   */
  last: AttributeValue | undefined = undefined;
  lastBytes: Uint8Array | undefined = undefined;
  values: Map<AttributeValue, Uint8Array> | null;

  constructor(name: string, bit: number, cached: boolean) {
    this.name = name;
    this.bit = bit;
    this.values = cached ? new Map() : null;
  }
}

const KEYS = new Map<string, AttributeKey>();

/** The key of this name. `cached: false` (prompts and completions) keeps its values out of the encoder's cache. */
export function attributeKey(name: string, cached = true): AttributeKey {
  let key = KEYS.get(name);
  if (key === undefined) {
    const bit = KEYS.size < OWN_BITS ? 1 << KEYS.size : SHARED_BIT;
    key = new AttributeKey(name, bit, cached && KEYS.size < MAX_KEYS);
    if (KEYS.size < MAX_KEYS) KEYS.set(name, key);
  } else if (!cached) {
    key.values = null;
    key.last = key.lastBytes = undefined;
  }
  return key;
}
