import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { SseKeepAlive, sseErrorEvent } from './sse-signals.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

async function serve(handler: (res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(res));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

describe('SSE keep-alive and error events', () => {
  it('keep-alive comments commit the response and are invisible to the SDK; an error event surfaces as APIError', async () => {
    let keepAlive: SseKeepAlive | undefined;
    const baseURL = await serve((res) => {
      res.setHeader('x-request-id', 'r1'); // set early, as the request-id middleware does: writeHead keeps it
      keepAlive = new SseKeepAlive(res, 20);
      const poll = setInterval(() => {
        if (keepAlive!.sent < 3) return;
        clearInterval(poll);
        keepAlive!.stop();
        res.end(sseErrorEvent({ message: 'The upstream stream went silent.', type: 'server_error', code: 'upstream_timeout' }));
      }, 5);
    });
    const client = new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0 });
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('r1');
    const err = await (async () => {
      for await (const _ of stream) void _;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain('The upstream stream went silent.');
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_timeout');
    expect(keepAlive!.committed).toBe(true);
    expect(keepAlive!.sent).toBe(3);
  });

  it('stays silent when stopped before its first tick, and never writes into a response it did not start', async () => {
    const results: { committed: boolean; sent: number }[] = [];
    const baseURL = await serve((res) => {
      const quiet = new SseKeepAlive(res, 20);
      quiet.stop();
      res.writeHead(200, { 'content-type': 'application/json' });
      const intruder = new SseKeepAlive(res, 10);
      setTimeout(() => {
        results.push({ committed: quiet.committed, sent: quiet.sent }, { committed: intruder.committed, sent: intruder.sent });
        res.end('{"ok":true}');
      }, 60);
    });
    const body = await (await fetch(`${baseURL}/x`, { method: 'POST', body: '{}' })).text();
    expect(body).toBe('{"ok":true}');
    expect(results).toEqual([
      { committed: false, sent: 0 },
      { committed: false, sent: 0 },
    ]);
  });
});
