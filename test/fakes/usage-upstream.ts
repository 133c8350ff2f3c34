// An OpenAI-compatible upstream for usage tests: every family answers with usage counts drawn per request, and
// the upstream remembers, by the x-request-id the gateway sends, exactly what it reported. Chat streams report
// usage only when asked (stream_options.include_usage), as OpenAI does; a request whose prompt says "hang"
// streams two deltas and then waits for the client to leave, never reporting; one whose prompt says "wait" streams
// two deltas and the rest when the test releases it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';

interface Reported {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens: number;
  readonly reasoningTokens: number;
  readonly seconds?: number;
}

export interface UsageUpstream {
  readonly baseURL: string;
  /** What was reported, by the gateway's request id. */
  readonly reported: Map<string, Reported>;
  /** Request bodies received, by request id (JSON ones parsed). */
  readonly bodies: Map<string, Record<string, unknown>>;
  /** Ends the chat streams held back (prompt says "wait"), usage chunk included when asked for. */
  release(): void;
  close(): Promise<void>;
}

const created = 1_700_000_000;

export async function startUsageUpstream(): Promise<UsageUpstream> {
  const reported = new Map<string, Reported>();
  const bodies = new Map<string, Record<string, unknown>>();
  const held: (() => void)[] = [];
  let n = 0;
  const draw = (seed: number): Reported => ({
    inputTokens: 10 + (seed % 97),
    outputTokens: 5 + ((seed * 7) % 89),
    cachedInputTokens: seed % 5,
    reasoningTokens: seed % 3,
  });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const id = String(req.headers['x-request-id']);
      const json = await fields(String(req.headers['content-type']), Buffer.concat(chunks));
      bodies.set(id, json);
      answer(req, res, json, draw(++n), (r) => reported.set(id, r), held);
    });
  });
  const loop = await listenOnLoopback(server);
  return {
    baseURL: `${loop.origin}/v1`,
    reported,
    bodies,
    release() {
      for (const finish of held.splice(0)) finish();
    },
    close: loop.close,
  };
}

/** A JSON body, or a form's text fields. */
async function fields(type: string, body: Buffer): Promise<Record<string, unknown>> {
  if (type.startsWith('application/json')) return JSON.parse(body.toString()) as Record<string, unknown>;
  if (!type.startsWith('multipart/form-data')) return {};
  const form = await new Response(new Uint8Array(body), { headers: { 'content-type': type } }).formData();
  const out: Record<string, unknown> = {};
  for (const [k, v] of form.entries()) if (typeof v === 'string') out[k] = v;
  return out;
}

function send(res: ServerResponse, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const chatUsage = (u: Reported) => ({
  prompt_tokens: u.inputTokens,
  completion_tokens: u.outputTokens,
  total_tokens: u.inputTokens + u.outputTokens,
  prompt_tokens_details: { cached_tokens: u.cachedInputTokens },
  completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
});
const responsesUsage = (u: Reported) => ({
  input_tokens: u.inputTokens,
  input_tokens_details: { cached_tokens: u.cachedInputTokens },
  output_tokens: u.outputTokens,
  output_tokens_details: { reasoning_tokens: u.reasoningTokens },
  total_tokens: u.inputTokens + u.outputTokens,
});

function answer(
  req: IncomingMessage,
  res: ServerResponse,
  json: Record<string, unknown>,
  u: Reported,
  report: (r: Reported) => void,
  held: (() => void)[],
): void {
  const model = String(json['model'] ?? 'form-model');
  const hang = JSON.stringify(json).includes('hang');
  const plain = { ...u, cachedInputTokens: 0, reasoningTokens: 0 };
  switch (req.url) {
    case '/v1/chat/completions': {
      if (json['stream'] !== true) {
        report(u);
        return send(res, {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop', logprobs: null }],
          usage: chatUsage(u),
        });
      }
      // A prompt that says "no usage" gets an upstream that ignores stream_options, as some providers do.
      const ignores = JSON.stringify(json).includes('no usage');
      const withUsage = !ignores && (json['stream_options'] as { include_usage?: boolean } | undefined)?.include_usage === true;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: Record<string, unknown>, finish: string | null) =>
        `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...(withUsage ? { usage: null } : {}) })}\n\n`;
      res.write(chunk({ role: 'assistant', content: '' }, null));
      res.write(chunk({ content: 'Hello there, how are you today?' }, null));
      if (hang) return; // until the client leaves
      const finish = () => {
        res.write(chunk({}, 'stop'));
        if (withUsage) {
          report(u);
          res.write(`data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created, model, choices: [], usage: chatUsage(u) })}\n\n`);
        }
        res.end('data: [DONE]\n\n');
      };
      if (JSON.stringify(json).includes('wait')) held.push(finish);
      else finish();
      return;
    }
    case '/v1/responses': {
      const response = (status: string, usage: unknown) => ({
        id: 'resp_1',
        object: 'response',
        created_at: created,
        status,
        model,
        output:
          status === 'completed'
            ? [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there', annotations: [] }] }]
            : [],
        usage,
      });
      if (json['stream'] !== true) {
        report(u);
        return send(res, response('completed', responsesUsage(u)));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (type: string, data: Record<string, unknown>, seq: number) =>
        `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...data })}\n\n`;
      res.write(event('response.created', { response: response('in_progress', null) }, 0));
      res.write(event('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi there, friend', logprobs: [] }, 1));
      if (hang) return;
      report(u);
      res.end(event('response.completed', { response: response('completed', responsesUsage(u)) }, 2));
      return;
    }
    case '/v1/embeddings':
      report({ ...plain, outputTokens: 0 });
      return send(res, {
        object: 'list',
        model,
        data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
        usage: { prompt_tokens: u.inputTokens, total_tokens: u.inputTokens },
      });
    case '/v1/images/generations':
    case '/v1/images/edits':
      report(plain);
      return send(res, {
        created,
        data: [{ b64_json: Buffer.from('image').toString('base64') }],
        usage: {
          input_tokens: u.inputTokens,
          output_tokens: u.outputTokens,
          total_tokens: u.inputTokens + u.outputTokens,
          input_tokens_details: { text_tokens: u.inputTokens, image_tokens: 0 },
        },
      });
    case '/v1/audio/transcriptions':
      report(plain);
      return send(res, {
        text: 'transcribed',
        usage: { type: 'tokens', input_tokens: u.inputTokens, output_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens },
      });
    case '/v1/audio/translations': {
      const seconds = u.inputTokens / 10;
      report({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, seconds });
      // As OpenAI orders a verbose answer: its duration first, then the text and segments (many, for a long audio:
      // prompt "long").
      const segments = Array.from({ length: json['prompt'] === 'long' ? 400 : 0 }, (_, id) => ({
        id,
        seek: id * 500,
        start: id * 5,
        end: id * 5 + 5,
        text: ' And so the speaker went on, for another five seconds of audio.',
        tokens: [50364, 400, 370, 264, 8688, 1437, 322, 11, 337, 1071, 1732, 3949, 295, 6278, 13, 50614],
        temperature: 0,
        avg_logprob: -0.25,
        compression_ratio: 1.4,
        no_speech_prob: 0.01,
      }));
      return send(res, { task: 'translate', language: 'english', duration: seconds, text: 'translated', segments });
    }
    case '/v1/audio/speech':
      report({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 });
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.end(Buffer.alloc(2048, 7));
      return;
    case '/v1/videos':
      report({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, seconds: Number(json['seconds'] ?? 4) });
      return send(res, {
        id: 'video_1',
        object: 'video',
        model,
        status: 'queued',
        progress: 0,
        created_at: created,
        seconds: String(json['seconds'] ?? '4'),
        size: '720x1280',
      });
    default:
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such path","type":"invalid_request_error"}}');
  }
}
