import { describe, expect, it } from 'vitest';
import { AttemptAbort, untilAborted } from './attempt-abort.js';

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

  it('untilAborted: settles a waiting send with the abort, and drops the body of an answer that comes after it', async () => {
    const a = new AttemptAbort();
    let answer!: (r: { body: { destroy(): void } }) => void;
    let destroyed = false;
    const raced = untilAborted(a, new Promise<{ body: { destroy(): void } }>((r) => (answer = r)));
    a.abort(new Error('deadline'));
    await expect(raced).rejects.toThrow('deadline');
    answer({ body: { destroy: () => (destroyed = true) } });
    await new Promise((r) => setImmediate(r));
    expect(destroyed).toBe(true);
    // Aborted before: rejected at once.
    await expect(untilAborted(a, new Promise<{ body: { destroy(): void } }>(() => {}))).rejects.toThrow('deadline');
  });

  it('untilAborted: passes on the answer that comes first; a listener of the send itself takes over the abort', async () => {
    const a = new AttemptAbort();
    const body = {
      destroyed: false,
      destroy() {
        this.destroyed = true;
      },
    };
    const r = await untilAborted(a, Promise.resolve({ body }));
    expect(r.body).toBe(body);
    const heard: unknown[] = [];
    a.listen({ attemptAborted: (reason) => heard.push(reason) });
    a.abort('late');
    expect(body.destroyed).toBe(false);
    expect(heard).toEqual(['late']);
  });
});
