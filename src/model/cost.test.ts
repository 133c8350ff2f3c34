// Worked examples: every expected figure is computed by hand in the comment beside it, in currency units (price per
// million × tokens / 1,000,000) and then in micro-units (µ, a millionth of a unit).
import { describe, expect, it } from 'vitest';
import { costOf, maxCostOf } from './cost.js';
import { parseMoney } from './money.js';
import type { Pricing } from './pricing.js';
import type { Usage } from './usage.js';

const µ = (text: string) => parseMoney(text)!;
/** Micro-units of a sum of (tokens × µ per million) terms, rounded half up once. */
const rounded = (perMillion: number) => Math.floor((perMillion + 500_000) / 1_000_000);
const usage = (u: Partial<Usage>): Usage => ({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, estimated: false, ...u });

/** Claude-style prices: cache reads a tenth of input, 5-minute writes 1.25×, 1-hour writes 2×. */
const anthropic: Pricing = {
  inputPerMTok: µ('3.00'),
  cachedInputPerMTok: µ('0.30'),
  cacheWritePerMTok: µ('3.75'),
  cacheWrite1hPerMTok: µ('6.00'),
  outputPerMTok: µ('15.00'),
};
const mini: Pricing = { inputPerMTok: µ('0.15'), cachedInputPerMTok: µ('0.075'), outputPerMTok: µ('0.60') };

describe('costOf', () => {
  it('prices every kind of input token and the output (reasoning included) on an Anthropic-style bill', () => {
    const u = usage({
      inputTokens: 12_000,
      cachedInputTokens: 8_000,
      cacheWriteInputTokens: 2_000,
      cacheWrite1hInputTokens: 500,
      outputTokens: 1_500,
      reasoningTokens: 400,
    });
    // uncached  12,000 - 8,000 - 2,000 = 2,000 × 3.00 / 1e6 = 0.006     =  6,000 µ
    // cached                     8,000 × 0.30 / 1e6 = 0.0024    =  2,400 µ
    // 5-min writes   2,000 - 500 = 1,500 × 3.75 / 1e6 = 0.005625  =  5,625 µ
    // 1-hour writes                 500 × 6.00 / 1e6 = 0.003     =  3,000 µ
    // output (400 reasoning in it) 1,500 × 15.00 / 1e6 = 0.0225    = 22,500 µ
    //                                                  total      = 39,525 µ = 0.039525
    const c = costOf(u, anthropic, 'chat.completions');
    expect(c).toMatchObject({ micros: 39_525, known: true, estimated: false, missing: [] });
    expect(c.lines.map((l) => [l.price, l.quantity])).toEqual([
      ['inputPerMTok', 2_000],
      ['cachedInputPerMTok', 8_000],
      ['cacheWritePerMTok', 1_500],
      ['cacheWrite1hPerMTok', 500],
      ['outputPerMTok', 1_500],
    ]);
  });

  it('adds server-side tool calls at their price per call, and is unknown without it or when they were not counted', () => {
    const searching = usage({ inputTokens: 1_000, outputTokens: 100, serverToolCalls: { webSearch: 3, webFetch: 2 } });
    // tokens 1,000 × 3.00 + 100 × 15.00 = 4,500 per million = 4,500 µ; 3 searches × 0.01 = 30,000 µ; fetches: tokens only
    const priced: Pricing = { ...anthropic, webSearchPerCall: µ('0.01') };
    const c = costOf(searching, priced, 'messages');
    expect(c).toMatchObject({ micros: 34_500, known: true, missing: [] });
    expect(c.lines.at(-1)).toMatchObject({ price: 'webSearchPerCall', quantity: 3 });
    // No price for the searches: unknown, and the figure is only what could be priced.
    expect(costOf(searching, anthropic, 'messages')).toMatchObject({ micros: 4_500, known: false, missing: ['webSearchPerCall'] });
    const files = usage({ inputTokens: 1_000, serverToolCalls: { fileSearch: 1 } });
    expect(costOf(files, { ...mini, fileSearchPerCall: µ('0.0025') }, 'responses')).toMatchObject({ micros: 150 + 2_500, known: true });
    // Calls that could not be counted: unknown whatever the prices.
    const uncounted = usage({ inputTokens: 1_000, serverToolCalls: { uncounted: true } });
    expect(costOf(uncounted, { ...mini, webSearchPerCall: µ('0.01'), fileSearchPerCall: µ('0.0025') }, 'responses')).toMatchObject({
      micros: 150,
      known: false,
      missing: ['serverToolCalls'],
    });
    // No calls: the prices change nothing.
    expect(costOf(usage({ inputTokens: 1_000 }), { ...mini, webSearchPerCall: µ('0.01') }, 'responses')).toMatchObject({ micros: 150, known: true });
  });

  it('sums the exact lines and rounds once, half up', () => {
    // uncached 1,234 - 1,024 = 210 × 0.15  / 1e6 =  31.5 µ
    // cached             1,024 × 0.075 / 1e6 =  76.8 µ
    // output                57 × 0.60  / 1e6 =  34.2 µ
    //                                   total = 142.5 µ → half up → 143 µ
    expect(costOf(usage({ inputTokens: 1_234, cachedInputTokens: 1_024, outputTokens: 57 }), mini, 'responses').micros).toBe(143);
    // Three lines of 0.4 µ each: rounded per line they would be 0; their exact sum 1.2 µ rounds to 1.
    const tiny: Pricing = { inputPerMTok: µ('0.20'), cachedInputPerMTok: µ('0.10'), outputPerMTok: µ('0.40') };
    // uncached 2 × 0.20 = 0.4 µ; cached 4 × 0.10 = 0.4 µ; output 1 × 0.40 = 0.4 µ; total 1.2 µ → 1 µ
    expect(costOf(usage({ inputTokens: 6, cachedInputTokens: 4, outputTokens: 1 }), tiny, 'chat.completions').micros).toBe(1);
    // 0.4 µ alone rounds down to 0 (known, and 0 is then the true figure to the micro-unit).
    expect(costOf(usage({ inputTokens: 2 }), tiny, 'embeddings')).toMatchObject({ micros: 0, known: true });
  });

  it('charges cached input at the input price when no cached price is set (never more than a cache hit costs)', () => {
    const p: Pricing = { inputPerMTok: µ('0.50'), outputPerMTok: µ('1.50') };
    // uncached 1,000 - 600 = 400 × 0.50 = 200 µ; cached 600 × 0.50 = 300 µ; output 100 × 1.50 = 150 µ; total 650 µ
    const c = costOf(usage({ inputTokens: 1_000, cachedInputTokens: 600, outputTokens: 100 }), p, 'chat.completions');
    expect(c).toMatchObject({ micros: 650, known: true });
    expect(c.lines.map((l) => l.price)).toEqual(['inputPerMTok', 'inputPerMTok', 'outputPerMTok']);
  });

  it('is unknown, never 0, without prices, and names the prices that are missing', () => {
    expect(costOf(usage({ inputTokens: 10 }), undefined, 'chat.completions')).toMatchObject({ known: false, missing: ['pricing'] });
    // Even nothing consumed is unknown on a backend with no price: the gateway cannot tell it is free.
    expect(costOf(usage({}), undefined, 'embeddings').known).toBe(false);
    // No output price: known false; micros holds only the input, 100 × 3.00 = 300 µ (a lower bound).
    const noOutput = costOf(usage({ inputTokens: 100, outputTokens: 10, estimated: true }), { inputPerMTok: µ('3.00') }, 'chat.completions');
    expect(noOutput).toMatchObject({ micros: 300, known: false, estimated: true, missing: ['outputPerMTok'] });
    // Cache writes cost more than input, so a missing write price is unknown rather than the input price.
    const writes = costOf(usage({ inputTokens: 100, cacheWriteInputTokens: 50 }), mini, 'chat.completions');
    expect(writes).toMatchObject({ known: false, missing: ['cacheWritePerMTok'] });
    // Zero of something needs no price: an embedding has no output.
    expect(costOf(usage({ inputTokens: 1_000 }), { inputPerMTok: µ('0.02') }, 'embeddings')).toMatchObject({ micros: 20, known: true });
  });

  it('prices images by the first entry matching size and quality, and is unknown when none matches', () => {
    const dalle: Pricing = {
      imagePer: [
        { size: '1024x1024', quality: 'standard', price: µ('0.04') },
        { size: '1024x1024', quality: 'hd', price: µ('0.08') },
        { quality: 'hd', price: µ('0.12') },
        { size: '1024x1024', price: µ('0.01') }, // never reached for standard or hd 1024x1024: the entries above match first
      ],
    };
    const images = (count: number, size?: string, quality?: string) => usage({ images: { count, ...(size ? { size } : {}), ...(quality ? { quality } : {}) } });
    // 3 × 0.12 (third entry: any size, hd) = 0.36 = 360,000 µ
    expect(costOf(images(3, '1792x1024', 'hd'), dalle, 'images.generations')).toMatchObject({ micros: 360_000, known: true });
    // 2 × 0.08 = 0.16 = 160,000 µ
    expect(costOf(images(2, '1024x1024', 'hd'), dalle, 'images.generations').micros).toBe(160_000);
    // 1024x1024 with no quality named: only the fourth entry leaves quality out; 1 × 0.01 = 10,000 µ
    expect(costOf(images(1, '1024x1024'), dalle, 'images.generations').micros).toBe(10_000);
    // 512x512 standard matches nothing: unknown
    expect(costOf(images(1, '512x512', 'standard'), dalle, 'images.edits')).toMatchObject({ known: false, missing: ['imagePer'] });
  });

  it('prices a token-billed image model by its tokens, and an image with neither tokens nor imagePer as unknown', () => {
    const gptImage: Pricing = { inputPerMTok: µ('5.00'), outputPerMTok: µ('40.00') };
    // input 50 × 5.00 = 250 µ; output 4,160 × 40.00 = 166,400 µ; total 166,650 µ; the image itself is no line
    const u = usage({ inputTokens: 50, outputTokens: 4_160, images: { count: 1, quality: 'high' } });
    expect(costOf(u, gptImage, 'images.generations')).toMatchObject({ micros: 166_650, known: true });
    expect(costOf(usage({ images: { count: 1 } }), gptImage, 'images.generations')).toMatchObject({ known: false, missing: ['imagePer'] });
  });

  it('prices a request by the unit alone when its backend sets that price, though the model also reports tokens', () => {
    // gpt-image-1 reports tokens for every image; an operator who prices it per image is billed per image.
    const perImage: Pricing = { imagePer: [{ size: '1024x1024', quality: 'high', price: µ('0.167') }] };
    const u = usage({ inputTokens: 50, outputTokens: 4_160, images: { count: 2, size: '1024x1024', quality: 'high' } });
    // 2 × 0.167 = 0.334 = 334,000 µ (not unknown for want of token prices)
    expect(costOf(u, perImage, 'images.generations')).toMatchObject({ micros: 334_000, known: true, missing: [] });
    // With token prices set as well, the image is still billed once: its tokens are the same bill in other terms.
    const both: Pricing = { ...perImage, inputPerMTok: µ('5.00'), outputPerMTok: µ('40.00') };
    expect(costOf(u, both, 'images.generations').micros).toBe(334_000);
    // A transcription model that reports tokens and its seconds, on a backend priced by the second:
    // 30 s × 0.0001 = 0.003 = 3,000 µ
    const whisper: Pricing = { audioInputPerSecond: µ('0.0001'), inputPerMTok: µ('2.50'), outputPerMTok: µ('10.00') };
    expect(costOf(usage({ inputTokens: 300, outputTokens: 40, seconds: 30 }), whisper, 'audio.transcriptions').micros).toBe(3_000);
    // Without its seconds, the same answer is priced by its tokens: 300 × 2.50 + 40 × 10.00 = 1,150 µ
    expect(costOf(usage({ inputTokens: 300, outputTokens: 40 }), whisper, 'audio.transcriptions').micros).toBe(1_150);
  });

  it('prices audio input and video by the second (to the millisecond) and speech by the character', () => {
    // whisper at 0.0001 a second (0.006 a minute): 62.35 s = 62,350 ms × 100 µ / 1,000 = 6,235 µ
    const whisper: Pricing = { audioInputPerSecond: µ('0.0001') };
    expect(costOf(usage({ seconds: 62.35 }), whisper, 'audio.transcriptions')).toMatchObject({ micros: 6_235, known: true });
    expect(costOf(usage({ seconds: 62.35 }), whisper, 'audio.translations').micros).toBe(6_235);
    // 8 s of video × 0.10 = 0.80 = 800,000 µ
    expect(costOf(usage({ seconds: 8 }), { videoPerSecond: µ('0.10') }, 'videos').micros).toBe(800_000);
    // seconds of a video are not audio input: the video price is missing
    expect(costOf(usage({ seconds: 8 }), whisper, 'videos')).toMatchObject({ known: false, missing: ['videoPerSecond'] });
    // 1,234 characters × 15.00 per million = 0.01851 = 18,510 µ
    expect(costOf(usage({ characters: 1_234 }), { speechPerMChars: µ('15.00') }, 'audio.speech').micros).toBe(18_510);
    // A transcription model billed by tokens reports tokens and no seconds: priced by them.
    expect(costOf(usage({ inputTokens: 1_000, outputTokens: 100 }), mini, 'audio.transcriptions')).toMatchObject({ micros: 210, known: true });
  });

  it('prices image and audio tokens at their own prices, and is unknown without them (no text stand-in)', () => {
    // gpt-image-1: text input 5.00, image input 10.00, image output 40.00 per million. 50 input tokens of which 40
    // image, 4,160 output image tokens: 10 × 5.00 + 40 × 10.00 + 4,160 × 40.00 = 166,850 per million → 0.166850.
    const image: Pricing = { inputPerMTok: µ('5.00'), imageInputPerMTok: µ('10.00'), outputPerMTok: µ('40.00'), imageOutputPerMTok: µ('40.00') };
    const gen = usage({ inputTokens: 50, imageInputTokens: 40, outputTokens: 4_160, imageOutputTokens: 4_160 });
    expect(costOf(gen, image, 'images.generations')).toMatchObject({ micros: 166_850, known: true });
    // An audio chat answer: 1,000 input of which 200 cached and 300 audio, 500 output of which 400 audio, at 2.50
    // text / 1.25 cached / 40.00 audio input, 10.00 text / 80.00 audio output: 500 × 2.50 + 200 × 1.25 + 300 × 40.00
    // + 100 × 10.00 + 400 × 80.00 = 1,250 + 250 + 12,000 + 1,000 + 32,000 = 46,500 per million → 0.046500.
    const audio: Pricing = {
      inputPerMTok: µ('2.50'),
      cachedInputPerMTok: µ('1.25'),
      audioInputPerMTok: µ('40.00'),
      outputPerMTok: µ('10.00'),
      audioOutputPerMTok: µ('80.00'),
    };
    const chat = usage({ inputTokens: 1_000, cachedInputTokens: 200, audioInputTokens: 300, outputTokens: 500, audioOutputTokens: 400 });
    expect(costOf(chat, audio, 'chat.completions')).toMatchObject({ micros: 46_500, known: true });
    // The same answer on a backend with text prices alone: unknown, the text part a lower bound (not a 16× under-charge).
    expect(costOf(chat, mini, 'chat.completions')).toMatchObject({ known: false, missing: ['audioInputPerMTok', 'audioOutputPerMTok'] });
    // Audio and image parts never price more tokens than the uncached input holds.
    expect(costOf(usage({ inputTokens: 10, cachedInputTokens: 8, audioInputTokens: 10 }), audio, 'chat.completions').micros).toBe(
      rounded(8 * 1.25e6 + 2 * 40e6),
    );
  });

  it('stays exact past 2^53 and clamps what no budget could hold', () => {
    // 123,456,789,012 tokens × 7.654321 per million = 944,977.892727120852 → 944,977,892,727 µ (the product of
    // tokens and price in µ, 944,977,892,727,120,852, is past 2^53 ≈ 9.007e15)
    expect(costOf(usage({ inputTokens: 123_456_789_012 }), { inputPerMTok: µ('7.654321') }, 'embeddings').micros).toBe(944_977_892_727);
    const huge = costOf(usage({ outputTokens: 1e12 }), { outputPerMTok: µ('999999999.999999') }, 'chat.completions');
    expect(huge.micros).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('never charges a negative amount when the upstream reports more cached than input tokens', () => {
    // uncached max(0, 10 - 20) = 0; cached 20 × 0.075 = 1.5 µ → 2 µ
    expect(costOf(usage({ inputTokens: 10, cachedInputTokens: 20 }), mini, 'chat.completions').micros).toBe(2);
  });
});

describe('maxCostOf', () => {
  it('reserves every input token at the highest input-side price and the output at the output price', () => {
    // input 10,000 × 6.00 (1-hour cache writes cost most) = 0.06 = 60,000 µ; output 4,096 × 15.00 = 61,440 µ; 121,440 µ
    expect(maxCostOf({ inputTokens: 10_000, outputTokens: 4_096 }, anthropic, 'chat.completions')).toMatchObject({ micros: 121_440, known: true });
    // input 3 × 0.15 = 0.45 µ; output 1 × 0.60 = 0.6 µ; 1.05 µ → rounded up → 2 µ
    expect(maxCostOf({ inputTokens: 3, outputTokens: 1 }, mini, 'chat.completions').micros).toBe(2);
  });

  it('reserves input and output at an image or audio price where the family reports such tokens and it is higher', () => {
    const audio: Pricing = { inputPerMTok: µ('2.50'), audioInputPerMTok: µ('40.00'), outputPerMTok: µ('10.00'), audioOutputPerMTok: µ('80.00') };
    // 100 × 40.00 + 10 × 80.00 = 4,800 per million → 0.0048 (rounded up: exact).
    expect(maxCostOf({ inputTokens: 100, outputTokens: 10 }, audio, 'chat.completions').micros).toBe(4_800);
    // Responses reports no audio tokens: the text prices bound it. 100 × 2.50 + 10 × 10.00 = 350 per million → 0.000350.
    expect(maxCostOf({ inputTokens: 100, outputTokens: 10 }, audio, 'responses').micros).toBe(350);
  });

  it('is unknown without an input or output price, or without pricing', () => {
    expect(maxCostOf({ inputTokens: 1, outputTokens: 1 }, { cachedInputPerMTok: µ('1'), outputPerMTok: µ('1') }, 'responses')).toMatchObject({
      known: false,
      missing: ['inputPerMTok'],
    });
    expect(maxCostOf({ inputTokens: 1, outputTokens: 0 }, undefined, 'embeddings').known).toBe(false);
  });

  it('reserves images, seconds and characters as costOf prices them', () => {
    const p: Pricing = { imagePer: [{ quality: 'hd', price: µ('0.08') }], videoPerSecond: µ('0.10') };
    // 4 × 0.08 = 320,000 µ
    expect(maxCostOf({ inputTokens: 0, outputTokens: 0, images: { count: 4, quality: 'hd' } }, p, 'images.generations').micros).toBe(320_000);
    // 12 s × 0.10 = 1,200,000 µ
    expect(maxCostOf({ inputTokens: 0, outputTokens: 0, seconds: 12 }, p, 'videos').micros).toBe(1_200_000);
  });

  it('is never below the cost of a usage the reservation covers', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % (n + 1);
    };
    for (let i = 0; i < 2_000; i++) {
      const r = { inputTokens: rand(100_000), outputTokens: rand(10_000) };
      const input = rand(r.inputTokens);
      const cached = rand(input);
      const writes = rand(input - cached);
      const u = usage({
        inputTokens: input,
        cachedInputTokens: cached,
        cacheWriteInputTokens: writes,
        cacheWrite1hInputTokens: rand(writes),
        outputTokens: rand(r.outputTokens),
      });
      expect(costOf(u, anthropic, 'chat.completions').micros).toBeLessThanOrEqual(maxCostOf(r, anthropic, 'chat.completions').micros);
    }
  });
});
