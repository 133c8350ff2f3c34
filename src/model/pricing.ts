// What an upstream account charges, compiled from spec.backends[].pricing: every price in micro-units of the
// gateway's currency (money.ts). A price left out is undefined, never 0: what it would price has an unknown cost.
import type { Family } from './families.js';

/** The price of one image of a size and quality; an entry that leaves either out matches any. */
export interface ImagePrice {
  readonly size?: string;
  readonly quality?: string;
  /** Micro-units per image. */
  readonly price: number;
}

export interface Pricing {
  /** Per million input tokens that were neither read from nor written to the prompt cache. */
  readonly inputPerMTok?: number;
  /** Per million input tokens read from the prompt cache. */
  readonly cachedInputPerMTok?: number;
  /** Per million input tokens written to the prompt cache (Anthropic's 5-minute writes, OpenAI's cache_write_tokens). */
  readonly cacheWritePerMTok?: number;
  /** Per million input tokens written to the prompt cache for an hour (Anthropic's 1-hour writes). */
  readonly cacheWrite1hPerMTok?: number;
  /** Per million output tokens, reasoning tokens included. */
  readonly outputPerMTok?: number;
  /** Per million input tokens that are image tokens (gpt-image-1's input_tokens_details.image_tokens). */
  readonly imageInputPerMTok?: number;
  /** Per million output tokens that are image tokens (every output token of gpt-image-1). */
  readonly imageOutputPerMTok?: number;
  /** Per million input tokens that are audio tokens (audio chat models, gpt-4o-transcribe). */
  readonly audioInputPerMTok?: number;
  /** Per million output tokens that are audio tokens (audio chat models). */
  readonly audioOutputPerMTok?: number;
  /** Per image, by size and quality: the first entry that matches applies. */
  readonly imagePer?: readonly ImagePrice[];
  /** Per second of audio input (transcriptions, translations). */
  readonly audioInputPerSecond?: number;
  /** Per million characters of speech input. */
  readonly speechPerMChars?: number;
  /** Per second of generated video. */
  readonly videoPerSecond?: number;
  /** Per web search a server-side tool ran (Anthropic's web_search_requests, a Responses web_search_call). */
  readonly webSearchPerCall?: number;
  /** Per file search a server-side tool ran (a Responses file_search_call). */
  readonly fileSearchPerCall?: number;
}

const TOKENS: readonly Family[] = [
  'chat.completions',
  'responses',
  'messages',
  'embeddings',
  'images.generations',
  'images.edits',
  'audio.transcriptions',
  'audio.translations',
];

const IMAGES: readonly Family[] = ['images.generations', 'images.edits'];

/**
 * The families whose usage each price can apply to, as cost.ts prices them: a price on a backend whose route serves
 * none of them never bills (compile warns about it). Videos report no tokens; embeddings no output; cache writes are
 * reported by the Messages API and by OpenAI's chat and Responses (`cache_write_tokens`), 1-hour writes by Messages alone; image tokens come from the Images API alone, audio tokens from chat (audio
 * models), token-billed transcriptions and speech (gpt-4o-mini-tts's stream: text input, audio output).
 */
export const PRICE_FAMILIES: Readonly<Record<keyof Pricing, readonly Family[]>> = {
  // Speech's text input (gpt-4o-mini-tts), its output all audio tokens.
  inputPerMTok: [...TOKENS, 'audio.speech'],
  cachedInputPerMTok: TOKENS,
  cacheWritePerMTok: ['chat.completions', 'responses', 'messages'],
  cacheWrite1hPerMTok: ['messages'],
  outputPerMTok: TOKENS.filter((f) => f !== 'embeddings'),
  imageInputPerMTok: IMAGES,
  imageOutputPerMTok: IMAGES,
  audioInputPerMTok: ['chat.completions', 'audio.transcriptions'],
  audioOutputPerMTok: ['chat.completions', 'audio.speech'],
  imagePer: ['images.generations', 'images.edits'],
  audioInputPerSecond: ['audio.transcriptions', 'audio.translations'],
  speechPerMChars: ['audio.speech'],
  videoPerSecond: ['videos'],
  webSearchPerCall: ['responses', 'messages'],
  fileSearchPerCall: ['responses'],
};
