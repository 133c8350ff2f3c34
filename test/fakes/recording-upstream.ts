// A fake OpenAI-compatible upstream on 127.0.0.1 that records every request it receives (method, path,
// headers, raw body bytes, whether the caller hung up early) and answers each family plausibly. Tests can
// gate streams (the final chunks wait for release()) and override any path's behaviour.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The caller closed the connection before the response was complete. */
  closedEarly: boolean;
}

type Override = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>;

export const SPEECH_BYTES = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0xff, 0xfb, 0x90, 0x64, 0x00, 0x01, 0x02, 0x03]);

export interface RecordingUpstream {
  readonly origin: string;
  /** origin + "/v1", what a ModelRoute backend's baseURL is set to. */
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  /** Makes streamed chat answers wait before their final chunks until the returned function is called. */
  holdStreams(): () => void;
  /** Replaces the answer for one path (e.g. "/v1/chat/completions"); undefined restores the default. */
  override(path: string, handler: Override | undefined): void;
  /** Resolves when a request on the path (and matching `match`, if given) has been closed early by the caller. */
  waitForEarlyClose(path: string, match?: (r: RecordedRequest) => boolean): Promise<RecordedRequest>;
  close(): Promise<void>;
}

export async function startRecordingUpstream(): Promise<RecordingUpstream> {
  const requests: RecordedRequest[] = [];
  const overrides = new Map<string, Override>();
  const earlyCloseWaiters: { path: string; match: (r: RecordedRequest) => boolean; resolve: (r: RecordedRequest) => void }[] = [];
  let gate: Promise<void> | undefined;

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    try {
      for await (const c of req) chunks.push(c as Buffer);
    } catch {
      return; // the caller aborted mid-upload (e.g. its own client left): nothing complete to record
    }
    const body = Buffer.concat(chunks);
    const path = req.url ?? '/';
    const record: RecordedRequest = { method: req.method ?? '', path, headers: req.headers, body, closedEarly: false };
    requests.push(record);
    res.on('close', () => {
      if (res.writableFinished) return;
      record.closedEarly = true;
      for (const w of earlyCloseWaiters.filter((w) => path.startsWith(w.path) && w.match(record))) {
        earlyCloseWaiters.splice(earlyCloseWaiters.indexOf(w), 1);
        w.resolve(record);
      }
    });
    const pathname = path.split('?')[0]!;
    try {
      const override = overrides.get(pathname);
      if (override) await override(req, res, body);
      else await answer(pathname, req, res, body, gate);
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    }
  });
  const loop = await listenOnLoopback(server);
  const origin = loop.origin;

  return {
    origin,
    baseURL: `${origin}/v1`,
    requests,
    holdStreams() {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
    override(path, handler) {
      if (handler) overrides.set(path, handler);
      else overrides.delete(path);
    },
    waitForEarlyClose(path, match = () => true) {
      const done = requests.find((r) => r.path.startsWith(path) && r.closedEarly && match(r));
      if (done) return Promise.resolve(done);
      return new Promise((resolve) => earlyCloseWaiters.push({ path, match, resolve }));
    },
    close: loop.close,
  };
}

async function modelOf(req: IncomingMessage, body: Buffer): Promise<{ model: string; json: Record<string, unknown> }> {
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('multipart/form-data')) {
    const form = await new Response(new Uint8Array(body), { headers: { 'content-type': type } }).formData();
    return { model: String(form.get('model')), json: {} };
  }
  const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  return { model: String(json['model']), json };
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'upstream-req-1', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const created = 1_700_000_000;

async function answer(path: string, req: IncomingMessage, res: ServerResponse, body: Buffer, gate: Promise<void> | undefined): Promise<void> {
  const { model, json } = await modelOf(req, body);
  switch (path) {
    case '/v1/chat/completions':
      if (json['stream'] === true) return streamChat(res, model, json, gate);
      return sendJson(res, 200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from upstream' }, finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      });
    case '/v1/responses':
      return sendJson(res, 200, {
        id: 'resp_1',
        object: 'response',
        created_at: created,
        status: 'completed',
        model,
        output: [
          { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there', annotations: [] }] },
        ],
        usage: {
          input_tokens: 5,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 3,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 8,
        },
      });
    case '/v1/embeddings':
      return sendJson(res, 200, {
        object: 'list',
        model,
        data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2, 0.3] }],
        usage: { prompt_tokens: 4, total_tokens: 4 },
      });
    case '/v1/images/generations':
    case '/v1/images/edits':
      return sendJson(res, 200, { created, data: [{ b64_json: Buffer.from(`image by ${model}`).toString('base64') }] });
    case '/v1/audio/transcriptions':
    case '/v1/audio/translations':
      return sendJson(res, 200, { text: `transcribed by ${model}` });
    case '/v1/audio/speech':
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': SPEECH_BYTES.length });
      res.end(SPEECH_BYTES);
      return;
    case '/v1/videos':
      return sendJson(res, 200, {
        id: 'video_abc',
        object: 'video',
        model,
        status: 'queued',
        progress: 0,
        created_at: created,
        seconds: '4',
        size: '720x1280',
      });
    default:
      return sendJson(res, 404, { error: { message: `no route ${path}`, type: 'invalid_request_error', param: null, code: null } });
  }
}

async function streamChat(res: ServerResponse, model: string, json: Record<string, unknown>, gate: Promise<void> | undefined): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>, finish: string | null, usage: unknown = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], usage })}\n\n`;
  res.write(chunk({ role: 'assistant', content: '' }, null));
  res.write(chunk({ content: 'Hello' }, null));
  if (gate) await gate;
  if (res.destroyed) return;
  res.write(chunk({ content: ' world' }, null));
  res.write(chunk({}, 'stop'));
  const opts = json['stream_options'] as { include_usage?: boolean } | undefined;
  if (opts?.include_usage) {
    res.write(
      `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created, model, choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } })}\n\n`,
    );
  }
  res.end('data: [DONE]\n\n');
}
