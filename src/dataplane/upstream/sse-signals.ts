// What the gateway itself writes into a server-sent-event stream: keep-alive comments while a streaming request
// waits for its first upstream byte, and an error event when a stream has to end badly after its status line
// went out. The openai SDKs turn `event: error` (and any event whose data has an "error" object) into an APIError.
// A Responses stream's error event is also shaped as the Responses API's own (`type: "error"` and a
// `sequence_number`): clients that validate every event against that API (the Vercel AI SDK) need both.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { SseError, StreamProgress } from '../exchange/transform.js';
import { StreamReplacer, type Needle } from '../stream/stream-replace.js';
import { parseJson, providerError, typeForStatus } from './provider-error.js';

const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // nginx (and ingress-nginx) buffer responses unless told not to, which would swallow the keep-alives.
  'x-accel-buffering': 'no',
};

const SEQUENCE_NUMBER = Buffer.from('"sequence_number"');

/**
 * The `sequence_number` of a Responses event, from the data line chunk[from, to): the first `"sequence_number": N`
 * in it (the API puts it at the top level, before any nested object). A cheap byte search instead of a parse: it
 * runs on every event, and a wrong number would only misnumber the gateway's own error event.
 */
export function readSequenceNumber(chunk: Buffer, from: number, to: number): number | undefined {
  const at = chunk.indexOf(SEQUENCE_NUMBER, from);
  if (at === -1 || at + SEQUENCE_NUMBER.length > to) return undefined;
  let i = skipBlanks(chunk, at + SEQUENCE_NUMBER.length, to);
  if (chunk[i] !== 0x3a) return undefined; // :
  i = skipBlanks(chunk, i + 1, to);
  let n = 0;
  const first = i;
  for (; i < to && i - first < 15 && chunk[i]! >= 0x30 && chunk[i]! <= 0x39; i++) n = n * 10 + chunk[i]! - 0x30;
  // The number must end inside the line (a cut one would read short).
  return i > first && i < to ? n : undefined;
}

function skipBlanks(chunk: Buffer, i: number, to: number): number {
  while (i < to && (chunk[i] === 0x20 || chunk[i] === 0x09)) i++;
  return i;
}

/**
 * The error event that ends a stream. With `responses` (a Responses stream), it is the Responses API's error event,
 * continuing the upstream's sequence (0 when none was seen), and keeps the nested `error` object that the openai
 * SDKs read.
 */
export function sseErrorEvent(e: SseError, responses?: StreamProgress): string {
  const error = { message: e.message, type: e.type, param: null, code: e.code };
  const data = responses
    ? { type: 'error', sequence_number: (responses.lastSequenceNumber ?? -1) + 1, code: e.code, message: e.message, param: null, error }
    : { error };
  return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface RetoldError {
  /** Credentials to mask in the upstream's body before anything of it is read. */
  readonly mask: readonly Needle[];
  /** Set for a Responses stream (see sseErrorEvent). */
  readonly responses?: StreamProgress | undefined;
  /** The upstream's headers (AWS names its error's kind in one). */
  readonly headers?: IncomingHttpHeaders | undefined;
  /** The error event in the exchange's API's shape; default sseErrorEvent. */
  readonly event?: (e: SseError) => string;
}

/**
 * An upstream error response (status + body) retold as an error event, for a stream whose 200 already went out
 * (keep-alive committed it). The provider's message is kept (provider-error.ts); a body without one gets a generic message.
 * Reads at most `limit` bytes (decoded, when the body is a decoder's output) and waits at most `waitMs` for them.
 */
export async function upstreamErrorAsSse(status: number, body: Readable, waitMs: number, how: RetoldError, limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  const timer = setTimeout(() => body.destroy(), Math.max(1, waitMs));
  try {
    for await (const c of body) {
      chunks.push(c as Buffer);
      size += (c as Buffer).length;
      if (size > limit) break;
    }
  } catch {
    // timed out or failed: tell what we know
  } finally {
    clearTimeout(timer);
    if (!body.destroyed) body.destroy();
  }
  const text = StreamReplacer.replaceAll(Buffer.concat(chunks), how.mask).toString('utf8');
  // The provider's message in whatever shape it sent it (Bedrock's, Google's, OpenAI's); else the status alone.
  const told: SseError = providerError(status, parseJson(text), how.headers) ?? {
    message: `The upstream answered ${status}.`,
    type: typeForStatus(status),
    code: status === 429 ? 'rate_limit_exceeded' : null,
  };
  return how.event ? how.event(told) : sseErrorEvent(told, how.responses);
}

/**
 * Sends ": keep-alive" comments every intervalMs until stopped. The first one commits the response: status 200
 * and the SSE headers go out, after which a failure can only be told
 * as an error event. Stop it before writing any upstream byte, so a comment never lands inside an event.
 */
export class SseKeepAlive {
  readonly #res: ServerResponse;
  #timer: NodeJS.Timeout | undefined;
  #committed = false;
  #sent = 0;

  constructor(res: ServerResponse, intervalMs: number) {
    this.#res = res;
    if (intervalMs > 0) {
      this.#timer = setInterval(() => this.#tick(), intervalMs);
      this.#timer.unref();
    }
  }

  /** True once the gateway sent the status line and headers itself. */
  get committed(): boolean {
    return this.#committed;
  }

  /** Comments sent so far. */
  get sent(): number {
    return this.#sent;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    const res = this.#res;
    if (res.destroyed || res.writableEnded) return this.stop();
    if (!res.headersSent) {
      res.writeHead(200, SSE_HEADERS);
      this.#committed = true;
    } else if (!this.#committed) {
      // Someone else started this response; never interleave with it.
      return this.stop();
    }
    res.write(': keep-alive\n\n');
    this.#sent++;
  }
}
