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
   * flight into the next one, so under load writes are already batched; a minimum batch size did no better).
   */
  destination?: NodeJS.WritableStream | pino.DestinationStream;
}

/**
 * Writes info lines of one message in pino's own format (`{"level":30,"time":…,<bindings>,…fields,"msg":…}`) to
 * the logger's destination, serialized by one JSON.stringify. For the access log's line per request: pino joins a
 * line key by key through intermediate strings, which cost more per line than one stringify. Only for flat records
 * of scalars chosen by code: no serializers, no redaction.
 */
export function infoLineWriter(logger: Logger, msg: string): (fields: Record<string, unknown>) => void {
  const destination = (logger as unknown as Record<symbol, { write(line: string): unknown }>)[pino.symbols.streamSym]!;
  const bindings = JSON.stringify(logger.bindings()).slice(1, -1);
  const head = `{"level":${logger.levels.values['info']},"time":`;
  const afterTime = bindings ? `,${bindings},` : ',';
  const tail = `"msg":${JSON.stringify(msg)}}\n`;
  // The lines of FLUSH_MS go to the destination as one write (sooner past FLUSH_CHARS). Each write is a hop to
  // libuv's thread pool and back; one per turn of the event loop cost a chat request measurably more CPU under load
  // (bench/results/2026-11-27-evening-ab.md).
  // sonic-boom also measures the whole text waiting for the write in flight on every write, copying it flat: per
  // batch that is one copy, not one per line.
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    const batch = pending;
    pending = '';
    clearTimeout(timer);
    timer = undefined;
    unflushed.delete(flush);
    if (batch) destination.write(batch);
  };
  return (fields) => {
    if (!logger.isLevelEnabled('info')) return;
    const json = JSON.stringify(fields);
    if (!pending) {
      // Not unref'd: pino ends its destination at 'beforeExit', so a process ending on its own must write first.
      timer = setTimeout(flush, FLUSH_MS);
      holdUntilExit(flush);
    }
    pending += head + Date.now() + afterTime + (json.length > 2 ? `${json.slice(1, -1)},` : '') + tail;
    if (pending.length > FLUSH_CHARS) flush();
  };
}

/** How long an access line may wait for others to share its write, and how much text may wait. */
const FLUSH_MS = 10;
const FLUSH_CHARS = 64 * 1024;

/** Batches not yet handed to their destination; a process.exit() skips the timers that would. */
const unflushed = new Set<() => void>();
let exitHooked = false;

function holdUntilExit(flush: () => void): void {
  unflushed.add(flush);
  if (exitHooked) return;
  exitHooked = true;
  // Before pino's own exit hook, which flushes its destinations synchronously.
  process.prependListener('exit', () => {
    for (const f of unflushed) f();
  });
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
