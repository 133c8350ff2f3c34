// The fake must do what its faults claim, or every resilience test built on it proves nothing.
import { request } from 'node:http';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/wait.js';
import { refusingBaseURL, startFaultyUpstream, type FaultyUpstream } from './faulty-upstream.js';

let up: FaultyUpstream | undefined;
afterEach(async () => {
  await up?.close();
  up = undefined;
});
const client = (baseURL: string, timeout = 2_000) => new OpenAI({ apiKey: 'sk-test', baseURL, maxRetries: 0, timeout });
const chat = (c: OpenAI) => c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

describe('faulty upstream', () => {
  it('answers ok, names itself and records the request', async () => {
    up = await startFaultyUpstream('alpha');
    const r = await chat(client(up.baseURL));
    expect(r.choices[0]?.message.content).toBe('from alpha');
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', json: { model: 'm' } });
  });

  it('streams when asked', async () => {
    up = await startFaultyUpstream('alpha');
    const s = await client(up.baseURL).chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const c of s) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('from alpha');
  });

  it('answers a status with retry-after', async () => {
    up = await startFaultyUpstream('alpha', { kind: 'status', status: 429, retryAfter: '3' });
    const e = await chat(client(up.baseURL)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect((e as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('3');
  });

  for (const kind of ['reset', 'reset-mid-headers'] as const)
    it(`${kind} ends the connection without a response`, async () => {
      up = await startFaultyUpstream('alpha', { kind });
      await expect(chat(client(up.baseURL))).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
      expect(up.requests).toHaveLength(1);
    });

  it('hang never answers', async () => {
    up = await startFaultyUpstream('alpha', { kind: 'hang' });
    const t0 = Date.now();
    await expect(chat(client(up.baseURL, 300))).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  });

  it('close-mid-stream breaks an SSE stream after the first chunk', async () => {
    up = await startFaultyUpstream('alpha', { kind: 'close-mid-stream', chunks: 1 });
    const s = await client(up.baseURL).chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const got: string[] = [];
    const err = await (async () => {
      for await (const c of s) got.push(c.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(got).toEqual(['part0 ']);
    expect(err).toBeInstanceOf(Error);
  });

  it('hang-mid-stream keeps the connection open and silent', async () => {
    up = await startFaultyUpstream('alpha', { kind: 'hang-mid-stream', chunks: 2 });
    const res = await fetch(`${up.baseURL}/chat/completions`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('part1')) text += new TextDecoder().decode((await reader.read()).value);
    const next = await Promise.race([reader.read().then(() => 'data'), new Promise((r) => setTimeout(() => r('silent'), 200))]);
    expect(next).toBe('silent');
    expect(up.openSockets()).toBe(1);
    await reader.cancel();
  });

  it('a refusing base URL refuses', async () => {
    await expect(chat(client(await refusingBaseURL()))).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
  });

  it('counts sockets and aborted requests', async () => {
    up = await startFaultyUpstream('alpha', { kind: 'hang' });
    const req = request(`${up.baseURL}/chat/completions`, { method: 'POST', agent: false });
    req.on('error', () => {});
    req.end('{}');
    await waitUntil(() => up!.requests.length > 0, 5_000, 'the request to arrive');
    expect(up.openSockets()).toBe(1);
    req.destroy();
    await waitUntil(() => up!.openSockets() === 0, 5_000, 'the socket to close');
    expect(up.abortedRequests()).toBe(1);
    expect(up.connections()).toBe(1);
  });
});
