// Forwards one client request to the first backend (of an ordered list) that answers, then relays the upstream
// response: status and headers as they came (minus hop-by-hop), the body piped chunk by chunk with back-pressure
// (SSE included: nothing is buffered), a cheap tap for time-to-first-token and token usage, and a client
// disconnect aborting the upstream request.
import type { Request, Response } from 'express';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { CompiledBackend, RouteTimeouts } from '../config/table.js';
import type { RequestContext } from '../http/context.js';
import type { Metrics } from '../observability/metrics.js';
import { statusClass } from '../observability/metrics.js';
import { runAttempts } from './attempts.js';
import { downstreamHeaders, upstreamRequestHeaders } from './headers.js';
import type { UpstreamClient, UpstreamResponse } from './upstream-client.js';
import { failureToError } from './upstream-errors.js';
import { extractUsage, TailBuffer } from './usage-tap.js';

export interface OutgoingBody {
  readonly body: Buffer;
  readonly contentType: string | undefined;
}

export interface ResponseInfo {
  readonly backend: CompiledBackend;
  readonly statusCode: number;
  readonly headers: UpstreamResponse['headers'];
}

/**
 * Optional body rewrite (e.g. replacing upstream ids in JSON or SSE bodies). Return undefined to relay the
 * bytes untouched. When a transform is used, content-length is dropped (the body is sent chunked).
 */
export type ResponseTransform = (info: ResponseInfo) => Transform | undefined;

export interface ForwardDeps {
  readonly upstream: UpstreamClient;
  readonly metrics: Metrics;
}

export interface ForwardOptions {
  readonly req: Request;
  readonly res: Response;
  readonly ctx: RequestContext;
  readonly method: string;
  /** Path below the backend's base URL, e.g. "/chat/completions", with the client's query string if any. */
  readonly path: string;
  readonly backends: readonly CompiledBackend[];
  readonly timeouts: RouteTimeouts;
  /** The request body for a backend (its upstream model name differs per backend); null for no body. */
  readonly body: (backend: CompiledBackend) => OutgoingBody | null;
  readonly transform?: ResponseTransform;
  /** Labels for TTFT and usage metrics. */
  readonly labels: { family: string; model: string };
}

/** Resolves when the response has been relayed, or the client went away. Rejects with a GatewayError before any byte was sent. */
export async function forward(deps: ForwardDeps, o: ForwardOptions): Promise<void> {
  const { req, res, ctx } = o;
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) {
      ctx.aborted = true;
      abort.abort();
    }
  });

  let sentAt = 0n;
  const result = await runAttempts(o.backends, {
    send: (backend) => {
      ctx.backend = backend.name;
      const out = o.body(backend);
      sentAt = process.hrtime.bigint();
      return deps.upstream.request({
        backend,
        method: o.method,
        path: backend.basePath + o.path,
        headers: upstreamRequestHeaders(req.headers, {
          apiKey: backend.apiKey,
          contentType: out?.contentType,
          contentLength: out?.body.length ?? 0,
          requestId: ctx.id,
        }),
        body: out?.body ?? null,
        timeouts: o.timeouts,
        signal: abort.signal,
      });
    },
    onAttempt: (backend, outcome) => {
      const label = typeof outcome === 'string' ? outcome : statusClass(outcome.statusCode);
      deps.metrics.upstreamAttempts.inc({ backend: backend.id, outcome: label });
    },
    isAborted: () => abort.signal.aborted,
  });
  ctx.attempts = result.attempts;
  if (!result.ok) {
    if (result.kind === 'aborted') return;
    res.setHeader('x-model-gateway-attempts', String(result.attempts));
    throw failureToError(result.kind);
  }

  const { response, backend } = result;
  const now = process.hrtime.bigint();
  const transform = o.transform?.({ backend, statusCode: response.statusCode, headers: response.headers });
  const headers = downstreamHeaders(response.headers, transform === undefined);
  headers['x-model-gateway-backend'] = backend.name;
  headers['x-model-gateway-attempts'] = String(result.attempts);
  const upstreamMs = Number(now - sentAt) / 1e6;
  const totalMs = Number(now - ctx.start) / 1e6;
  headers['server-timing'] = `gateway;dur=${Math.max(0, totalMs - upstreamMs).toFixed(3)}, upstream;dur=${upstreamMs.toFixed(3)}`;
  res.writeHead(response.statusCode, headers);

  const contentType = String(response.headers['content-type'] ?? '');
  const isStream = contentType.startsWith('text/event-stream');
  // Send the headers now so a streaming client sees the status before the first event.
  if (isStream) res.flushHeaders();
  tapBody(deps.metrics, o, response, isStream, contentType);

  if (transform) {
    try {
      await pipeline(response.body, transform, res);
    } catch {
      cut(response.body, res);
    }
  } else {
    await relay(response.body, res);
  }
}

/** Client gone or upstream failed mid-body: the status line is out, so cutting the connection is the only signal left. */
function cut(src: Readable, dst: Response): void {
  if (!dst.destroyed) dst.destroy();
  if (!src.destroyed) src.destroy();
}

/**
 * src.pipe(dst) with the error handling pipeline() would add. pipeline() is avoided on the hot path because it
 * allocates an AbortController per call and aborts it on completion, which builds a DOMException with a stack
 * trace for every request (about 5% of CPU in a profile). pipe() does the back-pressure.
 */
function relay(src: Readable, dst: Response): Promise<void> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      src.off('error', onError);
      dst.off('close', onClose);
      resolve();
    };
    const onError = () => {
      cut(src, dst);
      settle();
    };
    const onClose = () => {
      if (!dst.writableFinished) cut(src, dst);
      settle();
    };
    if (dst.destroyed) {
      // The client left between the upstream's answer and here: its 'close' has already fired.
      cut(src, dst);
      settle();
      return;
    }
    src.on('error', onError);
    dst.on('close', onClose);
    src.pipe(dst);
  });
}

/** Observes the body as it flows past: first-chunk time for streams and the tail for token usage. */
function tapBody(metrics: Metrics, o: ForwardOptions, response: UpstreamResponse, isStream: boolean, contentType: string): void {
  const wantsUsage = response.statusCode < 300 && (isStream || contentType.includes('json'));
  if (!isStream && !wantsUsage) return;
  const tail = wantsUsage ? new TailBuffer() : undefined;
  let first = isStream;
  response.body.on('data', (chunk: Buffer) => {
    if (first) {
      first = false;
      const seconds = Number(process.hrtime.bigint() - o.ctx.start) / 1e9;
      metrics.timeToFirstToken.observe(o.labels, seconds);
    }
    tail?.push(chunk);
  });
  if (tail) {
    response.body.once('end', () => {
      const usage = extractUsage(tail.text());
      if (!usage) return;
      if (usage.input !== undefined) metrics.tokenUsage.observe({ ...o.labels, type: 'input' }, usage.input);
      if (usage.output !== undefined) metrics.tokenUsage.observe({ ...o.labels, type: 'output' }, usage.output);
    });
  }
}
