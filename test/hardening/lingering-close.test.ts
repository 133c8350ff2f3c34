// A refusal sent before the body was read (413, 415, 503 body budget) must reach a client that is still
// sending. The gateway answers, then drains the rest of the body (bounded) before it closes: closed at once,
// the client's next write meets a reset and a client that reads after sending never sees the answer.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayHandle } from '../../src/gateway/main.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests } from '../helpers/gateway.js';
import { startServedGateway } from './served-gateway.js';
import { expectOpenAIError, httpRequest } from './support.js';

const MiB = 1024 * 1024;
const BODY = 6 * MiB; // well past what loopback socket buffers absorb, so an early close shows as EPIPE
const ATTEMPTS = 3;
const auth = { Authorization: `Bearer ${ALICE_KEY}` };

let upstream: RecordingUpstream;
let gw: GatewayHandle;
beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startServedGateway(standardManifests(upstream.baseURL), {
    bodyLimits: { jsonBytes: MiB, multipartBytes: 8 * MiB },
    maxBufferedBytes: 2 * MiB,
  });
});
afterAll(async () => {
  await gw?.close({ timeoutMs: 0 });
  await upstream?.close();
});

interface Reply {
  readonly status: number | undefined;
  readonly headers: Record<string, string>;
  readonly json: any;
  /** Everything received (latin1). */
  readonly text: string;
  /** The error the client met while sending, if any. */
  readonly writeError: string | undefined;
}

/**
 * A client that reads only once it has sent everything (as simple clients and scripts do): the answer waits in
 * its socket buffer meanwhile, and is lost if the connection is reset before it gets to read.
 */
function sendThenRead(head: Buffer, body: Buffer): Promise<Reply> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(new URL(gw.apiURL).port), '127.0.0.1');
    socket.pause();
    const chunks: Buffer[] = [];
    let writeError: string | undefined;
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => (writeError ??= err.code));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const headEnd = text.indexOf('\r\n\r\n');
      const headers: Record<string, string> = {};
      for (const line of text.slice(0, Math.max(0, headEnd)).split('\r\n').slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      let json: unknown;
      try {
        json = JSON.parse(text.slice(headEnd + 4, headEnd + 4 + Number(headers['content-length'])));
      } catch {
        json = undefined;
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]) || undefined, headers, json, text, writeError });
    });
    socket.write(head);
    socket.write(body, () => socket.resume());
  });
}

const post = (path: string, headers: Record<string, string>, length = BODY) =>
  httpRequest('POST', path, { ...auth, ...headers, 'Content-Length': String(length) });
const filler = (n = BODY) => Buffer.alloc(n, 0x20);

async function expectEveryAttemptAnswered(status: number, code: string, send: () => Promise<Reply>): Promise<void> {
  for (let i = 0; i < ATTEMPTS; i++) {
    const r = await send();
    expect(r.writeError, `attempt ${i + 1}`).toBeUndefined();
    expectOpenAIError(r, status, code);
    expect(r.headers['connection']).toBe('close');
    expect(r.headers['x-request-id']).toBeTruthy();
  }
}

describe('early refusals reach a client that is still sending (regression: EPIPE/ECONNRESET instead of the answer)', () => {
  it('413, declared Content-Length over the limit', async () => {
    await expectEveryAttemptAnswered(413, 'request_too_large', () =>
      sendThenRead(post('/v1/chat/completions', { 'Content-Type': 'application/json' }), filler()),
    );
  });

  it('413, a chunked body that grows past the limit', async () => {
    const head = httpRequest('POST', '/v1/chat/completions', { ...auth, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    const body = Buffer.concat([Buffer.from(`${BODY.toString(16)}\r\n`), filler(), Buffer.from('\r\n0\r\n\r\n')]);
    await expectEveryAttemptAnswered(413, 'request_too_large', () => sendThenRead(head, body));
  });

  it('415, a form sent to a JSON-only endpoint', async () => {
    await expectEveryAttemptAnswered(415, 'unsupported_content_type', () =>
      sendThenRead(post('/v1/chat/completions', { 'Content-Type': 'multipart/form-data; boundary=x' }), filler()),
    );
  });

  it('415, a compressed body', async () => {
    await expectEveryAttemptAnswered(415, 'unsupported_content_encoding', () =>
      sendThenRead(post('/v1/chat/completions', { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }), filler()),
    );
  });

  it('503, the body budget is full', async () => {
    // One request held at the upstream keeps its body (and its rewritten copy) in the 2 MiB budget.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let arrived!: () => void;
    const atUpstream = new Promise<void>((r) => (arrived = r));
    upstream.override('/v1/chat/completions', async (_req, res) => {
      arrived();
      await gate;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    try {
      const held = fetch(`${gw.apiURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', pad: 'x'.repeat(0.9 * MiB) }),
      });
      await atUpstream;
      await expectEveryAttemptAnswered(503, 'server_overloaded', () =>
        sendThenRead(post('/v1/audio/transcriptions', { 'Content-Type': 'multipart/form-data; boundary=x' }), filler()),
      );
      release();
      expect((await held).status).toBe(200);
    } finally {
      release();
      upstream.override('/v1/chat/completions', undefined);
    }
  });

  it('node:http: the 413 arrives and the upload ends without an error', async () => {
    for (let i = 0; i < ATTEMPTS; i++) {
      const outcome = await new Promise<{ status?: number; body: string; error?: string }>((resolve) => {
        const seen: { status?: number; body: string; error?: string } = { body: '' };
        const req = http.request(
          `${gw.apiURL}/v1/chat/completions`,
          {
            method: 'POST',
            agent: false,
            headers: { authorization: auth.Authorization, 'content-type': 'application/json', 'content-length': BODY },
          },
          (res) => {
            seen.status = res.statusCode;
            res.on('data', (d: Buffer) => (seen.body += d.toString()));
          },
        );
        req.on('error', (err: NodeJS.ErrnoException) => (seen.error ??= err.code));
        req.on('close', () => resolve(seen));
        req.end(filler());
      });
      expect(outcome.error, `attempt ${i + 1}`).toBeUndefined();
      expect(outcome.status).toBe(413);
      expect(JSON.parse(outcome.body).error.code).toBe('request_too_large');
    }
  });

  it('a small unread body is dropped and the connection kept', async () => {
    // node reads and drops a small remainder itself: no reason to close, a keep-alive client goes on using it.
    const small = httpRequest('POST', '/v1/chat/completions', { ...auth, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, '{}');
    const models = httpRequest('GET', '/v1/models', { ...auth, Connection: 'close' });
    const r = await sendThenRead(Buffer.concat([small, models]), Buffer.alloc(0));
    expect(r.status).toBe(415);
    expect(r.headers['connection']).not.toBe('close');
    expect(r.text).toMatch(/\r\n\r\n.*HTTP\/1\.1 200 /s);
    expect(r.writeError).toBeUndefined();
  });
});
