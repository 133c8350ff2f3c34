// A fake Anthropic Messages API on 127.0.0.1 that plays a scripted conversation for a coding agent and records
// every request (method, path with its query, headers, JSON body). A request whose messages[] already hold k
// assistant turns gets turn k, so a client's retry of the same step (e.g. Claude Code retrying unstreamed) gets
// the same answer (a turn may instead drop the connection mid-stream or send an error event in it). Streams carry the `event:` lines Claude Code needs (without them it quietly retries unstreamed).
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { messageEvents, messageJson, sseEvent, stepOf } from './anthropic-events.js';
import { listenOnLoopback } from './loopback.js';

type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export interface AnthropicTurn {
  content: AnthropicBlock[];
  stop_reason: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';
  usage: AnthropicUsage;
  /** Stream message_start and the first block's first delta, then drop the connection (an upstream dying mid-stream). */
  cut?: boolean;
  /** Stream message_start and the first block's first delta, then send nothing more and keep the connection open. */
  hang?: boolean;
  /** Stream message_start and the first block's first delta, then Anthropic's mid-stream `error` event (e.g. overloaded_error) and end. */
  streamError?: { type: string; message: string };
  /**
   * Answer this status with Anthropic's error body instead (with retry-after, when given): every time, or the
   * first `times` requests of this step, then the turn itself (a client's retry that succeeds).
   */
  error?: { status: number; type: string; message: string; retryAfter?: string; times?: number };
}

interface AnthropicRequest {
  readonly method: string;
  /** Path with its query, e.g. "/v1/messages?beta=true". */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, any> | undefined;
}

export interface AnthropicUpstream {
  /** What ANTHROPIC_BASE_URL is set to (Claude Code appends /v1/messages). */
  readonly origin: string;
  /** origin + "/v1", what a ModelRoute backend's baseURL is set to. */
  readonly baseURL: string;
  readonly requests: AnthropicRequest[];
  /** How many answers had their connection closed before they ended (a client, or the gateway, that left). */
  abandoned(): number;
  close(): Promise<void>;
}

/** What count_tokens answers: a deterministic stand-in (a quarter of the counted JSON's length), not a tokenizer. */
export const countedTokens = (body: Record<string, unknown>) =>
  Math.ceil(JSON.stringify({ system: body['system'], messages: body['messages'], tools: body['tools'] }).length / 4);

export async function startAnthropicUpstream(turns: AnthropicTurn[]): Promise<AnthropicUpstream> {
  const requests: AnthropicRequest[] = [];
  const errored = new Map<AnthropicTurn, number>();
  let abandoned = 0;
  const server: Server = createServer(async (req, res) => {
    res.on('close', () => {
      if (!res.writableFinished) abandoned++;
    });
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text ? (JSON.parse(text) as Record<string, any>) : undefined;
    requests.push({ method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body });
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'POST' && path === '/v1/messages/count_tokens' && body) return sendJson(res, 200, { input_tokens: countedTokens(body) });
    if (req.method !== 'POST' || path !== '/v1/messages' || !body) return sendError(res, 404, 'not_found_error', `no fake for ${req.method} ${req.url}`);
    const step = stepOf(body);
    const turn = turns[step];
    if (!turn) return sendError(res, 400, 'invalid_request_error', `no scripted turn after ${step} assistant turns`);
    const errors = (errored.get(turn) ?? 0) + 1;
    errored.set(turn, errors);
    if (turn.error && errors <= (turn.error.times ?? Number.POSITIVE_INFINITY))
      return sendError(res, turn.error.status, turn.error.type, turn.error.message, turn.error.retryAfter);
    const id = `msg_fake_${step + 1}`;
    if (body['stream'] === true) return stream(res, id, String(body['model']), turn);
    sendJson(res, 200, messageJson(id, String(body['model']), turn));
  });
  const loop = await listenOnLoopback(server);
  const origin = loop.origin;
  return {
    origin,
    baseURL: `${origin}/v1`,
    requests,
    abandoned: () => abandoned,
    close: loop.close,
  };
}

function sendJson(res: ServerResponse, status: number, value: unknown, retryAfter?: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
  res.end(JSON.stringify(value));
}

function sendError(res: ServerResponse, status: number, type: string, message: string, retryAfter?: string): void {
  sendJson(res, status, { type: 'error', error: { type, message } }, retryAfter);
}

/** The event sequence the Messages API streams, with the `event:` lines. */
function stream(res: ServerResponse, id: string, model: string, turn: AnthropicTurn): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': 'req_fake' });
  for (const e of messageEvents(id, model, turn)) {
    res.write(sseEvent(e));
    // Cut once the first text has gone out, so the client has seen the stream start.
    if ((turn.cut || turn.hang) && e.type === 'content_block_delta' && (e['delta'] as { type?: string }).type === 'text_delta') {
      if (turn.cut) res.write('', () => res.socket?.destroy());
      return;
    }
  }
  res.end();
}
