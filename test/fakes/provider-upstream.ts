// A fake cloud provider's OpenAI-compatible endpoint on 127.0.0.1: before answering, it checks what the real
// provider checks (a key header, a query parameter, an access token, a SigV4 signature, a deployment path), through
// a `check` the test gives it, and refuses with 401 like the provider when that fails (or the status and the body a
// test names). It answers chat completions (JSON and streams, usage included) and embeddings, and records every
// request it received.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import { listenOnLoopback } from './loopback.js';

export interface ProviderRequest {
  readonly method: string;
  /** As received: path and query string, percent-encoded. */
  readonly url: string;
  readonly pathname: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly headersDistinct: IncomingMessage['headersDistinct'];
  readonly body: Buffer;
}

/** Why the provider refuses the request, or undefined to answer it. */
export type ProviderCheck = (req: ProviderRequest) => string | undefined;

/** A refusal in the provider's own shape (Bedrock's {"message"}, Google's, Azure's); resolved when it may be sent. */
export type ProviderRefusal = (
  reason: string,
) => { headers?: Record<string, string>; body: string } | Promise<{ headers?: Record<string, string>; body: string }>;

/** OpenAI's refusal, which the OpenAI-compatible endpoints of the clouds send for most model errors. */
const openAiRefusal: ProviderRefusal = (reason) => ({
  body: JSON.stringify({ error: { message: `refused: ${reason}`, type: 'invalid_request_error', code: 'invalid_api_key' } }),
});

export interface ProviderUpstream {
  readonly origin: string;
  readonly requests: ProviderRequest[];
  /** Requests refused by the check, with the reason. */
  readonly refused: Array<{ request: ProviderRequest; reason: string }>;
  close(): Promise<void>;
}

export async function startProviderUpstream(check: ProviderCheck, refuseWith = 401, refusal = openAiRefusal): Promise<ProviderUpstream> {
  const requests: ProviderRequest[] = [];
  const refused: Array<{ request: ProviderRequest; reason: string }> = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://provider');
    const r: ProviderRequest = {
      method: req.method ?? '',
      url: req.url ?? '/',
      pathname: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      headersDistinct: req.headersDistinct,
      body: Buffer.concat(chunks),
    };
    requests.push(r);
    const reason = check(r);
    if (reason !== undefined) {
      refused.push({ request: r, reason });
      const { headers, body } = await refusal(reason);
      res.writeHead(refuseWith, { 'content-type': 'application/json', ...headers });
      res.end(body);
      return;
    }
    const body = r.body.length > 0 ? (JSON.parse(r.body.toString('utf8')) as Record<string, unknown>) : {};
    const model = String(body['model'] ?? 'unknown');
    if (url.pathname.endsWith('/embeddings')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          model,
          data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
          usage: { prompt_tokens: 2, total_tokens: 2 },
        }),
      );
      return;
    }
    if (!url.pathname.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${url.pathname}`, type: 'invalid_request_error' } }));
      return;
    }
    const base = { id: 'chatcmpl-provider', created: 1_700_000_000, model };
    if (body['stream'] === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
      res.write(
        chunk({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }] }),
      );
      res.write(chunk({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: ' there' }, finish_reason: 'stop' }] }));
      res.write(chunk({ ...base, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }));
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      }),
    );
  });
  const loop = await listenOnLoopback(server);
  return {
    origin: loop.origin,
    requests,
    refused,
    close: loop.close,
  };
}
