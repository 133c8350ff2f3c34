// Answers whose ids the gateway seals are rewritten as they stream: the gateway never holds a whole body (or a
// whole event), so concurrent large answers cannot grow its memory, and no answer is too large to be sealed
// (a client must never receive an upstream id it cannot use for a follow-up).
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

const MiB = 1024 * 1024;

let upstream: RecordingUpstream;
let gw: TestGateway;
beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startGateway(standardManifests(upstream.baseURL));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});
afterEach(() => upstream.override('/v1/responses', undefined));

/** Writes `size` bytes of filler in 64 KiB writes, honouring back-pressure. */
async function filler(res: ServerResponse, size: number): Promise<void> {
  const block = Buffer.alloc(64 * 1024, 'x');
  for (let sent = 0; sent < size; sent += block.length) {
    if (!res.write(block.subarray(0, Math.min(block.length, size - sent)))) await new Promise((r) => res.once('drain', r));
  }
}

function createResponse(stream = false) {
  return fetch(`${gw.baseURL}/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hi', stream }),
  });
}

describe('large answers with sealed ids', () => {
  it('a 40 MB Response has both its ids sealed', async () => {
    upstream.override('/v1/responses', async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"resp_big","object":"response","output":[{"type":"message","content":[{"type":"output_text","text":"');
      await filler(res, 40 * MiB);
      res.end('"}]}],"previous_response_id":"resp_prev"}');
    });
    const res = await createResponse();
    const body = JSON.parse(Buffer.from(await res.arrayBuffer()).toString('utf8'));
    expect(body.id).toMatch(/^resp_/);
    expect(body.id).not.toBe('resp_big');
    expect(body.previous_response_id).toMatch(/^resp_/);
    expect(body.previous_response_id).not.toBe('resp_prev');
    expect(body.output[0].content[0].text).toHaveLength(40 * MiB);
  });

  it('a sealed answer flows to the client before the upstream has finished it (no whole-body buffering)', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    upstream.override('/v1/responses', async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"resp_flow","output":[{"text":"');
      await filler(res, 4 * MiB);
      await released; // the rest only once the client has seen the first megabyte
      res.end('"}]}');
    });
    let head = '';
    const firstMiB = async () => {
      const reader = (await createResponse()).body!.getReader();
      for (let received = 0; received < MiB; ) {
        const { value, done } = await reader.read();
        if (done) throw new Error('ended early');
        if (head.length < 100) head += Buffer.from(value).toString('latin1', 0, 100);
        received += value.length;
      }
      return reader;
    };
    // A gateway that holds the body until its end never delivers the first megabyte: bound the wait.
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the first megabyte did not arrive')), 10_000).unref());
    const reader = await Promise.race([firstMiB(), timeout]);
    release();
    while (!(await reader.read()).done);
    expect(head).toMatch(/^\{"id":"resp_/);
    expect(head).not.toContain('resp_flow');
  });

  it('a 20 MB response.completed event has its ids sealed', async () => {
    upstream.override('/v1/responses', async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_ev","status":"in_progress","output":[]}}\n\n',
      );
      res.write(
        'event: response.completed\ndata: {"type":"response.completed","sequence_number":1,"response":{"output":[{"type":"message","content":[{"type":"output_text","text":"',
      );
      await filler(res, 20 * MiB);
      res.end('"}]}],"id":"resp_ev","status":"completed"}}\n\n');
    });
    const ids: string[] = [];
    for await (const e of await gw.client().responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true })) {
      if (e.type === 'response.created' || e.type === 'response.completed') ids.push(e.response.id);
    }
    expect(ids).toHaveLength(2);
    expect(ids[0]).not.toBe('resp_ev');
    expect(ids[1]).toBe(ids[0]);
  });
});
