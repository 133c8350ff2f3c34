import express from 'express';
import type { Request, Response } from 'express';
import { describe, expect, it, vi } from 'vitest';
import { RouteRegistry, runInOrder } from './route-registry.js';

describe('RouteRegistry', () => {
  it('knows the methods of literal, param and wildcard paths', () => {
    const app = express();
    const r = new RouteRegistry();
    const h = () => {};
    r.add(app, 'post', '/v1/chat/completions', h);
    r.add(app, 'get', '/v1/models/*model', h);
    r.add(app, 'get', '/v1/videos/:id', h);
    r.add(app, 'delete', '/v1/videos/:id', h);
    expect(r.allowed('/v1/chat/completions')).toEqual(['POST']);
    expect(r.allowed('/v1/models/org/name')).toEqual(['GET', 'HEAD']);
    expect(r.allowed('/v1/videos/abc')).toEqual(['DELETE', 'GET', 'HEAD']);
    expect(r.allowed('/v1/videos/abc/def')).toEqual([]);
    expect(r.allowed('/v1/chat')).toEqual([]);
  });
});

describe('RouteRegistry.fast', () => {
  async function serve(setup: (app: express.Express, r: RouteRegistry, seen: string[]) => void) {
    const app = express();
    const r = new RouteRegistry();
    const seen: string[] = [];
    app.use(r.fast);
    setup(app, r, seen);
    app.use((_req: express.Request, res: express.Response) => void res.status(404).send('router fell through'));
    app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(500).send(`error: ${err.message}`));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((ok) => server.once('listening', ok));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    return { base, seen, close: () => new Promise((ok) => server.close(ok)) };
  }

  it('runs an exact route through its handler chain, and everything else through the router', async () => {
    const s = await serve((app, r, seen) => {
      const mark = (name: string) => (_req: express.Request, _res: express.Response, next: express.NextFunction) => {
        seen.push(name);
        next();
      };
      r.add(app, 'post', '/v1/chat/completions', mark('auth'), (_req, res) => void res.send('chat'));
      r.add(app, 'get', '/v1/videos/:id', mark('auth'), (req, res) => void res.send(`video ${req.params['id']}`));
    });
    try {
      expect(await (await fetch(`${s.base}/v1/chat/completions`, { method: 'POST' })).text()).toBe('chat');
      // A trailing slash or another case is not in the map: express's router serves it, as before.
      expect(await (await fetch(`${s.base}/v1/chat/completions/`, { method: 'POST' })).text()).toBe('chat');
      expect(await (await fetch(`${s.base}/V1/Chat/Completions`, { method: 'POST' })).text()).toBe('chat');
      expect(await (await fetch(`${s.base}/v1/videos/v1`)).text()).toBe('video v1');
      expect((await fetch(`${s.base}/v1/chat/completions`)).status).toBe(404); // GET: no such route
      expect(s.seen).toEqual(['auth', 'auth', 'auth', 'auth']);
    } finally {
      await s.close();
    }
  });

  it('an error passed to next, thrown, or rejected reaches the error handler', async () => {
    const s = await serve((app, r) => {
      r.add(app, 'post', '/next', (_req, _res, next) => next(new Error('passed')));
      r.add(app, 'post', '/throw', () => {
        throw new Error('thrown');
      });
      r.add(app, 'post', '/reject', async () => {
        throw new Error('rejected');
      });
    });
    try {
      for (const what of ['next', 'throw', 'reject']) {
        const res = await fetch(`${s.base}/${what}`, { method: 'POST' });
        expect([res.status, await res.text()]).toEqual([500, `error: ${{ next: 'passed', throw: 'thrown', reject: 'rejected' }[what]}`]);
      }
    } finally {
      await s.close();
    }
  });
});

describe('runInOrder', () => {
  const req = {} as Request;
  const res = {} as Response;

  it('runs each handler after the one before calls next, then done()', () => {
    const seen: string[] = [];
    const done = vi.fn();
    runInOrder([(_q, _s, next) => (seen.push('a'), next()), (_q, _s, next) => (seen.push('b'), next())], req, res, done);
    expect(seen).toEqual(['a', 'b']);
    expect(done).toHaveBeenCalledWith();
  });

  it('stops at a handler that answers, and hands an error (passed, thrown or rejected) to done', async () => {
    const done = vi.fn();
    const never = vi.fn();
    runInOrder([(_q, _s) => undefined, never], req, res, done);
    expect(never).not.toHaveBeenCalled();
    expect(done).not.toHaveBeenCalled();
    const boom = new Error('boom');
    for (const h of [
      (_q: Request, _s: Response, next: (e?: unknown) => void) => next(boom),
      () => {
        throw boom;
      },
      async () => {
        throw boom;
      },
    ]) {
      const d = vi.fn();
      runInOrder([h as never, never], req, res, d);
      await new Promise((r) => setImmediate(r));
      expect(d).toHaveBeenCalledWith(boom);
    }
    expect(never).not.toHaveBeenCalled();
  });
});
