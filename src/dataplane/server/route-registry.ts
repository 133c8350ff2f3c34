// Remembers which paths the app serves with which methods, so an unmatched request can be told apart as
// "wrong method" (405 with Allow) or "no such URL" (404). Patterns use express 5 syntax (:param, *wildcard)
// and are compiled once at startup. Routes without parameters are also served by `fast`, a single middleware that
// finds the handlers of a request's exact method and path in a map, ahead of express's router: the proxied
// `POST /v1/...` calls skip the walk through every route layer. Anything else (parameters, a trailing slash,
// another letter case) reaches the same handlers through the router as before.
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';

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
  readonly #exact = new Map<string, readonly RequestHandler[]>();

  /** Registers the route on the app and records its method. */
  add(app: Express, method: Method, path: string, ...handlers: RequestHandler[]): void {
    app[method](path, ...handlers);
    if (!/[:*]/.test(path)) this.#exact.set(`${method.toUpperCase()} ${path}`, handlers);
    let entry = this.#entries.get(path);
    if (!entry) {
      entry = { pattern: compilePath(path), methods: new Set() };
      this.#entries.set(path, entry);
    }
    entry.methods.add(method.toUpperCase());
    if (method === 'get') entry.methods.add('HEAD');
  }

  /**
   * Middleware (mount it before the routes): runs the handlers of a route whose method and path the request
   * matches exactly (runInOrder); anything else goes on to the router.
   */
  readonly fast = (req: Request, res: Response, next: NextFunction): void => {
    const handlers = this.#exact.get(`${req.method} ${req.path}`);
    if (handlers) runInOrder(handlers, req, res, next);
    else next();
  };

  /** Methods served on a concrete request path (empty when no route matches it). */
  allowed(path: string): string[] {
    const out = new Set<string>();
    for (const e of this.#entries.values()) if (e.pattern.test(path)) for (const m of e.methods) out.add(m);
    return [...out].sort();
  }
}

/**
 * Runs handlers one after the other as express would run them as separate layers (each handler's `next()` leads to
 * the next one, an error or a rejected promise to `done(err)`, the last `next()` to `done()`), without a walk
 * through the router's layers between them (an allocation and a path match per layer and request).
 */
export function runInOrder(handlers: readonly RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  let i = 0;
  const step = (err?: unknown): void => {
    if (err !== undefined && err !== null) return done(err);
    const h = handlers[i++];
    if (!h) return done();
    try {
      const out = h(req, res, step) as unknown;
      if (out instanceof Promise) out.catch(step);
    } catch (e) {
      step(e);
    }
  };
  step();
}
