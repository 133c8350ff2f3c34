// Memoisation for compile, so a one-object change does not redo the work of ten thousand unchanged objects.
// Sources hand over the same object instances snapshot after snapshot until an object changes (and nobody mutates
// them), so results are keyed weakly by object: whatever a source drops is collected with its cached result.
// compile stays pure: same objects in, same table out.
import type { z } from 'zod';

// One WeakMap per schema, not one per object: ten thousand small WeakMaps cost megabytes of hash tables.
const validated = new Map<z.ZodType, WeakMap<object, z.ZodSafeParseResult<unknown>>>();

/** schema.safeParse(o), computed once per (object, schema). */
export function validateCached(schema: z.ZodType, o: object): z.ZodSafeParseResult<unknown> {
  let perObject = validated.get(schema);
  if (!perObject) validated.set(schema, (perObject = new WeakMap()));
  let r = perObject.get(o);
  if (!r) perObject.set(o, (r = schema.safeParse(o)));
  return r;
}

const checked = new Map<z.ZodType, WeakMap<object, z.ZodSafeParseResult<unknown>>>();

/**
 * Like validateCached, for a schema without defaults or transforms (its output equals its input): on success the
 * input object itself is the result, so zod's copy is not kept alongside the source's object.
 */
export function checkCached<T>(schema: z.ZodType<T>, o: object): z.ZodSafeParseResult<T> {
  let perObject = checked.get(schema);
  if (!perObject) checked.set(schema, (perObject = new WeakMap()));
  let r = perObject.get(o);
  if (!r) {
    const parsed = schema.safeParse(o);
    r = parsed.success ? { success: true, data: o as T } : parsed;
    perObject.set(o, r);
  }
  return r as z.ZodSafeParseResult<T>;
}

const digests = new WeakMap<object, Map<string, string | undefined>>();

/** The SHA-256 of a client key held in `secret` under `key`, computed once per (parsed Secret, key). */
export function cachedKeyDigest(secret: object, key: string, compute: () => string | undefined): string | undefined {
  let perKey = digests.get(secret);
  if (!perKey) digests.set(secret, (perKey = new Map()));
  if (!perKey.has(key)) perKey.set(key, compute());
  return perKey.get(key);
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

/**
 * A cache of one string per object, derived from fields that never change for that object (kind, namespace,
 * name), so a compile does not build ten thousand identical key strings again. One cache per kind of key.
 */
export class KeyCache {
  readonly #keys = new WeakMap<object, string>();

  get(o: object): string | undefined {
    return this.#keys.get(o);
  }

  set(o: object, key: string): string {
    this.#keys.set(o, key);
    return key;
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
