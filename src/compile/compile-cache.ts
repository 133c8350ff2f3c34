// Memoisation for compile, so a one-object change does not redo the work of ten thousand unchanged objects.
// Sources hand over the same object instances snapshot after snapshot until an object changes (and nobody mutates
// them), so results are keyed weakly by object: whatever a source drops is collected with its cached result.
// compile stays pure: same objects in, same table out.
import type { z } from 'zod';

/** A validation that failed, as cached: zod's error. */
export class Invalid {
  constructor(readonly error: z.ZodError) {}
}

// One WeakMap per schema, not one per object: ten thousand small WeakMaps cost megabytes of hash tables.
const validated = new Map<z.ZodType, WeakMap<object, unknown>>();

/**
 * schema.safeParse(o), computed once per (object, schema): the parsed value, or Invalid. When parsing changed
 * nothing (no default to fill in: the API server has already applied the CRD's defaults; no transform), the
 * source's object itself is kept rather than zod's equal copy, which would double the memory of ten thousand tokens.
 */
export function validateCached<T>(schema: z.ZodType<T>, o: object): T | Invalid {
  let perObject = validated.get(schema);
  if (!perObject) validated.set(schema, (perObject = new WeakMap()));
  const cached = perObject.get(o);
  if (cached !== undefined) return cached as T | Invalid;
  const r = schema.safeParse(o);
  const value = !r.success ? new Invalid(r.error) : within(r.data, o) ? (o as T) : r.data;
  perObject.set(o, value);
  return value;
}

/** Whether every value of `parsed` is in `input` at the same place (input may hold more: fields zod passes over). */
function within(parsed: unknown, input: unknown): boolean {
  if (parsed === input) return true;
  if (typeof parsed !== 'object' || typeof input !== 'object' || parsed === null || input === null) return false;
  if (Array.isArray(parsed)) return Array.isArray(input) && parsed.length === input.length && parsed.every((v, i) => within(v, input[i]));
  if (Array.isArray(input)) return false;
  for (const [k, v] of Object.entries(parsed)) if (!within(v, (input as Record<string, unknown>)[k])) return false;
  return true;
}

// Per Secret, the referenced keys and their digests as a flat [key, digest, key, digest, …] array: Secrets are
// referenced by one key or two, and a Map each would cost ten times the memory with thousands of Secrets.
const digests = new WeakMap<object, (string | undefined)[]>();

/** The SHA-256 of a client key held in `secret` under `key`, computed once per (parsed Secret, key). */
export function cachedKeyDigest(secret: object, key: string, compute: () => string | undefined): string | undefined {
  const pairs = digests.get(secret);
  if (pairs) for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === key) return pairs[i + 1];
  const digest = compute();
  // Arrays of the exact length (a literal, concat): push() or a spread would reserve room for 16 more elements.
  digests.set(secret, pairs ? pairs.concat(key, digest) : [key, digest]);
  return digest;
}

const urls = new Map<string, { origin: string; pathname: string }>();

/** Origin and path of a backend base URL. Many routes share a provider's URL; bounded whatever the churn. */
export function parsedURL(baseURL: string): { origin: string; pathname: string } {
  let u = urls.get(baseURL);
  if (!u) {
    const url = new URL(baseURL);
    u = { origin: url.origin, pathname: url.pathname };
    if (urls.size >= 10_000) urls.clear();
    urls.set(baseURL, u);
  }
  return u;
}

/**
 * A result derived from one object and a few other inputs (compared by identity / value), computed once while
 * they stay the same: a Group's model list given the served models, a token's compiled form given its Group and
 * key digest. Unchanged objects then cost a lookup, and their results (immutable) are shared between tables.
 */
export class DerivedCache<T> {
  readonly #slots = new WeakMap<object, { deps: readonly unknown[]; value: T }>();

  /** The value stored for `o` with these same dependencies, if any. */
  lookup(o: object, deps: readonly unknown[]): T | undefined {
    const slot = this.#slots.get(o);
    if (!slot || slot.deps.length !== deps.length) return undefined;
    for (let i = 0; i < deps.length; i++) if (slot.deps[i] !== deps[i]) return undefined;
    return slot.value;
  }

  store(o: object, deps: readonly unknown[], value: T): T {
    this.#slots.set(o, { deps, value });
    return value;
  }

  get(o: object, deps: readonly unknown[], compute: () => T): T {
    return this.lookup(o, deps) ?? this.store(o, deps, compute());
  }
}

let lastModels: readonly string[] = [];

/**
 * The sorted list of served models, as the same array instance as last time when its content has not changed, so
 * results that depend on it (Groups' model lists) can use it as a dependency by identity.
 */
export function internModels(models: readonly string[]): readonly string[] {
  if (models.length === lastModels.length && models.every((m, i) => m === lastModels[i])) return lastModels;
  lastModels = models;
  return models;
}
