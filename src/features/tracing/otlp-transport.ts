// The OTLP exporter's HTTP transport on undici, given to the SDK's export delegate (createOtlpNetworkExportDelegate:
// its serializer and bounded queue stay the SDK's). The SDK's own node:http transport pipes a stream into node's
// http client for every export, which made node's stream code take generic property loads for every request of the
// process. Its retry wrapper is not exported, so undici's RetryAgent retries with the SDK's policy: 429/502/503/504
// and network errors, up to 5 retries, backoff from 1 s by 1.5 to 5 s, Retry-After honoured, within the timeout.
import { STATUS_CODES } from 'node:http';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { type ExportResponse, type IExporterTransport, OTLPExporterError } from '@opentelemetry/otlp-exporter-base';
import { Agent, errors, RetryAgent } from 'undici';

const gzip = promisify(gzipCallback);

/** The collector's answer is read up to this many bytes (the SDK's limit): a partial-success report, no more. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

export interface TransportOptions {
  readonly url: string;
  /** The SDK's merged headers: Content-Type, OTEL_EXPORTER_OTLP_HEADERS. */
  readonly headers: () => Promise<Record<string, string>>;
  readonly compression: 'gzip' | 'none';
  readonly userAgent: string;
  /** The collector's CA, the client certificate and key (https only). */
  readonly tls: { readonly ca?: Buffer; readonly cert?: Buffer; readonly key?: Buffer };
}

export function undiciTransport(options: TransportOptions): IExporterTransport {
  const url = new URL(options.url);
  const agent = new Agent(url.protocol === 'https:' ? { connect: { ...options.tls } } : {});
  const retrying = new RetryAgent(agent, {
    maxRetries: 5,
    minTimeout: 1000,
    maxTimeout: 5000,
    timeoutFactor: 1.5,
    methods: ['POST'],
    statusCodes: [429, 502, 503, 504],
  });
  return {
    async send(data: Uint8Array, timeoutMillis: number): Promise<ExportResponse> {
      const headers: Record<string, string> = { ...(await options.headers()), 'user-agent': options.userAgent };
      let body = data;
      if (options.compression === 'gzip') {
        body = await gzip(data);
        headers['content-encoding'] = 'gzip';
      }
      const signal = AbortSignal.timeout(timeoutMillis);
      try {
        const res = await withinSignal(
          retrying.request({ origin: url.origin, path: url.pathname + url.search, method: 'POST', headers, body, signal }),
          signal,
        );
        const answer = await readCapped(res.body);
        if (res.statusCode <= 299) return { status: 'success', data: answer };
        // As the SDK's transport reports it: `Bad Request (400)` in the export report.
        return { status: 'failure', error: new OTLPExporterError(STATUS_CODES[res.statusCode], res.statusCode, Buffer.from(answer).toString()) };
      } catch (err) {
        // After the retries: a status the collector kept answering, a network error, or the timeout.
        if (err instanceof errors.RequestRetryError) return { status: 'retryable', error: new OTLPExporterError(STATUS_CODES[err.statusCode], err.statusCode) };
        return { status: 'retryable', error: err as Error };
      }
    },
    shutdown(): void {
      void retrying.close();
    },
  };
}

/**
 * The request, or the signal's reason once it aborts. undici's RetryAgent checks the signal only while a request is
 * on the wire, not while it waits to retry: a collector refusing connections held each export for the whole backoff
 * (1 + 1.5 + … ≈ 13 s) whatever OTEL_EXPORTER_OTLP_TIMEOUT said. A retry it starts after that fails on the signal.
 */
function withinSignal<T extends { body: { destroy(): void } }>(request: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason);
      // Its answer, should one still come, is not read.
      request.then(
        (res) => res.body.destroy(),
        () => undefined,
      );
    };
    signal.addEventListener('abort', onAbort, { once: true });
    request.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, reject);
  });
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy();
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
