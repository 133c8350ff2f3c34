import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SealContext } from '../routing/id-rewrite.js';
import { IdSealer } from '../routing/sealed-id.js';
import { createResponsesIdRewriteStream, createSseRewriteStream, rewriteSseEvent, SseEventSplitter } from './sse-id-rewrite.js';

const sealer = new IdSealer([randomBytes(32)]);
const ctx: SealContext = { sealer, model: 'gpt-x', backend: 'primary', owner: 'ns/alice' };
const sealed = (id: string) => sealer.seal({ kind: 'response', upstreamId: id, model: 'gpt-x', backend: 'primary', owner: 'ns/alice' });

const lifecycle = (type: string, seq: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type, sequence_number: seq, response: { id: 'resp_up1', object: 'response', status: 'in_progress', previous_response_id: 'resp_up0', output: [], ...extra } });

// A stream mixing LF, CRLF and CR line ends, comments, multi-line data and events the rewriter must not touch.
const STREAM =
  `: keep-alive comment\n\n` +
  `event: response.created\ndata: ${lifecycle('response.created', 0)}\n\n` +
  `event: response.in_progress\r\ndata: ${lifecycle('response.in_progress', 1)}\r\n\r\n` +
  `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","delta":"the \\"response\\" is ü","sequence_number":2}\n\n` +
  `event: response.output_text.delta\rdata: {"type":"response.output_text.delta","item_id":"msg_1","delta":"x","sequence_number":3}\r\r` +
  `data: {"type":"response.completed",\ndata: "sequence_number":4,\ndata: "response":{"id":"resp_up1","status":"completed"}}\n\n` +
  `data: [DONE]\n\n`;

/** Runs bytes through a fresh splitter + rewrite, chunked at the given boundaries. */
function runChunks(input: Buffer, cuts: number[]): string {
  const splitter = new SseEventSplitter();
  const out: Buffer[] = [];
  const rewrite = (d: unknown) => {
    const e = d as { response?: { id?: string; previous_response_id?: string } };
    if (!e.response) return false;
    if (e.response.id) e.response.id = sealed(e.response.id);
    if (e.response.previous_response_id) e.response.previous_response_id = sealed(e.response.previous_response_id);
    return true;
  };
  let at = 0;
  for (const cut of [...cuts, input.length]) {
    splitter.push(input.subarray(at, cut), (raw) => out.push(rewriteSseEvent(raw, rewrite, '"response"')), (b) => out.push(b));
    at = cut;
  }
  splitter.flush((raw) => out.push(rewriteSseEvent(raw, rewrite, '"response"')));
  return Buffer.concat(out).toString('utf8');
}

describe('SseEventSplitter + rewriteSseEvent', () => {
  const input = Buffer.from(STREAM, 'utf8');
  const whole = runChunks(input, []);

  it('seals ids in lifecycle events and leaves every other event byte-identical', () => {
    expect(whole).not.toContain('"resp_up1"');
    expect(whole).not.toContain('"resp_up0"');
    expect(whole).toContain(`"id":"${sealed('resp_up1')}"`);
    expect(whole).toContain(`"previous_response_id":"${sealed('resp_up0')}"`);
    expect(whole.startsWith(': keep-alive comment\n\n')).toBe(true);
    expect(whole).toContain('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","delta":"the \\"response\\" is ü","sequence_number":2}\n\n');
    expect(whole).toContain('event: response.output_text.delta\rdata: {"type":"response.output_text.delta","item_id":"msg_1","delta":"x","sequence_number":3}\r\r');
    expect(whole.endsWith('data: [DONE]\n\n')).toBe(true);
    // The multi-line data event became one data line with the sealed id.
    expect(whole).toContain(`data: {"type":"response.completed","sequence_number":4,"response":{"id":"${sealed('resp_up1')}","status":"completed"}}\n\n`);
  });

  it('gives the same output for a split at every byte boundary', () => {
    for (let k = 1; k < input.length; k++) expect(runChunks(input, [k]), `cut at ${k}`).toBe(whole);
  });

  it('gives the same output fed one byte at a time', () => {
    expect(runChunks(input, Array.from({ length: input.length - 1 }, (_, i) => i + 1))).toBe(whole);
  });

  it('rewrites an unterminated last event at end of stream', () => {
    const out = runChunks(Buffer.from(`data: ${lifecycle('response.completed', 9)}`), []);
    expect(out).toContain(sealed('resp_up1'));
  });

  it('passes an oversized event through unparsed instead of holding it', () => {
    const splitter = new SseEventSplitter(64);
    const events: Buffer[] = [];
    const passed: Buffer[] = [];
    const big = `data: ${lifecycle('response.created', 0, { instructions: 'x'.repeat(200) })}\n\n`;
    const buf = Buffer.from(big + 'data: {"a":1}\n\n');
    for (let i = 0; i < buf.length; i += 10) splitter.push(buf.subarray(i, i + 10), (e) => events.push(e), (b) => passed.push(b));
    splitter.flush((e) => events.push(e));
    expect(Buffer.concat(passed).toString()).toBe(big);
    expect(events.map(String)).toEqual(['data: {"a":1}\n\n']);
  });
});

describe('SSE rewrite stream', () => {
  it('emits each event as soon as it is complete (no buffering to end of stream)', async () => {
    const t = createResponsesIdRewriteStream(ctx);
    const got: string[] = [];
    t.on('data', (b: Buffer) => got.push(b.toString()));
    t.write(`event: response.created\ndata: ${lifecycle('response.created', 0)}`);
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual([]); // incomplete event is held
    t.write('\n\nevent: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"hi"}\n\n');
    await new Promise((r) => setImmediate(r));
    expect(got.join('')).toContain(sealed('resp_up1'));
    expect(got.join('')).toContain('"delta":"hi"');
    t.end();
  });

  it('passes non-JSON and malformed data through unchanged', async () => {
    const t = createSseRewriteStream(() => true);
    const chunks: Buffer[] = [];
    t.on('data', (b: Buffer) => chunks.push(b));
    const text = 'data: not json "response"\n\ndata: {"response": \n\n';
    await new Promise<void>((resolve) => t.end(text, () => resolve()));
    await new Promise((r) => setImmediate(r));
    expect(Buffer.concat(chunks).toString()).toBe(text);
  });
});
