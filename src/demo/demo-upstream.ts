// The built-in demo backend, for demos, tests and benchmarks only: a deterministic OpenAI-compatible HTTP server
// on loopback that routes with `baseURL: demo://` point at. It answers every API family the gateway serves
// without network or keys, so the quick start works on a fresh machine. It ignores credentials.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';
import { demoPng, demoVideoBytes, embeddingVector, silenceWav, vectorBase64 } from './demo-media.js';
import { chatChunks, chatCompletion, countTokens, inputItems, planChat, planResponse, responseEvents, responseObject, type ResponsePlan } from './demo-text.js';
import { DemoVideos } from './demo-videos.js';

type Json = Record<string, unknown>;

const MAX_BODY = 256 * 1024 * 1024;
const MAX_STORED_RESPONSES = 1_000;

export interface DemoUpstream {
  /** Base URL including /v1, e.g. http://127.0.0.1:41234/v1. */
  readonly baseURL: string;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

/** Starts the demo backend on 127.0.0.1 (an ephemeral port unless given). */
export async function startDemoUpstream(options: { port?: number; host?: string } = {}): Promise<DemoUpstream> {
  const handler = new DemoHandler();
  const server = createServer((req, res) => {
    handler.handle(req, res).catch((err: unknown) => {
      const e = err instanceof HttpError ? err : new HttpError(500, 'demo backend error');
      if (!res.headersSent) sendError(res, e);
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // exclusive: in a cluster worker, listen(0) would otherwise share one port among all workers' demo servers.
    server.listen({ port: options.port ?? 0, host, exclusive: true }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { baseURL: `http://${host}:${port}/v1`, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

class DemoHandler {
  readonly #videos = new DemoVideos();
  readonly #responses = new Map<string, { plan: ResponsePlan; cancelled: boolean }>();

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://demo');
    const path = url.pathname.replace(/^\/v1(?=\/)/, '');
    const method = req.method ?? 'GET';
    const now = Date.now();
    const route = `${method} ${path}`;

    if (route === 'POST /chat/completions') return this.#chat(res, await readJson(req), now);
    if (route === 'POST /responses') return this.#createResponse(res, await readJson(req), now);
    if (route === 'POST /embeddings') return this.#embeddings(res, (await readJson(req)).body);
    if (route === 'POST /images/generations') return this.#images(res, (await readJson(req)).body, now);
    if (route === 'POST /images/edits') return this.#images(res, (await readMultipart(req)).fields, now);
    if (route === 'POST /audio/transcriptions' || route === 'POST /audio/translations') {
      return this.#transcribe(res, await readMultipart(req), path.endsWith('translations'));
    }
    if (route === 'POST /audio/speech') {
      const { body } = await readJson(req);
      return sendBytes(res, 'audio/wav', silenceWav(String(body.input ?? '')));
    }
    if (route === 'POST /videos') {
      const fields = isMultipart(req) ? (await readMultipart(req)).fields : (await readJson(req)).body;
      return sendJson(res, 200, this.#videos.create(fields, now));
    }
    if (route === 'GET /models') return sendJson(res, 200, { object: 'list', data: [] });

    const resp = /^\/responses\/([^/]+)(\/cancel|\/input_items)?$/.exec(path);
    if (resp) return this.#responseById(res, method, decodeURIComponent(resp[1]!), resp[2]);
    const video = /^\/videos\/([^/]+)(\/content|\/remix)?$/.exec(path);
    if (video) return this.#videoById(req, res, method, decodeURIComponent(video[1]!), video[2], url, now);
    throw new HttpError(404, `the demo backend has no route ${method} ${url.pathname}`, 'unknown_url');
  }

  #chat(res: ServerResponse, { body, raw }: { body: Json; raw: string }, now: number): void {
    const plan = planChat(body, raw, now);
    if (body.stream !== true) return sendJson(res, 200, chatCompletion(plan));
    const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true;
    startSse(res);
    for (const data of chatChunks(plan, includeUsage)) res.write(`data: ${data}\n\n`);
    res.end();
  }

  #createResponse(res: ServerResponse, { body, raw }: { body: Json; raw: string }, now: number): void {
    const plan = planResponse(body, raw, now);
    if (body.store !== false) {
      this.#responses.set(plan.id, { plan, cancelled: false });
      if (this.#responses.size > MAX_STORED_RESPONSES) this.#responses.delete(this.#responses.keys().next().value!);
    }
    if (body.stream !== true) return sendJson(res, 200, responseObject(plan, 'completed'));
    startSse(res);
    for (const [type, payload] of responseEvents(plan)) res.write(`event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`);
    res.end();
  }

  #responseById(res: ServerResponse, method: string, id: string, action: string | undefined): void {
    const stored = this.#responses.get(id);
    if (!stored) throw new HttpError(404, `No response found with id '${id}'.`, 'not_found');
    if (method === 'GET' && action === undefined) return sendJson(res, 200, responseObject(stored.plan, stored.cancelled ? 'cancelled' : 'completed'));
    if (method === 'GET' && action === '/input_items') return sendJson(res, 200, inputItems(stored.plan));
    if (method === 'POST' && action === '/cancel') {
      stored.cancelled = true;
      return sendJson(res, 200, responseObject(stored.plan, 'cancelled'));
    }
    if (method === 'DELETE' && action === undefined) {
      this.#responses.delete(id);
      return sendJson(res, 200, { id, object: 'response.deleted', deleted: true });
    }
    throw new HttpError(405, `method ${method} is not allowed here`, 'method_not_allowed');
  }

  async #videoById(req: IncomingMessage, res: ServerResponse, method: string, id: string, action: string | undefined, url: URL, now: number): Promise<void> {
    const notFound = () => new HttpError(404, `No video found with id '${id}'.`, 'not_found');
    if (method === 'GET' && action === undefined) return sendJson(res, 200, this.#videos.get(id, now) ?? throwIt(notFound()));
    if (method === 'DELETE' && action === undefined) return sendJson(res, 200, this.#videos.delete(id) ?? throwIt(notFound()));
    if (method === 'POST' && action === '/remix') {
      const { body } = await readJson(req);
      return sendJson(res, 200, this.#videos.remix(id, body, now) ?? throwIt(notFound()));
    }
    if (method === 'GET' && action === '/content') {
      if (!this.#videos.get(id, now)) throw notFound();
      if (!this.#videos.isCompleted(id, now)) throw new HttpError(400, 'Video is not ready yet; poll until its status is completed.', 'video_not_ready');
      const variant = url.searchParams.get('variant') ?? 'video';
      if (variant === 'thumbnail' || variant === 'spritesheet') return sendBytes(res, 'image/png', demoPng(`${id}\0${variant}`));
      return sendBytes(res, 'video/mp4', demoVideoBytes(id));
    }
    throw new HttpError(405, `method ${method} is not allowed here`, 'method_not_allowed');
  }

  #embeddings(res: ServerResponse, body: Json): void {
    const model = String(body.model ?? 'demo');
    const raw = body.input;
    const inputs: unknown[] = Array.isArray(raw) && raw.length > 0 && typeof raw[0] !== 'number' ? raw : [raw];
    if (inputs.some((i) => i === undefined || i === '')) throw new HttpError(400, "'input' must be a non-empty string or array", 'invalid_value');
    const dimensions = typeof body.dimensions === 'number' && body.dimensions >= 1 && body.dimensions <= 4096 ? Math.floor(body.dimensions) : 256;
    const base64 = body.encoding_format === 'base64';
    let tokens = 0;
    const data = inputs.map((input, index) => {
      const text = typeof input === 'string' ? input : JSON.stringify(input);
      tokens += typeof input === 'string' ? countTokens(input) : Array.isArray(input) ? input.length : 1;
      const v = embeddingVector(model, text, dimensions);
      return { object: 'embedding', index, embedding: base64 ? vectorBase64(v) : Array.from(v) };
    });
    sendJson(res, 200, { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  }

  #images(res: ServerResponse, body: Json, now: number): void {
    const n = Math.min(10, Math.max(1, Number(body.n ?? 1) || 1));
    const prompt = String(body.prompt ?? '');
    const data = Array.from({ length: n }, (_, i) => {
      const b64 = demoPng(`${prompt}\0${i}`).toString('base64');
      return body.response_format === 'url' ? { url: `data:image/png;base64,${b64}`, revised_prompt: prompt } : { b64_json: b64, revised_prompt: prompt };
    });
    sendJson(res, 200, {
      created: Math.floor(now / 1000),
      data,
      usage: { input_tokens: countTokens(prompt), output_tokens: 0, total_tokens: countTokens(prompt) },
    });
  }

  #transcribe(res: ServerResponse, form: MultipartForm, translate: boolean): void {
    const file = form.files[0];
    const text = `Demo ${translate ? 'translation' : 'transcription'} of ${file?.filename ?? 'no file'} (${file?.bytes ?? 0} bytes).`;
    const format = String(form.fields.response_format ?? 'json');
    if (format === 'text') return sendBytes(res, 'text/plain; charset=utf-8', Buffer.from(text));
    if (format === 'srt') return sendBytes(res, 'text/plain; charset=utf-8', Buffer.from(`1\n00:00:00,000 --> 00:00:01,000\n${text}\n`));
    if (format === 'vtt') return sendBytes(res, 'text/vtt; charset=utf-8', Buffer.from(`WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n${text}\n`));
    if (format === 'verbose_json') {
      return sendJson(res, 200, { task: translate ? 'translate' : 'transcribe', language: 'english', duration: 1, text, segments: [] });
    }
    sendJson(res, 200, { text, usage: { type: 'duration', seconds: 1 } });
  }
}

function throwIt(e: Error): never {
  throw e;
}

// ---- I/O helpers ------------------------------------------------------------------------------------------

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, 'request body too large for the demo backend', 'payload_too_large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function readJson(req: IncomingMessage): Promise<{ body: Json; raw: string }> {
  const raw = (await readBody(req)).toString('utf8');
  let body: unknown;
  try {
    body = raw === '' ? {} : JSON.parse(raw);
  } catch {
    throw new HttpError(400, 'We could not parse the JSON body of your request.', 'invalid_json');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'the request body must be a JSON object', 'invalid_json');
  return { body: body as Json, raw };
}

function isMultipart(req: IncomingMessage): boolean {
  return (req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data');
}

interface MultipartForm {
  fields: Json;
  files: Array<{ field: string; filename: string; bytes: number }>;
}

function readMultipart(req: IncomingMessage): Promise<MultipartForm> {
  if (!isMultipart(req)) return Promise.reject(new HttpError(400, 'expected a multipart/form-data body', 'invalid_content_type'));
  return new Promise((resolve, reject) => {
    const form: MultipartForm = { fields: {}, files: [] };
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: MAX_BODY } });
    } catch {
      reject(new HttpError(400, 'malformed multipart body', 'invalid_multipart'));
      return;
    }
    parser.on('field', (name, value) => {
      form.fields[name] = value;
    });
    parser.on('file', (field, stream, info) => {
      const entry = { field, filename: info.filename ?? 'upload', bytes: 0 };
      form.files.push(entry);
      stream.on('data', (d: Buffer) => (entry.bytes += d.length));
    });
    parser.on('close', () => resolve(form));
    parser.on('error', () => reject(new HttpError(400, 'malformed multipart body', 'invalid_multipart')));
    req.pipe(parser);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

function sendBytes(res: ServerResponse, contentType: string, body: Buffer): void {
  res.writeHead(200, { 'content-type': contentType, 'content-length': body.length });
  res.end(body);
}

function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
}

function sendError(res: ServerResponse, e: HttpError): void {
  const type = e.status >= 500 ? 'server_error' : 'invalid_request_error';
  sendJson(res, e.status, { error: { message: e.message, type, param: null, code: e.code } });
}
