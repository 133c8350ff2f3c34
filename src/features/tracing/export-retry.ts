// Retries of an OTLP export, as the SDK's OTLP exporters retry (its retrying transport is not part of its public
// API, so the gateway's own transport, otlp-transport.ts, needs this): a retryable answer is sent again up to five
// times, after the collector's retry-after or else an exponential backoff (1 s, then × 1.5 each time, at most 5 s,
// ± 20 % jitter so that replicas that lost the collector together do not return in step), and never past the
// export's timeout: a retry that would start after it is not made, and the last answer stands.
import type { ExportResponse, IExporterTransport } from '@opentelemetry/otlp-exporter-base';

const RETRIES = 5;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 5000;
const BACKOFF_FACTOR = 1.5;
const JITTER = 0.2;

export interface RetryClock {
  now(): number;
  /** Resolves after ms. */
  wait(ms: number): Promise<void>;
  /** [0, 1). */
  random(): number;
}

const realClock: RetryClock = {
  now: Date.now,
  wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

export function retrying(transport: IExporterTransport, clock: RetryClock = realClock): IExporterTransport {
  return {
    async send(data: Uint8Array, timeoutMillis: number): Promise<ExportResponse> {
      const deadline = clock.now() + timeoutMillis;
      let backoff = FIRST_BACKOFF_MS;
      let result = await transport.send(data, timeoutMillis);
      for (let retry = 0; retry < RETRIES && result.status === 'retryable'; retry++) {
        const jittered = Math.min(backoff * (1 + JITTER * (2 * clock.random() - 1)), MAX_BACKOFF_MS);
        backoff *= BACKOFF_FACTOR;
        const delay = result.retryInMillis ?? jittered;
        const remaining = deadline - clock.now();
        if (delay > remaining) break;
        await clock.wait(delay);
        result = await transport.send(data, deadline - clock.now());
      }
      return result;
    },
    shutdown: () => transport.shutdown(),
  };
}
