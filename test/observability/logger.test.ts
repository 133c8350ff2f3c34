// The default log destination writes asynchronously yet loses nothing: lines written just before a normal exit are
// flushed, and a quiet process gets its lines out at once. The access log's writer keeps pino's line format.
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger, infoLineWriter } from '../../src/observability/logger.js';

const LOGGER = new URL('../../src/observability/logger.ts', import.meta.url).pathname;

/** Runs a script that logs through createLogger() to stdout; collects stdout with arrival times. */
function run(body: string): Promise<{ lines: { at: number; text: string }[]; exitAt: number }> {
  const script = `import { createLogger } from ${JSON.stringify(LOGGER)};\nconst log = createLogger();\n${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const t0 = Date.now();
  const lines: { at: number; text: string }[] = [];
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push({ at: Date.now() - t0, text: buf.slice(0, i) });
      buf = buf.slice(i + 1);
    }
  });
  return new Promise((resolve) => child.on('close', () => resolve({ lines, exitAt: Date.now() - t0 })));
}

describe('createLogger default destination', () => {
  it('flushes every buffered line when the process exits', async () => {
    const { lines } = await run(`for (let i = 0; i < 50; i++) log.info({ i }, 'line');`);
    expect(lines.map((l) => JSON.parse(l.text).i)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('writes the access lines still batched when the process exits at once', async () => {
    const { lines } = await run(
      `import { infoLineWriter } from ${JSON.stringify(LOGGER)};\nconst line = infoLineWriter(log, 'request');\nfor (let i = 0; i < 20; i++) line({ i });\nprocess.exit(0);`,
    );
    expect(lines.map((l) => JSON.parse(l.text).i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('writes the access lines still batched when the process ends on its own', async () => {
    const { lines } = await run(
      `import { infoLineWriter } from ${JSON.stringify(LOGGER)};\nconst line = infoLineWriter(log, 'request');\nfor (let i = 0; i < 20; i++) line({ i });`,
    );
    expect(lines.map((l) => JSON.parse(l.text).i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('writes a lone line within about a second, while the process keeps running', async () => {
    const { lines, exitAt } = await run(`log.info('lonely'); setTimeout(() => {}, 2500);`);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!.text).msg).toBe('lonely');
    // Out before the process ended (periodic flush), not only at exit.
    expect(lines[0]!.at).toBeLessThan(exitAt - 500);
  });
});

describe('infoLineWriter', () => {
  // The writer batches the lines of 10 ms: its timer runs on a faked clock here.
  beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
  afterEach(() => void vi.useRealTimers());
  const batchDue = () => vi.advanceTimersByTime(10);

  /** A logger writing into an array, as pino is configured by createLogger. */
  function capture(level = 'info') {
    const lines: string[] = [];
    const logger = createLogger({ level, destination: { write: (s: string) => void lines.push(s) } as unknown as NodeJS.WritableStream });
    return { logger, lines };
  }

  it('writes the line pino itself would write: same keys in the same order, same values, undefined left out', async () => {
    const fields = { reqId: 'r-1', status: 200, durationMs: 1.25, model: 'gpt "quoted"\n', aborted: undefined, ratio: Number.NaN, estimated: false };
    const viaPino = capture();
    viaPino.logger.child({ worker: 2 }).info(fields, 'request');
    const direct = capture();
    infoLineWriter(direct.logger.child({ worker: 2 }), 'request')(fields);
    batchDue();
    expect(direct.lines).toHaveLength(1);
    expect(direct.lines[0]!.endsWith('}\n')).toBe(true);
    const [a, b] = [JSON.parse(viaPino.lines[0]!), JSON.parse(direct.lines[0]!)];
    expect(typeof b.time).toBe('number');
    expect(Object.keys(b)).toEqual(Object.keys(a));
    expect({ ...b, time: 0 }).toEqual({ ...a, time: 0 });
  });

  it('writes nothing when info is off, and a valid line for an empty record', async () => {
    const quiet = capture('warn');
    infoLineWriter(quiet.logger, 'request')({ reqId: 'r-2' });
    const loud = capture();
    infoLineWriter(loud.logger, 'm')({});
    batchDue();
    expect(quiet.lines).toEqual([]);
    expect(JSON.parse(loud.lines[0]!)).toMatchObject({ level: 30, service: 'model-gateway', msg: 'm' });
  });

  it('hands the lines of 10 ms to the destination as one write, in order', () => {
    const { logger, lines } = capture();
    const line = infoLineWriter(logger, 'request');
    line({ reqId: 'a' });
    vi.advanceTimersByTime(9);
    line({ reqId: 'b' });
    expect(lines).toEqual([]);
    vi.advanceTimersByTime(1);
    line({ reqId: 'c' });
    expect(lines).toHaveLength(1);
    batchDue();
    expect(lines.map(ids)).toEqual([['a', 'b'], ['c']]);
  });

  it('writes at once when the text waiting passes 64 KiB, without waiting for the timer', () => {
    const { logger, lines } = capture();
    const line = infoLineWriter(logger, 'request');
    const pad = 'x'.repeat(1000);
    for (let i = 0; i < 70; i++) line({ reqId: String(i), pad });
    expect(lines).toHaveLength(1);
    // About 1 KB a line: the first write is the line that passed 64 KiB and those before it.
    expect(lines[0]!.length).toBeGreaterThan(64 * 1024);
    expect(lines[0]!.lastIndexOf('{"level"')).toBeLessThanOrEqual(64 * 1024);
    expect(ids(lines[0]!).length).toBeLessThan(70);
    batchDue();
    expect(lines.flatMap(ids)).toEqual(Array.from({ length: 70 }, (_, i) => String(i)));
  });
});

/** The reqIds of one write's lines. */
function ids(write: string): string[] {
  return write
    .trimEnd()
    .split('\n')
    .map((t) => JSON.parse(t).reqId);
}
