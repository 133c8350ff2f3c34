// A fake Vertex AI publisher endpoint for Claude on 127.0.0.1. It checks what Vertex checks: a live Google access
// token (through `validToken`, e.g. google-token-server's `valid`), the path
// {basePath}/{model}:rawPredict | :streamRawPredict | count-tokens:rawPredict, and a body that names
// anthropic_version vertex-2023-10-16 and no `model` (count-tokens takes it in the body). Refusals are Google's
// error shape for authentication and Anthropic's for the body, as Vertex answers them. It plays a scripted
// conversation (turn k once the request holds k assistant turns), answering rawPredict with Anthropic's JSON and
// streamRawPredict with Anthropic's SSE; a scripted error in Google's shape can answer every authenticated request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { messageEvents, messageJson, sseEvent, stepOf } from './anthropic-events.js';
import type { AnthropicTurn } from './anthropic-upstream.js';
import { listenOnLoopback } from './loopback.js';

interface VertexRequest {
  readonly url: string;
  /** The model named in the path (decoded), or "count-tokens". */
  readonly model: string;
  readonly specifier: 'rawPredict' | 'streamRawPredict';
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

export interface VertexClaudeOptions {
  /** The publisher's model collection, e.g. /v1/projects/p/locations/us-east5/publishers/anthropic/models. */
  readonly basePath: string;
  readonly validToken: (token: string) => boolean;
  readonly turns: readonly AnthropicTurn[];
  /** Answers every authenticated request with this error in Google's shape (e.g. 429 RESOURCE_EXHAUSTED, 503 UNAVAILABLE). */
  readonly failWith?: { readonly status: number; readonly code: string; readonly message: string };
}

export interface VertexClaude {
  /** origin + basePath: a backend's baseURL. */
  readonly baseURL: string;
  readonly requests: VertexRequest[];
  readonly refused: string[];
  close(): Promise<void>;
}

export async function startVertexClaude(o: VertexClaudeOptions): Promise<VertexClaude> {
  const requests: VertexRequest[] = [];
  const refused: string[] = [];
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const refuseBody = (res: ServerResponse, message: string) => {
    refused.push(message);
    send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message } });
  };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined || !o.validToken(token)) {
      refused.push('not a live Google access token');
      return send(res, 401, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } });
    }
    if (o.failWith) {
      refused.push(`scripted ${o.failWith.status}`);
      return send(res, o.failWith.status, { error: { code: o.failWith.status, message: o.failWith.message, status: o.failWith.code } });
    }
    const url = req.url ?? '/';
    const path = url.split('?')[0]!;
    const match =
      req.method === 'POST' && path.startsWith(`${o.basePath}/`) ? /^([^/:]+):(rawPredict|streamRawPredict)$/.exec(path.slice(o.basePath.length + 1)) : null;
    if (!match) {
      refused.push(`no route ${req.method} ${url}`);
      return send(res, 404, { error: { code: 404, message: `no route ${url}`, status: 'NOT_FOUND' } });
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return refuseBody(res, 'the body is not JSON');
    }
    if (body['anthropic_version'] !== 'vertex-2023-10-16') return refuseBody(res, 'anthropic_version: must be vertex-2023-10-16');
    const r: VertexRequest = { url, model: decodeURIComponent(match[1]!), specifier: match[2] as VertexRequest['specifier'], headers: req.headers, body };
    if (r.model === 'count-tokens') {
      if (typeof body['model'] !== 'string') return refuseBody(res, 'model: Field required');
      requests.push(r);
      return send(res, 200, { input_tokens: o.turns[0]!.usage.input_tokens });
    }
    if ('model' in body) return refuseBody(res, 'model: Extra inputs are not permitted');
    if ((body['stream'] === true) !== (r.specifier === 'streamRawPredict')) return refuseBody(res, `stream ${String(body['stream'])} sent to ${r.specifier}`);
    const turn = o.turns[stepOf(body)];
    if (!turn) return refuseBody(res, `no scripted turn after ${stepOf(body)} assistant turns`);
    requests.push(r);
    const id = `msg_vrtx_${requests.length}`;
    if (r.specifier === 'rawPredict') return send(res, 200, messageJson(id, r.model, turn));
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    for (const e of messageEvents(id, r.model, turn)) res.write(sseEvent(e));
    res.end();
  });
  const loop = await listenOnLoopback(server);
  return {
    baseURL: `${loop.origin}${o.basePath}`,
    requests,
    refused,
    close: loop.close,
  };
}
