// A fake OpenAI-compatible upstream for video tasks and stored responses, on 127.0.0.1 with an ephemeral port.
// Videos: create (JSON or multipart with input_reference), retrieve (each retrieve advances queued →
// in_progress → completed), content (?variant=video|thumbnail|spritesheet, paced chunks, optional hold),
// remix, delete, list. Responses: create (JSON or SSE), retrieve (incl. ?stream=true&starting_after=N, or answered whole),
// cancel (background only), delete, input_items with cursor pagination; a background response runs on over retrieves
// (queued → in_progress → completed, backgroundSteps). Every request is recorded.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';
import { ResponsesStore, sseFrame, type CreateBody, type FakeUsage } from './fake-responses-store.js';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  contentType: string | undefined;
  body: Buffer;
  json?: unknown;
  fields?: Record<string, string>;
  files?: { field: string; filename: string; mimeType: string; bytes: Buffer }[];
}

export interface FakeVideo extends Record<string, unknown> {
  id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
}

export type Variant = 'video' | 'thumbnail' | 'spritesheet';

export interface FakeUpstreamOptions {
  /** Size of the `video` variant (default 6 MiB). */
  videoBytes?: number;
  /** Content is written in chunks of this size (default 64 KiB) ... */
  chunkBytes?: number;
  /** ... with this pause between chunks (default 0). */
  chunkDelayMs?: number;
  /** Pause between streamed Responses events (default 0). */
  eventDelayMs?: number;
  /**
   * A background response is in progress after this many retrieves and completed after twice as many (streamed or
   * not); absent: it stays queued.
   */
  backgroundSteps?: number;
  /** The usage a completed background response reports (default: 5 input tokens, one output token per word). */
  backgroundUsage?: FakeUsage;
  /** A streamed retrieve (`?stream=true`) is answered with the whole JSON response, as a server ignoring `stream` does. */
  wholeRetrieves?: boolean;
}

const CONTENT_TYPES: Record<Variant, string> = { video: 'video/mp4', thumbnail: 'image/webp', spritesheet: 'image/jpeg' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Deterministic bytes so a test can check what arrived without the fake keeping a copy per request. */
export function contentBytes(variant: Variant, size: number): Buffer {
  const seed = variant === 'video' ? 7 : variant === 'thumbnail' ? 11 : 13;
  const b = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed + (i >> 12)) & 0xff;
  return b;
}

export class FakeVideoResponsesUpstream {
  readonly requests: RecordedRequest[] = [];
  readonly videos = new Map<string, FakeVideo>();
  readonly responses = new ResponsesStore();
  /** Counters of content downloads, to observe streaming from the outside. */
  readonly content = { started: 0, finished: 0, aborted: 0 };
  #hold: { promise: Promise<void>; release: () => void } | undefined;
  readonly #sizes: Record<Variant, number>;

  private constructor(
    private readonly server: Server,
    readonly baseURL: string,
    private readonly options: FakeUpstreamOptions,
  ) {
    this.#sizes = { video: options.videoBytes ?? 6 * 1024 * 1024, thumbnail: 32 * 1024, spritesheet: 128 * 1024 };
  }

  static async start(options: FakeUpstreamOptions = {}): Promise<FakeVideoResponsesUpstream> {
    let self: FakeVideoResponsesUpstream | undefined;
    const server = createServer((req, res) => {
      self!.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) json(res, 500, { error: { message: String(err), type: 'server_error', param: null, code: null } });
        else res.destroy();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    self = new FakeVideoResponsesUpstream(server, `http://127.0.0.1:${port}/v1`, options);
    return self;
  }

  sizeOf(variant: Variant): number {
    return this.#sizes[variant];
  }

  /** The next content downloads stop after their first chunk until release() is called. */
  holdContent(): () => void {
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    this.#hold = { promise, release };
    return () => {
      this.#hold = undefined;
      release();
    };
  }

  /** Requests whose path starts with the given prefix (e.g. '/v1/videos'). */
  received(prefix: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path.startsWith(prefix));
  }

  async close(): Promise<void> {
    this.#hold?.release();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      authorization: req.headers.authorization,
      contentType: req.headers['content-type'],
      body: Buffer.alloc(0),
    };
    this.requests.push(rec);
    await readBody(req, rec);
    const parts = url.pathname.split('/').filter(Boolean); // ['v1', 'videos', id, sub]
    if (parts[0] !== 'v1') return notFound(res, 'route');
    if (parts[1] === 'videos') return this.videosRoute(rec, parts.slice(2), res);
    if (parts[1] === 'responses') return this.responsesRoute(rec, parts.slice(2), res);
    return notFound(res, 'route');
  }

  private async videosRoute(rec: RecordedRequest, rest: string[], res: ServerResponse): Promise<void> {
    const [id, sub] = rest;
    if (id === undefined) {
      if (rec.method === 'GET') return json(res, 200, { object: 'list', data: [...this.videos.values()], first_id: null, last_id: null, has_more: false });
      if (rec.method !== 'POST') return notFound(res, 'route');
      const body = (rec.json ?? rec.fields ?? {}) as Record<string, unknown>;
      if (typeof body.prompt !== 'string') return badRequest(res, 'Missing required parameter: prompt', 'prompt');
      return json(res, 200, this.newVideo(body, null));
    }
    const video = this.videos.get(id);
    if (!video) return notFound(res, `video '${id}'`);
    if (sub === undefined && rec.method === 'GET') {
      if (video.status === 'queued') Object.assign(video, { status: 'in_progress', progress: 50 });
      else if (video.status === 'in_progress') Object.assign(video, { status: 'completed', progress: 100, completed_at: now() });
      return json(res, 200, video);
    }
    if (sub === undefined && rec.method === 'DELETE') {
      this.videos.delete(id);
      return json(res, 200, { id, object: 'video.deleted', deleted: true });
    }
    if (sub === 'remix' && rec.method === 'POST') {
      const body = (rec.json ?? rec.fields ?? {}) as Record<string, unknown>;
      return json(res, 200, this.newVideo({ ...body, model: video.model, seconds: video.seconds, size: video.size }, id));
    }
    if (sub === 'content' && rec.method === 'GET') {
      if (video.status !== 'completed') return badRequest(res, `Video '${id}' is not ready (status ${video.status}).`, null);
      const variant = (rec.query.get('variant') ?? 'video') as Variant;
      if (!(variant in CONTENT_TYPES)) return badRequest(res, `Invalid variant '${variant}'.`, 'variant');
      return this.sendContent(variant, res);
    }
    return notFound(res, 'route');
  }

  private newVideo(body: Record<string, unknown>, remixedFrom: string | null): FakeVideo {
    const video: FakeVideo = {
      id: `video_${randomBytes(24).toString('hex')}`,
      object: 'video',
      created_at: now(),
      completed_at: null,
      expires_at: null,
      error: null,
      model: typeof body.model === 'string' ? body.model : 'sora-2',
      progress: 0,
      prompt: String(body.prompt),
      remixed_from_video_id: remixedFrom,
      seconds: typeof body.seconds === 'string' ? body.seconds : '4',
      size: typeof body.size === 'string' ? body.size : '720x1280',
      status: 'queued',
    };
    this.videos.set(video.id, video);
    return video;
  }

  private async sendContent(variant: Variant, res: ServerResponse): Promise<void> {
    const size = this.#sizes[variant];
    const bytes = contentBytes(variant, size);
    const chunk = this.options.chunkBytes ?? 64 * 1024;
    this.content.started++;
    res.writeHead(200, { 'content-type': CONTENT_TYPES[variant], 'content-length': String(size) });
    let aborted = false;
    res.on('close', () => {
      if (!res.writableFinished) aborted = true;
    });
    for (let at = 0; at < size && !aborted; at += chunk) {
      if (!res.write(bytes.subarray(at, at + chunk))) await drainOrClose(res);
      if (at === 0 && this.#hold) await this.#hold.promise;
      if (this.options.chunkDelayMs) await sleep(this.options.chunkDelayMs);
    }
    if (aborted) {
      this.content.aborted++;
      return;
    }
    await new Promise<void>((r) => res.end(r));
    this.content.finished++;
  }

  private async responsesRoute(rec: RecordedRequest, rest: string[], res: ServerResponse): Promise<void> {
    const [id, sub] = rest;
    // The create, compact and input_tokens take the same request body.
    const bodyCall = rec.method === 'POST' && (id === undefined || (sub === undefined && (id === 'compact' || id === 'input_tokens')));
    if (bodyCall) {
      const body = (rec.json ?? {}) as CreateBody & { stream?: boolean };
      const prev = body.previous_response_id;
      if (prev && !this.responses.items.has(prev)) {
        return json(res, 400, {
          error: {
            message: `Previous response with id '${prev}' not found.`,
            type: 'invalid_request_error',
            param: 'previous_response_id',
            code: 'previous_response_not_found',
          },
        });
      }
      if (id === 'input_tokens') return json(res, 200, { object: 'response.input_tokens', input_tokens: 7 });
      if (id === 'compact') return json(res, 200, this.responses.compaction(body));
      const stored = this.responses.create(body);
      if (body.stream && !body.background) return this.sendEvents(stored.events, res);
      return json(res, 200, stored.response);
    }
    const stored = id === undefined ? undefined : this.responses.items.get(id);
    if (!stored || id === undefined) return notFound(res, `response '${id ?? ''}'`);
    if (sub === undefined && rec.method === 'GET') {
      this.responses.advance(stored, this.options.backgroundSteps, this.options.backgroundUsage);
      if (rec.query.get('stream') === 'true' && !this.options.wholeRetrieves) {
        const after = Number(rec.query.get('starting_after') ?? -1);
        return this.sendEvents(
          stored.events.filter((e) => (e.sequence_number as number) > after),
          res,
        );
      }
      return json(res, 200, stored.response);
    }
    if (sub === undefined && rec.method === 'DELETE') {
      this.responses.items.delete(id);
      return json(res, 200, { id, object: 'response.deleted', deleted: true });
    }
    if (sub === 'cancel' && rec.method === 'POST') {
      if (!stored.response.background) return badRequest(res, 'Only responses created with background=true can be cancelled.', null);
      this.responses.cancel(stored, this.options.backgroundUsage);
      return json(res, 200, stored.response);
    }
    if (sub === 'input_items' && rec.method === 'GET') return json(res, 200, this.responses.inputItemsPage(stored, rec.query));
    return notFound(res, 'route');
  }

  private async sendEvents(events: Record<string, unknown>[], res: ServerResponse): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const e of events) {
      if (res.destroyed) return;
      res.write(sseFrame(e));
      if (this.options.eventDelayMs) await sleep(this.options.eventDelayMs);
    }
    res.end();
  }
}

async function readBody(req: IncomingMessage, rec: RecordedRequest): Promise<void> {
  const type = rec.contentType ?? '';
  if (type.startsWith('multipart/form-data')) {
    rec.fields = {};
    rec.files = [];
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      const bb = busboy({ headers: req.headers });
      bb.on('field', (name, value) => (rec.fields![name] = value));
      bb.on('file', (field, stream, info) => {
        const parts: Buffer[] = [];
        stream.on('data', (d: Buffer) => parts.push(d));
        stream.on('end', () => rec.files!.push({ field, filename: info.filename ?? '', mimeType: info.mimeType, bytes: Buffer.concat(parts) }));
      });
      bb.on('close', resolve);
      bb.on('error', reject);
      req.on('data', (d: Buffer) => chunks.push(d));
      req.pipe(bb);
    });
    rec.body = Buffer.concat(chunks);
    return;
  }
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  rec.body = Buffer.concat(chunks);
  if (type.includes('json') && rec.body.length > 0) rec.json = JSON.parse(rec.body.toString('utf8'));
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

function now(): number {
  return Math.floor(Date.now() / 1000);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

function notFound(res: ServerResponse, what: string): void {
  json(res, 404, { error: { message: `No ${what} found.`, type: 'invalid_request_error', param: null, code: 'not_found' } });
}

function badRequest(res: ServerResponse, message: string, param: string | null): void {
  json(res, 400, { error: { message, type: 'invalid_request_error', param, code: null } });
}
