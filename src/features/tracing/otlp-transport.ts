// The exporter's HTTP client: each batch is POSTed on an undici Pool, the client the data plane already uses,
// through undici's dispatcher API (no stream objects). The SDK's own transport sends with node's http client, piping
// a Readable into the request: node's stream functions, which the gateway's server side also runs, then see more
// kinds of objects, and their property loads go megamorphic for every request, not only for the exports. That cost
// every traced request dearly (bench/results/performance-history.md). What it answers is what the SDK's transport answers:
// success, failure, or retryable (429, 502, 503, 504, a timeout, a network error), with the collector's retry-after.
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import { type ExportResponse, type IExporterTransport, OTLPExporterError } from '@opentelemetry/otlp-exporter-base';
import { type Dispatcher, Pool } from 'undici';
import { errorCode } from '../../dataplane/upstream/attempt-outcome.js';
import type { TracingConfig } from './tracing-config.js';

const gzipped = promisify(gzip);

/** A collector's answer larger than this is not read (as the SDK's transport): the export fails. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** Network errors after which the SDK's transport retries, and undici's names for the same (a reset, a timeout). */
const RETRYABLE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export interface OtlpTransportOptions {
  /** The collector's traces URL (…/v1/traces). */
  readonly url: string;
  /** The exporter's headers (OTEL_EXPORTER_OTLP_HEADERS and Content-Type), asked for at each export as the SDK does. */
  readonly headers: () => Promise<Record<string, string>>;
  readonly compression: 'gzip' | 'none';
  /** OTEL_EXPORTER_OTLP_CERTIFICATE, _CLIENT_CERTIFICATE and _CLIENT_KEY, read. */
  readonly tls: TracingConfig['tls'];
  readonly userAgent: string;
}

export class OtlpTransport implements IExporterTransport {
  readonly #url: URL;
  readonly #options: OtlpTransportOptions;
  readonly #pool: Pool;

  constructor(options: OtlpTransportOptions) {
    this.#url = new URL(options.url);
    this.#options = options;
    this.#pool = new Pool(this.#url.origin, { connect: { ...options.tls } });
  }

  async send(data: Uint8Array, timeoutMillis: number): Promise<ExportResponse> {
    const headers: Record<string, string> = { ...(await this.#options.headers()) };
    // The user's own User-Agent (OTEL_EXPORTER_OTLP_HEADERS) is kept; two would both be sent.
    if (!Object.keys(headers).some((k) => k.toLowerCase() === 'user-agent')) headers['user-agent'] = this.#options.userAgent;
    let body = data;
    if (this.#options.compression === 'gzip') {
      body = await gzipped(data);
      headers['content-encoding'] = 'gzip';
    }
    return new Promise((resolve) => {
      const handler = new ExportHandler(resolve, timeoutMillis);
      try {
        this.#pool.dispatch(
          // The export's own timer bounds the whole exchange, so undici's are off.
          { method: 'POST', path: this.#url.pathname + this.#url.search, headers, body, headersTimeout: 0, bodyTimeout: 0 },
          handler,
        );
      } catch (err) {
        handler.failed(err as Error);
      }
    });
  }

  shutdown(): void {
    // In-flight exports may finish; nothing new is sent (the processor has flushed before it shuts its exporter).
    void this.#pool.close();
  }
}

/** One export's answer, read into memory; settles once, on the answer, an error or the timeout. */
class ExportHandler implements Dispatcher.DispatchHandler {
  readonly #resolve: (r: ExportResponse) => void;
  readonly #timer: NodeJS.Timeout;
  #controller: Dispatcher.DispatchController | undefined;
  #settled = false;
  #status = 0;
  #statusMessage = '';
  #retryAfter: string | undefined;
  #chunks: Buffer[] = [];
  #bytes = 0;

  constructor(resolve: (r: ExportResponse) => void, timeoutMillis: number) {
    this.#resolve = resolve;
    this.#timer = setTimeout(() => this.#stop({ status: 'retryable', error: new Error('Request timed out') }), timeoutMillis);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#settled) return controller.abort(new Error('Request timed out'));
    this.#controller = controller;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage: string,
  ): void {
    if (statusCode < 200) return;
    this.#status = statusCode;
    this.#statusMessage = statusMessage;
    const retryAfter = headers['retry-after'];
    this.#retryAfter = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#bytes += chunk.length;
    if (this.#bytes > MAX_ANSWER_BYTES) {
      this.#stop({ status: 'failure', error: new Error(`OTLP export response body exceeded size limit of ${MAX_ANSWER_BYTES} bytes`) });
      return;
    }
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.#settle(answerOf(this.#status, this.#statusMessage, this.#retryAfter, Buffer.concat(this.#chunks)));
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.failed(err);
  }

  failed(err: Error): void {
    const code = errorCode(err);
    this.#settle(code !== undefined && RETRYABLE_CODES.has(code) ? { status: 'retryable', error: err } : { status: 'failure', error: err });
  }

  /** Settles with an error, and aborts the request with it if it has started (else onRequestStart drops it). */
  #stop(r: ExportResponse & { error: Error }): void {
    if (this.#settled) return;
    this.#settle(r);
    this.#controller?.abort(r.error);
  }

  #settle(r: ExportResponse): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#chunks = [];
    this.#resolve(r);
  }
}

/** The collector's answer → the exporter's outcome, as the SDK's transport decides it. Pure. */
function answerOf(status: number, statusMessage: string, retryAfter: string | undefined, body: Buffer): ExportResponse {
  if (status <= 299) return { status: 'success', data: body };
  if (status === 429 || status === 502 || status === 503 || status === 504) return { status: 'retryable', retryInMillis: retryAfterMillis(retryAfter) };
  return { status: 'failure', error: new OTLPExporterError(statusMessage, status, body.toString()) };
}

/** Retry-After as seconds or an HTTP date → milliseconds; undefined leaves the delay to the backoff. */
export function retryAfterMillis(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number.parseInt(value, 10);
  if (Number.isInteger(seconds)) return seconds > 0 ? seconds * 1000 : 0;
  const at = new Date(value).getTime();
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
