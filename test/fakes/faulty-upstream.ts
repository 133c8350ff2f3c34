// A fault-injecting OpenAI-compatible upstream on 127.0.0.1 for resilience tests. Each instance answers
// every request with its current Fault (settable at any time, or a function of the request), records what it
// received, and counts its sockets so tests can prove the gateway leaks none.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Fault =
  /** A normal answer: chat completion (JSON or SSE when body.stream), embeddings, transcription, or JSON echo. */
  | { kind: 'ok'; delayMs?: number; chunkDelayMs?: number }
  /** An error status with an OpenAI-shaped body; optional retry-after header. */
  | { kind: 'status'; status: number; retryAfter?: string; body?: unknown }
  /** Read the request, then destroy the socket without a byte of response. */
  | { kind: 'reset' }
  /** Start the status line and headers, then destroy the socket in the middle of them. */
  | { kind: 'reset-mid-headers' }
  /** Read the request and never answer. */
  | { kind: 'hang' }
  /** Send headers and `chunks` SSE chunks, then go silent with the connection open. */
  | { kind: 'hang-mid-stream'; chunks?: number }
  /** Send headers and `chunks` SSE chunks, then destroy the socket. */
  | { kind: 'close-mid-stream'; chunks?: number }
  /** Send JSON headers and half a JSON body, then go silent with the connection open. */
  | { kind: 'hang-mid-body' }
  /** A binary (audio/mpeg) body of `chunks` chunks of `chunkBytes` (default 1 KiB), one every `everyMs`. */
  | { kind: 'slow-binary'; chunks: number; everyMs: number; chunkBytes?: number };

interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
  /** Parsed body when it was JSON. */
  readonly json: Record<string, unknown> | undefined;
  readonly at: number;
}

export interface FaultyUpstream {
  readonly name: string;
  /** Base URL including /v1, as a ModelRoute backend's baseURL. */
  readonly baseURL: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  setFault(fault: Fault | ((req: RecordedRequest, n: number) => Fault)): void;
  /** Sockets open right now. */
  openSockets(): number;
  /** Connections accepted since start. */
  connections(): number;
  /** Requests whose client went away before this upstream finished answering. */
  abortedRequests(): number;
  close(): Promise<void>;
}

export async function startFaultyUpstream(name: string, fault: Fault = { kind: 'ok' }): Promise<FaultyUpstream> {
  let current: Fault | ((req: RecordedRequest, n: number) => Fault) = fault;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let aborted = 0;
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    try {
      for await (const c of req) chunks.push(c as Buffer);
    } catch {
      return;
    }
    const body = Buffer.concat(chunks);
    let json: Record<string, unknown> | undefined;
    if (String(req.headers['content-type'] ?? '').includes('json')) {
      try {
        json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        json = undefined;
      }
    }
    const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json, at: Date.now() };
    requests.push(recorded);
    res.on('close', () => {
      if (!res.writableFinished) aborted++;
    });
    const f = typeof current === 'function' ? current(recorded, requests.length) : current;
    respond(f, recorded, req, res);
  });

  function respond(f: Fault, r: RecordedRequest, req: IncomingMessage, res: ServerResponse): void {
    switch (f.kind) {
      case 'ok':
        if (f.delayMs) later(f.delayMs, () => answer(r, res, f.chunkDelayMs ?? 0));
        else answer(r, res, f.chunkDelayMs ?? 0);
        return;
      case 'status': {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (f.retryAfter !== undefined) headers['retry-after'] = f.retryAfter;
        res.writeHead(f.status, headers);
        res.end(JSON.stringify(f.body ?? { error: { message: `${name} says ${f.status}`, type: 'upstream_error', param: null, code: null } }));
        return;
      }
      case 'reset':
        req.socket.destroy();
        return;
      case 'reset-mid-headers':
        req.socket.write('HTTP/1.1 200 OK\r\ncontent-type: applica');
        req.socket.destroy();
        return;
      case 'hang':
        return;
      case 'slow-binary': {
        res.writeHead(200, { 'content-type': 'audio/mpeg' });
        const send = (i: number) => {
          if (res.destroyed) return;
          if (i === f.chunks) return void res.end();
          res.write(Buffer.alloc(f.chunkBytes ?? 1024, i));
          later(f.everyMs, () => send(i + 1));
        };
        send(0);
        return;
      }
      case 'hang-mid-body':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"id":"chatcmpl-partial","choices":[');
        return;
      case 'hang-mid-stream':
      case 'close-mid-stream':
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (let i = 0; i < (f.chunks ?? 1); i++) res.write(sseChunk(r, `part${i} `));
        if (f.kind === 'close-mid-stream') later(20, () => req.socket.destroy());
        return;
    }
  }

  function answer(r: RecordedRequest, res: ServerResponse, chunkDelayMs: number): void {
    if (res.destroyed) return;
    const model = typeof r.json?.model === 'string' ? r.json.model : 'unknown';
    if (r.json?.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const parts = ['from ', name];
      const send = (i: number) => {
        if (res.destroyed) return;
        if (i < parts.length) {
          res.write(sseChunk(r, parts[i]!));
          if (chunkDelayMs) later(chunkDelayMs, () => send(i + 1));
          else send(i + 1);
        } else res.end(`data: ${JSON.stringify({ ...chunkBase(model), choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
      };
      send(0);
      return;
    }
    let payload: unknown;
    if (r.path.endsWith('/embeddings')) {
      payload = { object: 'list', model, data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], usage: { prompt_tokens: 1, total_tokens: 1 } };
    } else if (r.path.includes('/audio/')) {
      payload = { text: `from ${name}` };
    } else {
      payload = {
        id: `chatcmpl-${name}-${requests.length}`,
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: `from ${name}` }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
      };
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  }

  server.on('connection', (s: Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;

  return {
    name,
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    setFault: (f) => {
      current = f;
    },
    openSockets: () => sockets.size,
    connections: () => connections,
    abortedRequests: () => aborted,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A base URL on 127.0.0.1 where nothing listens (connection refused): a port bound, read and released. */
export async function refusingBaseURL(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

function chunkBase(model: string) {
  return { id: 'chatcmpl-stream', object: 'chat.completion.chunk', created: 1, model };
}

function sseChunk(r: RecordedRequest, content: string): string {
  const model = typeof r.json?.model === 'string' ? r.json.model : 'unknown';
  return `data: ${JSON.stringify({ ...chunkBase(model), choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
}
