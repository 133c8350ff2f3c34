// What the gateway itself writes into a server-sent-event stream: keep-alive comments while a streaming request
// waits for its first upstream byte, and an error event when a stream has to end badly after its status line
// went out. The openai SDKs turn `event: error` (and any event whose data has an "error" object) into an APIError.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // nginx (and ingress-nginx) buffer responses unless told not to, which would swallow the keep-alives.
  'x-accel-buffering': 'no',
};

export interface SseError {
  readonly message: string;
  readonly type: string;
  readonly code: string | null;
}

export function sseErrorEvent(e: SseError): string {
  return `event: error\ndata: ${JSON.stringify({ error: { message: e.message, type: e.type, param: null, code: e.code } })}\n\n`;
}

/**
 * An upstream error response (status + body) retold as an error event, for a stream whose 200 already went out
 * (keep-alive committed it). The upstream's OpenAI-shaped error is kept; anything else gets a generic message.
 * Reads at most `limit` bytes and waits at most `waitMs` for them.
 */
export async function upstreamErrorAsSse(status: number, body: Readable, waitMs: number, limit = 64 * 1024): Promise<string> {
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
  const fallback: SseError = {
    message: `The upstream answered ${status}.`,
    type: status >= 500 ? 'server_error' : 'invalid_request_error',
    code: status === 429 ? 'rate_limit_exceeded' : null,
  };
  try {
    const e = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: Partial<Record<keyof SseError, unknown>> }).error;
    if (e && typeof e.message === 'string')
      return sseErrorEvent({
        message: e.message,
        type: typeof e.type === 'string' ? e.type : fallback.type,
        code: typeof e.code === 'string' ? e.code : fallback.code,
      });
  } catch {
    // not JSON
  }
  return sseErrorEvent(fallback);
}

/**
 * Sends ": keep-alive" comments every intervalMs until stopped. The first one commits the response: status 200
 * and the SSE headers go out (plus `extraHeaders`, e.g. x-request-id), after which a failure can only be told
 * as an error event. Stop it before writing any upstream byte, so a comment never lands inside an event.
 */
export class SseKeepAlive {
  readonly #res: ServerResponse;
  readonly #extraHeaders: () => Record<string, string>;
  #timer: NodeJS.Timeout | undefined;
  #committed = false;
  #sent = 0;

  constructor(res: ServerResponse, intervalMs: number, extraHeaders: () => Record<string, string> = () => ({})) {
    this.#res = res;
    this.#extraHeaders = extraHeaders;
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
      res.writeHead(200, { ...this.#extraHeaders(), ...SSE_HEADERS });
      this.#committed = true;
    } else if (!this.#committed) {
      // Someone else started this response; never interleave with it.
      return this.stop();
    }
    res.write(': keep-alive\n\n');
    this.#sent++;
  }
}
