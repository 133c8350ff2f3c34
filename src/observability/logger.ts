// pino JSON logs. Anything that could carry a key is redacted by path, and code never logs raw headers.
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'authorization',
  '*.authorization',
  'req.headers.authorization',
  'headers.authorization',
  'apiKey',
  '*.apiKey',
  'key',
  '*.key',
  'token',
  '*.token',
  'data',
  '*.data',
  'stringData',
  '*.stringData',
];

/**
 * Log lines are gathered up to this many bytes before one write (a write per line was ~10% of the gateway's CPU
 * under load, in the benchmark's profile), and whatever is gathered goes out at least every LOG_FLUSH_MS and
 * when the process exits.
 */
export const LOG_BUFFER_BYTES = 4096;
export const LOG_FLUSH_MS = 1000;

export interface LoggerOptions {
  level?: string;
  /** Where to write; defaults to stdout (asynchronously and batched, off the hot path). */
  destination?: NodeJS.WritableStream | pino.DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'model-gateway' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    options.destination ?? pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS }),
  );
}
