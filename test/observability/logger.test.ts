// The default log destination batches lines (one write per few KB, not per line) yet loses nothing: lines
// written just before a normal exit are flushed, and a quiet process still gets its lines out within a second.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

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

  it('writes a lone line within about a second, while the process keeps running', async () => {
    const { lines, exitAt } = await run(`log.info('lonely'); setTimeout(() => {}, 2500);`);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!.text).msg).toBe('lonely');
    // Out before the process ended (periodic flush), not only at exit.
    expect(lines[0]!.at).toBeLessThan(exitAt - 500);
  });
});
