import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type BodyController, type BodySink, streamSource, UpstreamBody } from './upstream-body.js';

/** A stand-in for undici's request controller that records what the body asked of it. */
function controller(): BodyController & { calls: string[]; reason: unknown } {
  const c = {
    calls: [] as string[],
    reason: undefined as unknown,
    pause: () => c.calls.push('pause'),
    resume: () => c.calls.push('resume'),
    abort: (reason: unknown) => {
      c.calls.push('abort');
      c.reason = reason;
    },
  };
  return c;
}

function recorder(): BodySink & { seen: string[] } {
  const r = {
    seen: [] as string[],
    data: (chunk: Buffer) => r.seen.push(`data ${chunk.toString()}`),
    end: () => r.seen.push('end'),
    error: (err: unknown) => r.seen.push(`error ${(err as Error).message}`),
  };
  return r;
}

describe('UpstreamBody', () => {
  it('holds what arrives before its consumer attaches, then hands it over in order and goes on live', () => {
    const body = new UpstreamBody(controller());
    body.push(Buffer.from('a'));
    body.push(Buffer.from('b'));
    expect(body.heldBytes).toBe(2);
    const sink = recorder();
    body.attach(sink);
    expect(body.heldBytes).toBe(0);
    body.push(Buffer.from('c'));
    body.finish();
    expect(sink.seen).toEqual(['data a', 'data b', 'data c', 'end']);
  });

  it('tells a late consumer how the body already ended: complete, or failed', () => {
    const ended = new UpstreamBody(controller());
    ended.push(Buffer.from('x'));
    ended.finish();
    const a = recorder();
    ended.attach(a);
    expect(a.seen).toEqual(['data x', 'end']);

    const failed = new UpstreamBody(controller());
    failed.fail(new Error('socket closed'));
    const b = recorder();
    failed.attach(b);
    expect(b.seen).toEqual(['error socket closed']);
  });

  it('stops undici reading while 64 KB wait for a consumer, and resumes it when one attaches', () => {
    const c = controller();
    const body = new UpstreamBody(c);
    body.push(Buffer.alloc(32 * 1024));
    expect(c.calls).toEqual([]);
    body.push(Buffer.alloc(32 * 1024));
    expect(c.calls).toEqual(['pause']);
    body.attach(recorder());
    expect(c.calls).toEqual(['pause', 'resume']);
  });

  it('passes its consumer’s back-pressure to undici, and reports it as paused', () => {
    const c = controller();
    const body = new UpstreamBody(c);
    body.attach(recorder());
    body.pause();
    expect(body.paused).toBe(true);
    body.resume();
    expect(body.paused).toBe(false);
    expect(c.calls).toEqual(['resume', 'pause', 'resume']);
  });

  it('destroyed without an error: aborts the request, and its consumer hears nothing more', () => {
    const c = controller();
    const body = new UpstreamBody(c);
    const sink = recorder();
    body.attach(sink);
    body.destroy();
    expect(c.calls).toContain('abort');
    expect((c.reason as { code?: string }).code).toBe('UND_ERR_ABORTED');
    body.fail(new Error('aborted')); // what undici answers the abort with
    body.push(Buffer.from('late'));
    expect(sink.seen).toEqual([]);
  });

  it('destroyed with an error: aborts with it and tells its consumer, once', () => {
    const c = controller();
    const body = new UpstreamBody(c);
    const sink = recorder();
    body.attach(sink);
    const idle = new Error('upstream body idle');
    body.destroy(idle);
    body.destroy(new Error('again'));
    expect(c.reason).toBe(idle);
    expect(c.calls.filter((x) => x === 'abort')).toHaveLength(1);
    expect(sink.seen).toEqual(['error upstream body idle']);
  });

  it('does not abort a body that already ended (its connection went back to the pool)', () => {
    const c = controller();
    const body = new UpstreamBody(c);
    body.finish();
    body.destroy();
    expect(c.calls).not.toContain('abort');
  });

  it('dump: reads a small body to its end, cuts one over the limit', () => {
    const small = controller();
    const a = new UpstreamBody(small);
    a.push(Buffer.alloc(10));
    a.dump(100);
    a.push(Buffer.alloc(10));
    a.finish();
    expect(small.calls).not.toContain('abort');

    const big = controller();
    const b = new UpstreamBody(big);
    b.push(Buffer.alloc(60));
    b.dump(100);
    expect(big.calls).not.toContain('abort');
    b.push(Buffer.alloc(60));
    expect(big.calls).toContain('abort');
  });

  it('readable(): the body as a stream, with its end, its back-pressure and its destruction', async () => {
    const c = controller();
    const body = new UpstreamBody(c);
    body.push(Buffer.from('he'));
    const stream = body.readable();
    body.push(Buffer.from('llo'));
    body.finish();
    expect(Buffer.concat(await stream.toArray()).toString()).toBe('hello');

    const d = controller();
    const cut = new UpstreamBody(d);
    cut.readable().destroy();
    expect(d.calls).toContain('abort');

    const e = controller();
    const failing = new UpstreamBody(e);
    const s = failing.readable();
    failing.fail(new Error('reset'));
    await expect(s.toArray()).rejects.toThrow('reset');

    const f = controller();
    const slow = new UpstreamBody(f);
    const t = slow.readable();
    slow.push(Buffer.alloc(t.readableHighWaterMark)); // fills the stream's buffer: reading upstream pauses
    expect(slow.paused).toBe(true);
    t.read();
    expect(slow.paused).toBe(false);
  });
});

describe('streamSource', () => {
  it('relays a stream’s chunks, end and error to one sink, and destroys it', async () => {
    const s = new PassThrough();
    const sink = recorder();
    const src = streamSource(s);
    src.attach(sink);
    s.end('abc');
    await new Promise((r) => s.once('end', r));
    expect(sink.seen).toEqual(['data abc', 'end']);

    const t = new PassThrough();
    const sink2 = recorder();
    streamSource(t).attach(sink2);
    streamSource(t).destroy(new Error('broken'));
    await new Promise((r) => t.once('close', r));
    expect(sink2.seen).toEqual(['error broken']);
    expect(t.destroyed).toBe(true);
  });
});
