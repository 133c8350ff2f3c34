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
