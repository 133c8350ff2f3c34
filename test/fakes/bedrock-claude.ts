// A fake Amazon Bedrock runtime serving Claude through InvokeModel on 127.0.0.1. It checks what Bedrock checks: the
// SigV4 signature (by the independent verifier, region and service included), the path
// /model/{modelId}/invoke[-with-response-stream] with the model id percent-encoded, and a body without `model` or
// `stream` that names anthropic_version bedrock-2023-05-31, and an `anthropic_beta` holding only flags the model
// accepts (by default none: real Bedrock answers 400 "invalid beta flag" to one it does not support for the model);
// it refuses as Bedrock does (x-amzn-errortype and a {"message"} body). It plays a scripted conversation (turn k once the request holds k assistant turns), answering
// InvokeModel with Anthropic's JSON and the stream with AWS event-stream messages, each a chunk {"bytes": base64 of
// one Anthropic event}, encoded by the AWS SDK's own codec; a scripted exception message can end the stream, the
// bytes can be written in small slices to split messages, and a scripted error can answer every signed request.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { type AnthropicEvent, messageEvents, messageJson, stepOf } from './anthropic-events.js';
import type { AnthropicTurn } from './anthropic-upstream.js';
import { type SigV4Credentials, verifySigV4 } from './sigv4-verifier.js';
import { listenOnLoopback } from './loopback.js';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One `chunk` message of InvokeModelWithResponseStream wrapping an Anthropic event (with Bedrock's padding member). */
export function chunkMessage(event: object): Uint8Array {
  const bytes = Buffer.from(JSON.stringify(event), 'utf8').toString('base64');
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: 'chunk' },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify({ bytes, p: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ' })),
  });
}

/** An exception message of the stream, e.g. throttlingException, with its JSON body. */
export function exceptionMessage(type: string, body: Record<string, unknown>): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify(body)),
  });
}

interface BedrockRequest {
  readonly url: string;
  /** The model id, percent-decoded from the path. */
  readonly modelId: string;
  readonly operation: 'invoke' | 'invoke-with-response-stream';
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

export interface BedrockClaudeOptions {
  readonly region: string;
  readonly credentials: SigV4Credentials;
  readonly turns: readonly AnthropicTurn[];
  /** The beta flags the model accepts in the body's anthropic_beta; any other is refused with 400 (default: none). */
  readonly acceptedBetas?: readonly string[];
  /** Answers every signed request with this error, as Bedrock does (e.g. 503 ServiceUnavailableException, 429 ThrottlingException). */
  readonly failWith?: { readonly status: number; readonly type: string; readonly message: string };
  /** Ends the stream with this exception message after `afterEvents` events. */
  readonly exception?: { readonly afterEvents: number; readonly type: string; readonly message: string };
  /** Writes the stream in slices of this many bytes, so messages arrive split across chunks. */
  readonly sliceBytes?: number;
}

export interface BedrockClaude {
  readonly origin: string;
  /** Requests that passed the checks. */
  readonly requests: BedrockRequest[];
  /** Requests refused, with why. */
  readonly refused: string[];
  close(): Promise<void>;
}

const PATH = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/;

export async function startBedrockClaude(o: BedrockClaudeOptions): Promise<BedrockClaude> {
  const requests: BedrockRequest[] = [];
  const refused: string[] = [];
  const refuse = (res: ServerResponse, status: number, type: string, message: string) => {
    refused.push(`${type}: ${message}`);
    res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
    res.end(JSON.stringify({ message }));
  };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = req.url ?? '/';
    const verdict = verifySigV4({ method: req.method ?? '', path: url, headers: req.headersDistinct, body: raw }, (id) =>
      id === o.credentials.accessKeyId ? o.credentials : undefined,
    );
    if (!verdict.ok) return refuse(res, 403, 'InvalidSignatureException', verdict.reason);
    if (verdict.region !== o.region || verdict.service !== 'bedrock')
      return refuse(res, 403, 'InvalidSignatureException', `scope ${verdict.region}/${verdict.service}`);
    if (o.failWith) return refuse(res, o.failWith.status, o.failWith.type, o.failWith.message);
    const match = req.method === 'POST' ? PATH.exec(url) : null;
    if (!match) return refuse(res, 404, 'UnknownOperationException', `no operation ${req.method} ${url}`);
    if (!String(req.headers['content-type']).startsWith('application/json'))
      return refuse(res, 400, 'ValidationException', 'content type must be application/json');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      return refuse(res, 400, 'ValidationException', 'Malformed input request: body is not JSON');
    }
    for (const key of ['model', 'stream'])
      if (key in body) return refuse(res, 400, 'ValidationException', `Malformed input request: extraneous key [${key}] is not permitted`);
    if (body['anthropic_version'] !== 'bedrock-2023-05-31') return refuse(res, 400, 'ValidationException', 'Malformed input request: anthropic_version');
    const betas = body['anthropic_beta'];
    if (betas !== undefined && (!Array.isArray(betas) || betas.some((b) => !o.acceptedBetas?.includes(b))))
      return refuse(res, 400, 'ValidationException', 'invalid beta flag');
    const r: BedrockRequest = {
      url,
      modelId: decodeURIComponent(match[1]!),
      operation: match[2] as BedrockRequest['operation'],
      headers: req.headers,
      body,
    };
    const turn = o.turns[stepOf(body)];
    if (!turn) return refuse(res, 400, 'ValidationException', `no scripted turn after ${stepOf(body)} assistant turns`);
    requests.push(r);
    const id = `msg_bdrk_${requests.length}`;
    if (r.operation === 'invoke') {
      res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-bedrock-input-token-count': String(turn.usage.input_tokens) });
      res.end(JSON.stringify(messageJson(id, r.modelId, turn)));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-bedrock-content-type': 'application/json' });
    await writeStream(res, streamMessages(messageEvents(id, r.modelId, turn), turn, o), o.sliceBytes);
  });
  const loop = await listenOnLoopback(server);
  return {
    origin: loop.origin,
    requests,
    refused,
    close: loop.close,
  };
}

/** The stream's messages: Bedrock adds its invocation metrics to message_stop. */
function streamMessages(events: AnthropicEvent[], turn: AnthropicTurn, o: BedrockClaudeOptions): Uint8Array[] {
  const u = turn.usage;
  const metrics = { inputTokenCount: u.input_tokens, outputTokenCount: u.output_tokens, invocationLatency: 250, firstByteLatency: 90 };
  const out = events.map((e) => chunkMessage(e.type === 'message_stop' ? { ...e, 'amazon-bedrock-invocationMetrics': metrics } : e));
  if (o.exception === undefined) return out;
  return [...out.slice(0, o.exception.afterEvents), exceptionMessage(o.exception.type, { message: o.exception.message })];
}

async function writeStream(res: ServerResponse, messages: Uint8Array[], sliceBytes: number | undefined): Promise<void> {
  const all = Buffer.concat(messages);
  const step = sliceBytes ?? all.length;
  for (let at = 0; at < all.length; at += step) {
    // Each slice its own write on its own turn of the event loop, so slices tend to reach the client apart.
    if (!res.write(all.subarray(at, at + step))) await once(res, 'drain');
    if (sliceBytes !== undefined) await new Promise((r) => setImmediate(r));
  }
  res.end();
}
