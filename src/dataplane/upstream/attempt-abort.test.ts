import { describe, expect, it } from 'vitest';
import { AttemptAbort } from './attempt-abort.js';

describe('AttemptAbort', () => {
  it('tells its one listener once, with the reason; a removed listener hears nothing', () => {
    const heard: unknown[] = [];
    const a = new AttemptAbort();
    a.listen({ attemptAborted: (r) => heard.push(r) });
    a.abort('first');
    a.abort('second');
    expect(heard).toEqual(['first']);
    expect([a.aborted, a.reason]).toEqual([true, 'first']);
    const b = new AttemptAbort();
    b.listen({ attemptAborted: (r) => heard.push(r) });
    b.listen(undefined);
    b.abort('third');
    expect(heard).toEqual(['first']);
  });

  it('settles a pending send with the abort, and drops the body of an answer that comes after it', async () => {
    const a = new AttemptAbort();
    let answer!: (r: { body: { destroy(): void } }) => void;
    let destroyed = false;
    const raced = a.race(new Promise<{ body: { destroy(): void } }>((r) => (answer = r)));
    a.abort(new Error('deadline'));
    await expect(raced).rejects.toThrow('deadline');
    answer({ body: { destroy: () => (destroyed = true) } });
    await new Promise((r) => setImmediate(r));
    expect(destroyed).toBe(true);
    // Aborted before the race began: rejected at once.
    await expect(a.race(new Promise<{ body: { destroy(): void } }>(() => {}))).rejects.toThrow('deadline');
  });

  it('passes on the answer that comes first, and an abort after it changes nothing', async () => {
    const a = new AttemptAbort();
    const body = {
      destroyed: false,
      destroy() {
        this.destroyed = true;
      },
    };
    const r = await a.race(Promise.resolve({ body }));
    a.abort(new Error('late'));
    expect(r.body).toBe(body);
    expect(body.destroyed).toBe(false);
  });
});
