// A fast OpenAI-compatible upstream for the benchmark, in its own process: plain node:http, every response body
// precomputed at start-up, so what it costs per request is socket work only and the same for every target.
// It counts what it received (GET /__stats, POST /__stats/reset) so the runner can check that each proxy
// really delivered every body in full.
//
//   node --import tsx bench/fake-upstream.ts [--port 0] [--host 127.0.0.1]   → prints `LISTENING <port>`
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { CODEX_INSTRUCTIONS, CODEX_TOOLS } from './lib/workload.js';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } },
});

/**
 * Streams sent to `model: "hold"` (or "bench-hold") send one chunk at once, then one every HOLD_TICK_MS until closed or
 * HOLD_MAX_MS. Streams sent to `model: "nousage"` (or "bench-nousage") carry no usage chunk.
 */
const HOLD_TICK_MS = 5_000;
const HOLD_MAX_MS = 120_000;
const STREAM_CHUNKS = 20;

/**
 * The start of a request body kept to read "stream" and "model" in: the whole of every JSON request but the 100 KB
 * embeddings (a Codex-shaped Responses request, and its chat translation, say "stream" near their end).
 */
const HEAD_BYTES = 8 * 1024;
const STREAM_FLAG = /"stream"\s*:\s*true/;

const JSON_HEADERS = { 'content-type': 'application/json' };

function jsonBody(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

const CHAT_TEXT =
  'Latency is what a gateway adds; throughput is what it takes away. This answer is a fixed string of about ' +
  'two hundred and fifty characters so that every target moves the same bytes, and nothing here depends ' +
  'on the request.';
// ≈600 bytes, the shape of a real chat.completion.
const CHAT = jsonBody({
  id: 'chatcmpl-bench0000000000000000000000',
  object: 'chat.completion',
  created: 1_767_225_600,
  model: 'bench-upstream-model',
  system_fingerprint: 'fp_bench000000',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: CHAT_TEXT,
        refusal: null,
      },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: {
    prompt_tokens: 42,
    completion_tokens: 58,
    total_tokens: 100,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  },
});

function chunk(content: string | null, finish: string | null, usage?: object): Buffer {
  const body = {
    id: 'chatcmpl-bench0000000000000000000000',
    object: 'chat.completion.chunk',
    created: 1_767_225_600,
    model: 'bench-upstream-model',
    choices: usage ? [] : [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  };
  return Buffer.from(`data: ${JSON.stringify(body)}\n\n`);
}

// 20 SSE events: 18 content deltas, the finish chunk, the usage chunk; then [DONE].
const STREAM: Buffer[] = [
  ...Array.from({ length: STREAM_CHUNKS - 2 }, (_, i) => chunk(` token${i}`, null)),
  chunk(null, 'stop'),
  chunk(null, null, { prompt_tokens: 42, completion_tokens: 18, total_tokens: 60 }),
  Buffer.from('data: [DONE]\n\n'),
];
// The same stream from an upstream that ignores stream_options (`model: "nousage"`): no usage chunk. What a client
// sees is the same bytes either way (the gateway takes out the usage chunk it asked for).
const STREAM_NO_USAGE: Buffer[] = [...STREAM.slice(0, STREAM_CHUNKS - 1), STREAM[STREAM_CHUNKS]!];
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

const EMBEDDING = jsonBody({
  object: 'list',
  data: [{ object: 'embedding', index: 0, embedding: Array.from({ length: 16 }, (_, i) => Math.round(Math.sin(i) * 1e6) / 1e6) }],
  model: 'bench-upstream-model',
  usage: { prompt_tokens: 25_000, total_tokens: 25_000 },
});
// ≈500 bytes, the shape of a real Messages API answer (the same text as CHAT).
const MESSAGE = jsonBody({
  id: 'msg_bench000000000000000000',
  type: 'message',
  role: 'assistant',
  model: 'bench-upstream-model',
  content: [
    {
      type: 'text',
      text:
        'Latency is what a gateway adds; throughput is what it takes away. This answer is a fixed string of about ' +
        'two hundred and fifty characters so that every target moves the same bytes, and nothing here depends ' +
        'on the request.',
    },
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 42, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 58 },
});
/** A Messages API stream of 20 events as Anthropic sends it: the usage in message_start and message_delta. */
function messageEvent(type: string, data: object): Buffer {
  return Buffer.from(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}
const MESSAGE_STREAM: Buffer[] = [
  messageEvent('message_start', {
    message: {
      id: 'msg_bench000000000000000000',
      type: 'message',
      role: 'assistant',
      model: 'bench-upstream-model',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 42, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
    },
  }),
  messageEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  ...Array.from({ length: STREAM_CHUNKS - 5 }, (_, i) => messageEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ` token${i}` } })),
  messageEvent('content_block_stop', { index: 0 }),
  messageEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 15 } }),
  messageEvent('message_stop', {}),
];
/**
 * A Response as OpenAI's Responses API answers the bench's Codex-shaped request (bench/lib/workload.ts): the same
 * text as CHAT, the request's members echoed, with usage. `status`, `output` and `usage` vary along a stream.
 */
function responseObject(status: string, output: object[], usage: object | null): object {
  return {
    id: 'resp_bench00000000000000000000000000000000',
    object: 'response',
    created_at: 1_767_225_600,
    status,
    error: null,
    incomplete_details: null,
    instructions: CODEX_INSTRUCTIONS,
    max_output_tokens: null,
    model: 'bench-upstream-model',
    output,
    parallel_tool_calls: false,
    previous_response_id: null,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: CODEX_TOOLS,
    top_p: 1,
    truncation: 'disabled',
    usage,
    user: null,
    metadata: {},
  };
}
const RESPONSE_MESSAGE_ID = 'msg_bench00000000000000000000000000000000';
function responseMessage(status: string, text: string | undefined): object {
  const content = text === undefined ? [] : [{ type: 'output_text', text, annotations: [], logprobs: [] }];
  return { type: 'message', id: RESPONSE_MESSAGE_ID, status, role: 'assistant', content };
}
function responseUsage(input: number, output: number): object {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}
const RESPONSE = jsonBody(responseObject('completed', [responseMessage('completed', CHAT_TEXT)], responseUsage(42, 58)));
/**
 * The Responses events a Responses server sends for STREAM's answer (its 18 text deltas): 26 events, the usage in
 * response.completed. The client gets these same events whether its route's backend is a Responses one or a chat
 * one whose 20 chunks the gateway translates, so the two cost what each way of making them costs.
 */
const RESPONSE_STREAM: Buffer[] = (() => {
  const deltas = Array.from({ length: STREAM_CHUNKS - 2 }, (_, i) => ` token${i}`);
  const text = deltas.join('');
  const at = { item_id: RESPONSE_MESSAGE_ID, output_index: 0, content_index: 0 };
  const events: [string, object][] = [
    ['response.created', { response: responseObject('in_progress', [], null) }],
    ['response.in_progress', { response: responseObject('in_progress', [], null) }],
    ['response.output_item.added', { output_index: 0, item: responseMessage('in_progress', undefined) }],
    ['response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } }],
    ...deltas.map((delta): [string, object] => ['response.output_text.delta', { ...at, delta, logprobs: [] }]),
    ['response.output_text.done', { ...at, text, logprobs: [] }],
    ['response.content_part.done', { ...at, part: { type: 'output_text', text, annotations: [], logprobs: [] } }],
    ['response.output_item.done', { output_index: 0, item: responseMessage('completed', text) }],
    ['response.completed', { response: responseObject('completed', [responseMessage('completed', text)], responseUsage(42, 18)) }],
  ];
  return events.map(([type, data], i) => Buffer.from(`event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: i })}\n\n`));
})();
const TRANSCRIPTION = jsonBody({ text: 'The quick brown fox jumps over the lazy dog.', usage: { type: 'duration', seconds: 30 } });
const MODELS = jsonBody({ object: 'list', data: [{ id: 'bench-upstream-model', object: 'model', created: 1_767_225_600, owned_by: 'bench' }] });
const NOT_FOUND = jsonBody({ error: { message: 'not found', type: 'invalid_request_error', param: null, code: 'not_found' } });
const BAD_LENGTH = jsonBody({ error: { message: 'body shorter than content-length', type: 'invalid_request_error', param: null, code: null } });

interface PathStats {
  requests: number;
  bytes: number;
}
let stats = new Map<string, PathStats>();

function count(path: string, bytes: number): void {
  const s = stats.get(path);
  if (s) {
    s.requests++;
    s.bytes += bytes;
  } else stats.set(path, { requests: 1, bytes });
}

function send(res: ServerResponse, status: number, body: Buffer, headers = JSON_HEADERS): void {
  res.writeHead(status, { ...headers, 'content-length': body.length });
  res.end(body);
}

function sendStream(res: ServerResponse, events: Buffer[]): void {
  res.writeHead(200, SSE_HEADERS);
  let i = 0;
  // One event per turn of the event loop, so a proxy sees them as separate reads, as with a real model.
  const next = (): void => {
    if (res.destroyed) return;
    res.write(events[i++]);
    if (i < events.length) setImmediate(next);
    else res.end();
  };
  next();
}

function sendHold(res: ServerResponse): void {
  res.writeHead(200, SSE_HEADERS);
  res.write(STREAM[0]);
  const tick = setInterval(() => res.write(STREAM[1]), HOLD_TICK_MS);
  const end = setTimeout(() => res.end(), HOLD_MAX_MS);
  res.on('close', () => {
    clearInterval(tick);
    clearTimeout(end);
  });
}

function handle(req: IncomingMessage, res: ServerResponse, body: Buffer[], size: number): void {
  const path = req.url ?? '/';
  if (path === '/__stats') {
    if (req.method === 'POST') stats = new Map();
    return send(res, 200, jsonBody(Object.fromEntries(stats)));
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) !== size) return send(res, 400, BAD_LENGTH);
  count(path, size);
  switch (path) {
    case '/v1/chat/completions': {
      // No JSON parse: the start says whether this is a stream (the benchmark's bodies are small or fixed).
      const head = Buffer.concat(body).toString('latin1');
      // The gateway renames bench-hold to its backend model "hold"; the plain proxies pass bench-hold through.
      if (/"model":"(bench-)?hold"/.test(head)) return sendHold(res);
      if (STREAM_FLAG.test(head)) return sendStream(res, /"model":"(bench-)?nousage"/.test(head) ? STREAM_NO_USAGE : STREAM);
      return send(res, 200, CHAT);
    }
    case '/v1/responses':
      if (STREAM_FLAG.test(Buffer.concat(body).toString('latin1'))) return sendStream(res, RESPONSE_STREAM);
      return send(res, 200, RESPONSE);
    case '/v1/messages':
      if (STREAM_FLAG.test(Buffer.concat(body).toString('latin1'))) return sendStream(res, MESSAGE_STREAM);
      return send(res, 200, MESSAGE);
    case '/v1/embeddings':
      return send(res, 200, EMBEDDING);
    case '/v1/audio/transcriptions':
      return send(res, 200, TRANSCRIPTION);
    case '/v1/models':
      return send(res, 200, MODELS);
    case '/v1/traces':
      // Stands in for an OpenTelemetry collector (a traced gateway variant exports here): an empty
      // ExportTraceServiceResponse, which is an empty body in protobuf.
      return send(res, 200, Buffer.alloc(0), { 'content-type': 'application/x-protobuf' });
    default:
      return send(res, 404, NOT_FOUND);
  }
}

const server = createServer({ keepAliveTimeout: 60_000, requestTimeout: 0, headersTimeout: 60_000 }, (req, res) => {
  const body: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    // Keep only the start: enough to see "stream"/"model", without holding 5 MB uploads.
    if (body.length === 0 || size <= HEAD_BYTES) body.push(c);
  });
  req.on('end', () => handle(req, res, body, size));
});
server.maxRequestsPerSocket = 0;
server.listen(Number(values.port), values.host, () => {
  const addr = server.address();
  process.stdout.write(`LISTENING ${typeof addr === 'object' && addr ? addr.port : values.port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
