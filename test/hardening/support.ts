// Shared by the hardening tests: raw-socket requests (for input no well-behaved client would send), an
// OpenAI-error assertion, and a tripwire for errors that escape the request path (process-level events).
import net from 'node:net';
import { expect } from 'vitest';

export interface RawReply {
  /** Everything the server sent, decoded as latin1 (byte for byte). */
  readonly text: string;
  /** The server closed the connection before `waitMs`. */
  readonly closed: boolean;
  readonly status: number | undefined;
  /** Parsed JSON of the first response's body, when it has one. */
  readonly json: any;
  readonly headers: Record<string, string>;
}

/** Writes `parts` to a fresh connection (a pause of `gapMs` between parts) and collects the reply. */
export function rawRequest(origin: string, parts: (string | Buffer)[], opts: { waitMs?: number; gapMs?: number } = {}): Promise<RawReply> {
  const url = new URL(origin);
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let closed = false;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseReply(Buffer.concat(chunks).toString('latin1'), closed));
    };
    const timer = setTimeout(finish, opts.waitMs ?? 2_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      finish();
    });
    void (async () => {
      for (const [i, p] of parts.entries()) {
        if (i > 0 && opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
        if (socket.destroyed) return;
        socket.write(p);
      }
    })();
  });
}

function parseReply(text: string, closed: boolean): RawReply {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
  const headEnd = text.indexOf('\r\n\r\n');
  const headers: Record<string, string> = {};
  for (const line of text
    .slice(0, headEnd < 0 ? text.length : headEnd)
    .split('\r\n')
    .slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  let json: unknown;
  if (headEnd >= 0) {
    const length = Number(headers['content-length'] ?? NaN);
    const body = Number.isFinite(length) ? text.slice(headEnd + 4, headEnd + 4 + length) : text.slice(headEnd + 4);
    try {
      json = JSON.parse(Buffer.from(body, 'latin1').toString('utf8'));
    } catch {
      json = undefined;
    }
  }
  return { text, closed, status: m ? Number(m[1]) : undefined, json, headers };
}

/** A raw HTTP/1.1 request with the given head lines and body (content-length computed unless a header sets it). */
export function httpRequest(method: string, path: string, headers: Record<string, string>, body: string | Buffer = ''): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: gateway.test'];
  const lower = Object.keys(headers).map((k) => k.toLowerCase());
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (!lower.includes('content-length') && !lower.includes('transfer-encoding')) lines.push(`Content-Length: ${bytes.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes]);
}

/** A fetch answer read whole: status, headers, body text, and its JSON when it parses. */
export async function readAnswer(res: Response): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Status, OpenAI error shape and JSON content type. */
export function expectOpenAIError(
  r: { status: number | undefined; headers: Record<string, string> | Headers; json: any },
  status: number,
  code: string | null,
): void {
  const contentType = r.headers instanceof Headers ? r.headers.get('content-type') : r.headers['content-type'];
  expect(r.status, JSON.stringify(r.json)).toBe(status);
  expect(contentType).toMatch(/^application\/json/);
  expect(r.json?.error).toMatchObject({ message: expect.any(String), type: expect.any(String), code });
  expect(Object.keys(r.json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
}

/**
 * Records uncaught exceptions and unhandled rejections while installed. Anything recorded means the request
 * path let an error escape: in production that is a crashed process.
 */
export function processTripwire(): { readonly escaped: unknown[]; remove(): void } {
  const escaped: unknown[] = [];
  const onError = (err: unknown) => escaped.push(err);
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  return {
    escaped,
    remove() {
      process.off('uncaughtException', onError);
      process.off('unhandledRejection', onError);
    },
  };
}
