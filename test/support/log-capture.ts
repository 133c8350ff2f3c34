// A pino logger that keeps its JSON lines in memory, so tests can assert what was logged (and what was not).
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/observability/logger.js';

export interface LogCapture {
  readonly logger: Logger;
  /** Parsed log records so far. */
  readonly records: Array<Record<string, unknown>>;
  /** Raw text of everything logged (to check that no secret appears anywhere). */
  text(): string;
}

export function captureLogs(level = 'debug'): LogCapture {
  const lines: string[] = [];
  const records: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        lines.push(line);
        records.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { logger: createLogger({ level, destination }), records, text: () => lines.join('\n') };
}
