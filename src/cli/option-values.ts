// Value parsers for `serve` flags and their environment variables. Each returns the typed value or throws a
// message that completes "<flag> …" (e.g. "must be an integer from 0 to 65535 (got "x")"). Pure.
import { parseDuration } from '../compile/duration.js';
import { sizeBytes } from './size-grammar.js';

export function nonEmpty(t: string): string {
  if (t.trim() === '') throw new Error('must not be empty');
  return t;
}

export function oneOf<T extends string>(t: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(t)) throw new Error(`must be one of ${allowed.join(', ')} (got "${t}")`);
  return t as T;
}

export function parseInteger(t: string, min: number, max: number): number {
  const n = /^\d+$/.test(t.trim()) ? Number(t.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`must be an integer from ${min} to ${max} (got "${t}")`);
  return n;
}

export function parsePort(t: string): number {
  return parseInteger(t, 0, 65535);
}

export function parseBoolean(t: string): boolean {
  const v = t.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new Error(`must be true or false (got "${t}")`);
}

/** Go-style durations, fractions included as Go takes them (1.5s, 2.5m); a bare number is seconds. */
export function parseDrain(t: string): number {
  const v = t.trim();
  const ms = /^\d+(\.\d+)?$/.test(v) ? Math.round(Number(v) * 1000) : /^(\d+(\.\d+)?(ms|s|m|h))+$/.test(v) ? Math.round(parseDuration(v)) : NaN;
  if (!Number.isFinite(ms) || ms > 3_600_000) throw new Error(`must be a duration such as 25s, 1m30s or 500ms, at most 1h (got "${t}")`);
  return ms;
}

/** Sizes as people write them: 1048576, 512kb, 20mb, 1.5gb (the grammar is size-grammar.ts, which the chart shares). */
export function parseSize(t: string): number {
  const bytes = sizeBytes(t);
  if (bytes === undefined) throw new Error(`must be a size from 1kb to 64gb such as 512kb or 20mb (got "${t}")`);
  return bytes;
}

export function formatSize(bytes: number): string {
  for (const [unit, size] of [
    ['gb', 1024 ** 3],
    ['mb', 1024 ** 2],
    ['kb', 1024],
  ] as const) {
    if (bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return String(bytes);
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function parseNamespaces(t: string): readonly string[] | '*' {
  if (t.trim() === '*') return '*';
  const list = t
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = list.find((n) => !DNS_LABEL.test(n));
  if (list.length === 0 || bad !== undefined) throw new Error(`must be * or a comma-separated list of namespace names (bad: "${bad ?? t}")`);
  return [...new Set(list)];
}

/**
 * A Redis URL the client can connect with. ioredis throws on a URL it cannot parse only once the gateway is
 * listening, with a bare "Invalid URL"; checked here instead. Messages never echo the URL: it may hold a password.
 */
export function parseRedisUrl(t: string): string {
  const text = t.trim();
  let url: URL;
  try {
    if (!/^rediss?:\/\/\S+$/.test(text)) throw new Error();
    url = new URL(text);
  } catch {
    throw new Error('must be a redis:// or rediss:// URL such as redis://redis:6379/0');
  }
  if (url.hostname === '') throw new Error('names no host (redis://HOST:PORT/DB)');
  try {
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch {
    throw new Error('has a user or password that is not valid percent-encoding (write % as %25)');
  }
  if (!/^(\/\d*)?$/.test(url.pathname)) throw new Error('has a path that is not a database number (redis://HOST:PORT/0)');
  return text;
}

export function parseDnsName(t: string): string {
  if (t.length > 253 || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(t)) throw new Error(`must be a lowercase DNS name (got "${t}")`);
  return t;
}

export function parseSelector(t: string): string {
  // Full selector grammar is the API server's job; this catches typos such as a stray quote or an empty value.
  if (t.trim() === '' || !/^[A-Za-z0-9._/\-=!,() ]+$/.test(t) || /(^|,)\s*(,|$)/.test(t)) {
    throw new Error(`must be a label selector such as modelgateway.io/secret=true (got "${t}")`);
  }
  return t.trim();
}
