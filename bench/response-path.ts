// Micro-benchmark of what the response path adds per request on top of relaying bytes: masking the backend's
// credential in the headers and in every chunk (a chat JSON answer; a 20-event chat stream), and sealing ids in a
// Responses event stream and in a large Response body as they stream. In-process, no sockets: the cost of the
// code itself, from the production build (dist/, as `npm run build` makes it; code run through tsx is slower).
// Not part of `npm run bench`.
//
//   npm run build && node --import tsx bench/response-path.ts
import { existsSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const from = existsSync(`${root}dist/proxy/credentials.js`) ? `${root}dist` : `${root}src`;
if (from.endsWith('src')) console.log('(dist/ not built: measuring the sources through tsx, which is slower)');
const { compileCredentials, maskHeaders } = (await import(`${from}/proxy/credentials.js`)) as typeof import('../src/dataplane/upstream/credentials.js');
const { ChunkSplice, FieldPaths, JsonFieldScanner } = (await import(
  `${from}/proxy/json-field-scan.js`
)) as typeof import('../src/dataplane/stream/json-field-scan.js');
const { SseDataScanner } = (await import(`${from}/proxy/sse-field-scan.js`)) as typeof import('../src/dataplane/stream/sse-field-scan.js');
const { readSequenceNumber } = (await import(`${from}/proxy/sse-signals.js`)) as typeof import('../src/dataplane/upstream/sse-signals.js');
const { StreamReplacer } = (await import(`${from}/proxy/stream-replace.js`)) as typeof import('../src/dataplane/stream/stream-replace.js');

const credentials = compileCredentials([
  { header: 'authorization', value: 'Bearer sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCD', secret: 'sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCD' },
]);

const headers = () => ({
  'content-type': 'application/json',
  'content-length': '612',
  'openai-processing-ms': '312',
  'openai-version': '2020-10-01',
  'x-ratelimit-limit-requests': '10000',
  'x-ratelimit-remaining-requests': '9999',
  'x-ratelimit-reset-requests': '6ms',
  'x-upstream-request-id': 'req_0123456789abcdef',
});
const chatBody = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench0000000000000000000000',
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(250) }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 11, completion_tokens: 60, total_tokens: 71 },
  }),
);
const chatEvents = Array.from({ length: 20 }, (_, i) =>
  Buffer.from(
    `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `token${i} ` }, finish_reason: null }] })}\n\n`,
  ),
);
const responsesEvents = Array.from({ length: 20 }, (_, i) =>
  Buffer.from(
    i === 0
      ? `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: { id: 'resp_0123456789abcdef0123456789abcdef', object: 'response', created_at: 1, status: 'in_progress', model: 'm', output: [], previous_response_id: null } })}\n\n`
      : `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', sequence_number: i, item_id: 'msg_0123456789abcdef', output_index: 0, content_index: 0, delta: ` token${i}`, logprobs: [], obfuscation: 'aBcDeFgHiJ' })}\n\n`,
  ),
);

// The gateway's own paths (sealing-transforms.ts); the replacement itself (an HMAC per id) is not measured here.
const EVENT_PATHS = new FieldPaths([
  ['response', 'id'],
  ['response', 'previous_response_id'],
]);
const keep = (_field: number, literal: string) => literal;

function measure(name: string, unit: string, perIteration: number, fn: () => void): void {
  for (let i = 0; i < 2_000; i++) fn(); // warm-up
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const n = 20_000;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / n);
  }
  console.log(
    `${name.padEnd(64)} ${(best / 1000).toFixed(2).padStart(7)} µs per ${unit}${perIteration > 1 ? ` (${(best / perIteration).toFixed(0)} ns per chunk)` : ''}`,
  );
}

console.log('best of 5 rounds of 20,000 iterations');
measure('credential mask: chat JSON answer (8 headers + 1 chunk)', 'request', 1, () => {
  maskHeaders(headers(), credentials.texts);
  new StreamReplacer(credentials.needles).push(chatBody);
});
measure('credential mask: chat stream (8 headers + 20 events)', 'request', 20, () => {
  maskHeaders(headers(), credentials.texts);
  const m = new StreamReplacer(credentials.needles);
  for (const e of chatEvents) m.push(e);
  m.end();
});
measure('id sealing + sequence: Responses stream, 20 events', 'stream', 20, () => {
  const splice = new ChunkSplice();
  const sse = new SseDataScanner(EVENT_PATHS, keep, readSequenceNumber);
  for (const e of responsesEvents) {
    splice.begin(e);
    sse.push(e, splice);
    splice.finish();
  }
});

const big = Buffer.from(
  `{"id":"resp_1","output":[{"type":"message","content":[{"type":"output_text","text":${JSON.stringify('lorem ipsum\n'.repeat(2_700_000))}}]}],"previous_response_id":"resp_0"}`,
);
const t0 = process.hrtime.bigint();
const scanner = new JsonFieldScanner(new FieldPaths([['id'], ['previous_response_id']]), keep);
const splice = new ChunkSplice();
for (let at = 0; at < big.length; at += 65_536) {
  const chunk = big.subarray(at, at + 65_536);
  splice.begin(chunk);
  scanner.scan(chunk, 0, chunk.length, splice);
  splice.finish();
}
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
console.log(
  `${'id sealing: one Response JSON body, field scan'.padEnd(64)} ${(ms / (big.length / 1024 / 1024)).toFixed(2).padStart(7)} ms per MB (${(big.length / 1024 / 1024).toFixed(0)} MB in ${ms.toFixed(0)} ms)`,
);
