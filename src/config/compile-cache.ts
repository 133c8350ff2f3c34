// Memoisation for compile, so a one-object change does not redo the work of ten thousand unchanged objects.
// Sources hand over the same object instances snapshot after snapshot until an object changes (and nobody mutates
// them), so results are keyed weakly by object: whatever a source drops is collected with its cached result.
// compile stays pure: same objects in, same table out.
import type { z } from 'zod';

const validated = new WeakMap<object, WeakMap<z.ZodType, z.ZodSafeParseResult<unknown>>>();

/** schema.safeParse(o), computed once per (object, schema). */
export function validateCached(schema: z.ZodType, o: object): z.ZodSafeParseResult<unknown> {
  let perSchema = validated.get(o);
  if (!perSchema) validated.set(o, (perSchema = new WeakMap()));
  let r = perSchema.get(schema);
  if (!r) perSchema.set(schema, (r = schema.safeParse(o)));
  return r;
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

  get(o: object, deps: readonly unknown[], compute: () => T): T {
    const slot = this.#slots.get(o);
    if (slot && slot.deps.length === deps.length && slot.deps.every((d, i) => d === deps[i])) return slot.value;
    const value = compute();
    this.#slots.set(o, { deps, value });
    return value;
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
