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
      if (!line.startsWith('{') || !line.endsWith('}')) continue;
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
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
  const waitForLog = (match: (r: Record<string, unknown>) => boolean, timeoutMs = 15_000) => {
    const existing = out
      .split('\n')
      .filter((l) => l.startsWith('{') && l.endsWith('}'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find(match);
    if (existing) return Promise.resolve(existing);
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`log record not seen in ${timeoutMs} ms; stdout:\n${out}\nstderr:\n${err}`)), timeoutMs);
      waiters.push({ match, resolve: (r) => (clearTimeout(timer), resolve(r)) });
      void exited.then(() => setTimeout(() => reject(new Error(`exited before the log record; stdout:\n${out}\nstderr:\n${err}`)), 50));
    });
  };
  return { child, stdout: () => out, stderr: () => err, exited, waitForLog };
}
