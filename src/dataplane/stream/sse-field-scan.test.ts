import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import type { SealContext } from '../../features/sealed-ids/id-rewrite.js';
import { IdSealer } from '../../features/sealed-ids/sealed-id.js';
import { ChunkSplice, FieldPaths } from './json-field-scan.js';
import { sealingTransform } from '../../features/sealed-ids/sealing-transforms.js';
import { SseDataScanner, sseFieldStream } from './sse-field-scan.js';
import type { StreamProgress } from '../exchange/transform.js';
import { readSequenceNumber } from '../upstream/sse-signals.js';

const sealer = new IdSealer([randomBytes(32)]);
const ctx: SealContext = { sealer, model: 'gpt-x', backend: 'primary', owner: 'ns/alice' };
const sealed = (id: string) => sealer.seal({ kind: 'response', upstreamId: id, model: 'gpt-x', backend: 'primary', owner: 'ns/alice' });

const lifecycle = (type: string, seq: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type,
    sequence_number: seq,
    id: 'resp_top_level_not_a_response',
    response: { id: 'resp_up1', object: 'response', status: 'in_progress', previous_response_id: 'resp_up0', output: [{ id: 'resp_in_output' }], ...extra },
  });

// A stream mixing LF, CRLF and CR line ends, comments, multi-line data, decoys and events the rewriter must not touch.
const STREAM =
  `: keep-alive comment\n\n` +
  `event: response.created\ndata: ${lifecycle('response.created', 0)}\n\n` +
  `event: response.in_progress\r\ndata:${lifecycle('response.in_progress', 1)}\r\n\r\n` +
  `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","delta":"the \\"response\\":{\\"id\\":\\"resp_up1\\"} is ü","sequence_number":2}\n\n` +
  `event: response.output_text.delta\rdata: {"type":"response.output_text.delta","item_id":"msg_1","delta":"x","sequence_number":3}\r\r` +
  `data: {"type":"response.completed",\ndata: "sequence_number":4,\ndata: "response":{"id":"resp_up1","status":"completed"}}\n\n` +
  `id: 7\nretry: 100\ndatax: {"response":{"id":"resp_up1"}}\n\n` +
  `data: [DONE]\n\n`;

/** What the stream must become: exactly the input with the response ids (and nothing else) sealed. */
const EXPECTED = STREAM.replaceAll('{"id":"resp_up1","object"', `{"id":"${sealed('resp_up1')}","object"`)
  .replaceAll('"previous_response_id":"resp_up0"', `"previous_response_id":"${sealed('resp_up0')}"`)
  .replace('"response":{"id":"resp_up1","status"', `"response":{"id":"${sealed('resp_up1')}","status"`);

const seal = (_field: number, literal: string) => JSON.stringify(sealed(JSON.parse(literal) as string));
const PATHS = new FieldPaths([
  ['response', 'id'],
  ['response', 'previous_response_id'],
]);

/** Runs bytes through a fresh scanner, chunked at the given boundaries. */
function runChunks(input: Buffer, cuts: number[], progress?: StreamProgress): string {
  const track =
    progress &&
    ((chunk: Buffer, from: number, to: number) => void (progress.lastSequenceNumber = readSequenceNumber(chunk, from, to) ?? progress.lastSequenceNumber));
  const sse = new SseDataScanner(PATHS, seal, track);
  const splice = new ChunkSplice();
  const out: Buffer[] = [];
  let at = 0;
  for (const cut of [...cuts, input.length]) {
    splice.begin(input.subarray(at, cut));
    sse.push(input.subarray(at, cut), splice);
    out.push(splice.finish());
    at = cut;
  }
  splice.begin(Buffer.alloc(0));
  sse.end(splice);
  out.push(splice.finish());
  return Buffer.concat(out).toString('utf8');
}

describe('SseDataScanner', () => {
  const input = Buffer.from(STREAM, 'utf8');

  it('seals the response ids of lifecycle events and leaves every other byte as it came', () => {
    const progress: StreamProgress = { lastSequenceNumber: undefined };
    expect(runChunks(input, [], progress)).toBe(EXPECTED);
    expect(progress.lastSequenceNumber).toBe(4);
  });

  it('gives the same output for a split at every byte boundary', () => {
    for (let k = 1; k < input.length; k++) {
      const progress: StreamProgress = { lastSequenceNumber: undefined };
      expect(runChunks(input, [k], progress), `cut at ${k}`).toBe(EXPECTED);
      // Only data lines that lie whole in one chunk are read for their sequence_number (a cheap search).
      expect([3, 4], `cut at ${k}`).toContain(progress.lastSequenceNumber);
    }
  });

  it('gives the same output fed one byte at a time', () => {
    expect(
      runChunks(
        input,
        Array.from({ length: input.length - 1 }, (_, i) => i + 1),
      ),
    ).toBe(EXPECTED);
  });

  it('rewrites an unterminated last event at end of stream', () => {
    const out = runChunks(Buffer.from(`data: ${lifecycle('response.completed', 9)}`), []);
    expect(out).toContain(sealed('resp_up1'));
    expect(out).not.toContain('"resp_up1"');
  });

  it('drops, never passes on, an id whose string is broken by a line end (not valid JSON)', () => {
    const out = runChunks(Buffer.from('data: {"response":{"id":"resp_up\ndata: 1"}}\n\n'), []);
    expect(out).toBe('data: {"response":{"id":\ndata: 1"}}\n\n');
  });

  it('passes non-JSON and malformed data through unchanged', () => {
    const text = 'data: not json "response"\n\ndata: {"response": \n\ndata: }}}]]]{"response":{"id":5}}\n\n';
    expect(runChunks(Buffer.from(text), [7, 30])).toBe(text);
  });
});

describe('SSE field stream', () => {
  it('sends the bytes of an event as they arrive, holding back only an id being read', async () => {
    const t = sseFieldStream(PATHS, seal);
    const got: string[] = [];
    t.on('data', (b: Buffer) => got.push(b.toString()));
    const settle = () => new Promise((r) => setImmediate(r));
    t.write('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"hel');
    await settle();
    expect(got.join('')).toBe('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"hel');
    t.write('lo"}\n\ndata: {"type":"response.created","response":{"id":"resp_');
    await settle();
    expect(got.join('')).toMatch(/"response":\{"id":$/);
    t.end('up1"}}\n\n');
    await settle();
    expect(got.join('')).toContain(`{"id":"${sealed('resp_up1')}"}}\n\n`);
  });

  it('seals the ids of a 20 MB response.completed event (no event is too large to be rewritten)', async () => {
    const text = 'x'.repeat(20 * 1024 * 1024);
    const event = `event: response.completed\ndata: {"type":"response.completed","sequence_number":3,"response":{"output":[{"type":"message","content":[{"type":"output_text","text":"${text}"}]}],"id":"resp_big","previous_response_id":"resp_up0"}}\n\n`;
    const bytes = Buffer.from(event);
    const chunks = Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536));
    const out = (await buffer(Readable.from(chunks).pipe(sseFieldStream(PATHS, seal)))).toString();
    expect(out.length).toBe(
      event.length - '"resp_big""resp_up0"'.length + JSON.stringify(sealed('resp_big')).length + JSON.stringify(sealed('resp_up0')).length,
    );
    expect(out.endsWith(`"id":"${sealed('resp_big')}","previous_response_id":"${sealed('resp_up0')}"}}\n\n`)).toBe(true);
  });

  it('fails the stream rather than pass on an id too long to hold', async () => {
    const t = sseFieldStream(PATHS, seal);
    const failed = new Promise<Error>((resolve) => t.on('error', resolve));
    t.resume();
    t.write(`data: {"response":{"id":"resp_${'a'.repeat(9000)}`);
    expect((await failed).message).toMatch(/longer than/);
  });
});

describe('sealingTransform on a Responses stream', () => {
  it('records the last sequence_number in the progress it is given', async () => {
    const progress: StreamProgress = { lastSequenceNumber: undefined };
    const t = sealingTransform({ body: 'response', ctx }, 200, 'text/event-stream; charset=utf-8', progress)!;
    const out = (await buffer(Readable.from([Buffer.from(STREAM)]).pipe(t))).toString();
    expect(out).toBe(EXPECTED);
    expect(progress.lastSequenceNumber).toBe(4);
  });
});
