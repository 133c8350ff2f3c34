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

export interface LoggerOptions {
  level?: string;
  /**
   * Where to write; defaults to stdout, asynchronously (sonic-boom gathers the lines logged while a write is in
   * flight into the next one, so under load writes are already batched; a minimum batch size measured no better).
   */
  destination?: NodeJS.WritableStream | pino.DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'model-gateway' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
