// What the gateway itself writes into a server-sent-event stream: keep-alive comments while a streaming request
// waits for its first upstream byte, and an error event when a stream has to end badly after its status line
// went out. The openai SDKs turn `event: error` (and any event whose data has an "error" object) into an APIError.
import type { ServerResponse } from 'node:http';

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
