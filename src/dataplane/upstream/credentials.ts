// What the gateway sends a backend to prove who it is, and the rule that none of it ever reaches a client. One
// list per backend: the upstream request's credential headers are built from it (headers.ts), and every answer
// relayed from that backend is masked with it (forward.ts): header values, the body (JSON, error text, SSE
// events, rewritten or not) and the error events the gateway retells from an upstream error. An upstream that
// echoes the Authorization it received (some 401 pages do) would otherwise show a tenant the backend's key. The
// backend's other headers (spec.backends[].headers) travel in the same list, masked when they came from a Secret;
// query parameters holding a secret are masked too, and a token an identity adds to one attempt (withAdded).
//
// Masking replaces each byte of the credential with `*`: same length, so Content-Length stays right and JSON
// stays valid, and nothing about the answer changes for a client that never saw a key.
import type { CompiledBackend } from '../../model/routing-table.js';
import type { Needle } from '../stream/stream-replace.js';

export interface SentCredential {
  /** The request header that carries it (lower case). */
  readonly header: string;
  /** The header value exactly as sent, e.g. "Bearer sk-…". */
  readonly value: string;
  /** The secret inside that value (the key itself); absent for a header that is no secret (an API version). */
  readonly secret?: string | undefined;
}

/**
 * Secrets at least this long are masked wherever they appear. A shorter one is masked only in the form it was
 * sent in (e.g. "Bearer abc"): masking a 1-to-7-byte string everywhere would garble ordinary answers (a key "a"
 * would star out every letter a), and a key that short is guessable, so it protects little anyway.
 */
export const MIN_MASKED_SECRET_BYTES = 8;

export interface BackendCredentials {
  readonly sent: readonly SentCredential[];
  /** Secrets the backend sends as query parameters. */
  readonly query: readonly string[];
  /** Byte needles for bodies; empty when the backend sends no credential. */
  readonly needles: readonly Needle[];
  /** The same needles as header text (latin1, as HTTP header values are decoded). */
  readonly texts: readonly string[];
}

const NONE: BackendCredentials = { sent: [], query: [], needles: [], texts: [] };
const cache = new WeakMap<CompiledBackend, BackendCredentials>();

/** The credentials of a backend and their masks, computed once per compiled backend (a table is immutable). */
export function credentialsOf(backend: CompiledBackend): BackendCredentials {
  let c = cache.get(backend);
  if (c === undefined) {
    const sent: SentCredential[] = backend.headers.map((h) => ({ header: h.name, value: h.value, secret: h.secret ? h.value : undefined }));
    const a = backend.auth;
    if (a.kind === 'bearer') sent.push({ header: 'authorization', value: `Bearer ${a.key}`, secret: a.key });
    else if (a.kind === 'header') sent.push({ header: a.header, value: a.key, secret: a.key });
    const inQuery = backend.query.filter((q) => q.secret).map((q) => q.value);
    if (a.kind === 'query') inQuery.push(a.key);
    c = compileCredentials(sent, inQuery);
    cache.set(backend, c);
  }
  return c;
}

const added = new WeakMap<BackendCredentials, { readonly key: string; readonly value: BackendCredentials }>();

/** A backend's credentials plus what its identity added to one attempt; the last token's masks are kept. */
export function withAdded(base: BackendCredentials, extra: readonly SentCredential[]): BackendCredentials {
  if (extra.length === 0) return base;
  const key = extra.map((e) => e.value).join('\n');
  const had = added.get(base);
  if (had?.key === key) return had.value;
  const value = compileCredentials([...base.sent, ...extra], base.query);
  added.set(base, { key, value });
  return value;
}

/** `sent`: headers; `query`: secrets sent as query parameters (masked as written and as URL-encoded). */
export function compileCredentials(sent: readonly SentCredential[], query: readonly string[] = []): BackendCredentials {
  if (sent.length === 0 && query.length === 0) return NONE;
  const texts = new Set<string>();
  const forms = sent.flatMap((c) => (c.secret === undefined ? [] : [Buffer.byteLength(c.secret) >= MIN_MASKED_SECRET_BYTES ? c.secret : c.value]));
  for (const q of query) if (Buffer.byteLength(q) >= MIN_MASKED_SECRET_BYTES) forms.push(q, encodeURIComponent(q));
  for (const masked of forms) {
    if (masked.length === 0) continue;
    // As sent, and as a JSON encoder may have escaped it when the upstream quotes it in a JSON string
    // (quotes, backslashes, control characters; some encoders also escape "/").
    const escaped = JSON.stringify(masked).slice(1, -1);
    for (const form of [masked, escaped, escaped.replaceAll('/', '\\/')]) texts.add(Buffer.from(form, 'utf8').toString('latin1'));
  }
  const list = [...texts];
  return {
    sent,
    query,
    needles: list.map((t) => ({ find: Buffer.from(t, 'latin1'), replace: Buffer.alloc(t.length, '*') })),
    texts: list,
  };
}

/** Masks credentials in header values, and drops a header whose name holds one (no header name is a secret). */
export function maskHeaders<T extends Record<string, number | string | string[] | undefined>>(headers: T, texts: readonly string[]): T {
  if (texts.length === 0) return headers;
  const names = lowered(texts);
  for (const name in headers) {
    if (containsAny(name, names)) {
      delete headers[name];
      continue;
    }
    const v = headers[name];
    if (typeof v === 'string') (headers as Record<string, unknown>)[name] = maskText(v, texts);
    else if (Array.isArray(v)) (headers as Record<string, unknown>)[name] = v.map((s) => maskText(s, texts));
  }
  return headers;
}

/** The texts as they would appear in a header name (node lowercases names): made once per set of credentials. */
const lowerCase = new WeakMap<readonly string[], readonly string[]>();

function lowered(texts: readonly string[]): readonly string[] {
  let out = lowerCase.get(texts);
  if (!out) lowerCase.set(texts, (out = texts.map((t) => t.toLowerCase())));
  return out;
}

function containsAny(s: string, texts: readonly string[]): boolean {
  for (const t of texts) if (s.includes(t)) return true;
  return false;
}

function maskText(s: string, texts: readonly string[]): string {
  let out = s;
  for (const t of texts) if (out.includes(t)) out = out.replaceAll(t, '*'.repeat(t.length));
  return out;
}
