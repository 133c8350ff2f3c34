import { describe, expect, it } from 'vitest';
import { type KeptResponse, MemoryKeptResponses } from './kept-responses.js';

const response = (id: string, text = 'Hello.'): KeptResponse => {
  const message = { type: 'message', id: `msg_${id}_0`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text }] };
  return { id, input: [{ role: 'user', content: 'Hi.' }], response: { id, object: 'response', output: [message] } };
};

describe('MemoryKeptResponses', () => {
  it('finds what it kept for the scope, as its own copy; not what another scope kept', async () => {
    const kept = new MemoryKeptResponses();
    kept.keep('ns/alice', response('resp_a'));
    kept.keep('ns/alice', response('resp_b'));
    const found = await kept.find('ns/alice', ['resp_a', 'resp_b', 'resp_other']);
    expect([...found.keys()]).toEqual(['resp_a', 'resp_b']);
    expect(found.get('resp_a')).toEqual(response('resp_a'));
    (found.get('resp_a')!.input as unknown[]).push('changed');
    expect((await kept.find('ns/alice', ['resp_a'])).get('resp_a')).toEqual(response('resp_a'));
    expect((await kept.find('ns/bob', ['resp_a', 'resp_b'])).size).toBe(0);
  });

  it('forgets a response once its time is up', async () => {
    let now = 1_000;
    const kept = new MemoryKeptResponses({ ttlMs: 60_000, now: () => now });
    kept.keep('s', response('resp_1'));
    now += 59_000;
    expect((await kept.find('s', ['resp_1'])).size).toBe(1);
    now += 2_000;
    expect((await kept.find('s', ['resp_1'])).size).toBe(0);
  });

  it('within its byte bound: the least recently used go first, and a record too large is not kept', async () => {
    // Nine records fit in the bound, not ten; one larger than an eighth of the bound is not kept.
    const text = 'x'.repeat(250);
    const bytes = 2 * (JSON.stringify(response('resp_0', text)).length + 's\nresp_0'.length);
    const kept = new MemoryKeptResponses({ maxBytes: Math.floor(bytes * 9.5) });
    const ids = Array.from({ length: 9 }, (_, i) => `resp_${i}`);
    for (const id of ids) kept.keep('s', response(id, text));
    expect((await kept.find('s', ids)).size).toBe(9);
    expect((await kept.find('s', ['resp_0'])).size).toBe(1); // now the most recently used
    kept.keep('s', response('resp_9', text));
    kept.keep('s', response('resp_10', text));
    expect([...(await kept.find('s', [...ids, 'resp_9', 'resp_10'])).keys()]).toEqual(['resp_0', ...ids.slice(3), 'resp_9', 'resp_10']);
    kept.keep('s', response('resp_big', 'y'.repeat(600)));
    expect((await kept.find('s', ['resp_big'])).size).toBe(0);
  });
});
