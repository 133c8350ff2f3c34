// Runs the real `model-gateway` executable for CLI tests: the build that test/support/build-cli.ts made for this run
// (`node dist/cli.js`, as the container image runs it, without its --expose-gc).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The built CLI's entry point (a run of vitest builds it once; see vitest.config.ts). */
export function cliEntry(): string {
  return inject('cliEntry');
}

export interface CliRun {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (signal exits are reported as 128 + signal number, like a shell). */
  readonly exited: Promise<number>;
  /** Resolves with the first stdout JSON log record for which `match` is true. */
  waitForLog(match: (r: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** `exited`, failing after `timeoutMs` with the child's last lines (a wait that names what hung, not a test timeout). */
  waitForExit(timeoutMs?: number): Promise<number>;
}

/** How many of the child's last lines a failed wait shows: the steps before the hang, not the whole run. */
const TAIL_LINES = 30;
const tail = (text: string) => text.trimEnd().split('\n').slice(-TAIL_LINES).join('\n');

function parseRecord(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{') || !line.endsWith('}')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

export function runCli(args: string[], env: Record<string, string | undefined> = {}): CliRun {
  const child = spawn(process.execPath, [cliEntry(), ...args], {
    cwd: REPO_ROOT,
    // A clean environment: only what the test gives, so the developer's MG_* variables cannot leak in.
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters: Array<{ match: (r: Record<string, unknown>) => boolean; resolve: (r: Record<string, unknown>) => void }> = [];
  child.stdout!.on('data', (d: Buffer) => {
    const before = out.length;
    out += d.toString();
    const fresh = out.slice(out.lastIndexOf('\n', before) + 1);
    for (const line of fresh.split('\n')) {
      const record = parseRecord(line);
      if (!record) continue;
      for (const w of [...waiters]) {
        if (w.match(record)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(record);
        }
      }
    }
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 1)));
  });
  const lastLines = () => `last stdout lines:\n${tail(out)}\nlast stderr lines:\n${tail(err)}`;
  const waitForLog = (match: (r: Record<string, unknown>) => boolean, timeoutMs = 15_000) => {
    const existing = out
      .split('\n')
      .map(parseRecord)
      .find((r) => r !== undefined && match(r));
    if (existing) return Promise.resolve(existing);
    // The matcher's source names what was awaited (`(l) => l.msg === '…'`).
    const what = `a log record matching ${String(match)}`;
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${timeoutMs} ms; ${lastLines()}`)), timeoutMs);
      waiters.push({ match, resolve: (r) => (clearTimeout(timer), resolve(r)) });
      void exited.then((code) => setTimeout(() => reject(new Error(`exited (${code}) before ${what}; ${lastLines()}`)), 50));
    });
  };
  const waitForExit = (timeoutMs = 15_000) =>
    new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the process did not exit within ${timeoutMs} ms; ${lastLines()}`)), timeoutMs);
      void exited.then((code) => (clearTimeout(timer), resolve(code)));
    });
  return { child, stdout: () => out, stderr: () => err, exited, waitForLog, waitForExit };
}
