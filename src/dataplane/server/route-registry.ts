// Remembers which paths the app serves with which methods, so an unmatched request can be told apart as
// "wrong method" (405 with Allow) or "no such URL" (404). Patterns use express 5 syntax (:param, *wildcard)
// and are compiled once at startup.
import type { Express, RequestHandler } from 'express';

type Method = 'get' | 'post' | 'delete' | 'put' | 'patch';

interface Entry {
  readonly pattern: RegExp;
  readonly methods: Set<string>;
}

function compilePath(path: string): RegExp {
  const body = path
    .split('/')
    .map((seg) => {
      if (seg.startsWith(':')) return '[^/]+';
      if (seg.startsWith('*')) return '.+';
      return seg.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${body}/?$`);
}

export class RouteRegistry {
  readonly #entries = new Map<string, Entry>();

  /** Registers the route on the app and records its method. */
  add(app: Express, method: Method, path: string, ...handlers: RequestHandler[]): void {
    app[method](path, ...handlers);
    let entry = this.#entries.get(path);
    if (!entry) {
      entry = { pattern: compilePath(path), methods: new Set() };
      this.#entries.set(path, entry);
    }
    entry.methods.add(method.toUpperCase());
    if (method === 'get') entry.methods.add('HEAD');
  }

  /** Methods served on a concrete request path (empty when no route matches it). */
  allowed(path: string): string[] {
    const out = new Set<string>();
    for (const e of this.#entries.values()) if (e.pattern.test(path)) for (const m of e.methods) out.add(m);
    return [...out].sort();
  }
}
