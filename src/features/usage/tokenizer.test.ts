import { describe, expect, it } from 'vitest';
import { waitUntil } from '../../../test/support/wait.js';
import { TokenizerWorker } from './tokenizer.js';

describe('TokenizerWorker', () => {
  it('starts on the first count, stops when idle, and starts again for the next', async () => {
    const tokenizer = new TokenizerWorker(50);
    expect(tokenizer.running).toBe(false);
    expect(await tokenizer.count(['Hello world'])).toEqual([2]);
    expect(tokenizer.running).toBe(true);
    await waitUntil(() => !tokenizer.running, 5_000, 'the idle worker to stop');
    expect(await tokenizer.count(['a b c', ''])).toEqual([3, 0]);
    expect(tokenizer.running).toBe(true);
  });

  it('answers counts sent together, in order', async () => {
    const tokenizer = new TokenizerWorker(50);
    const texts = Array.from({ length: 20 }, (_, i) => Array(i).fill('word').join(' '));
    const counts = await Promise.all(texts.map((t) => tokenizer.count([t])));
    expect(counts.map((c) => c[0])).toEqual(texts.map((_, i) => i));
  });
});
