// Runs a coding agent's executable to its end: stdin closed (an agent waiting on it would hang), its own process
// group so a timeout or killAgents() ends whatever it spawned too, and a clean environment of only what is given.
import { spawn, type ChildProcess } from 'node:child_process';

export interface AgentRun {
  /** Exit code; 128 + 9 when killed at the timeout. */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly ms: number;
}

const running = new Set<ChildProcess>();

const killGroup = (child: ChildProcess) => {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
};

export function runAgent(command: string, args: string[], options: { cwd: string; env: Record<string, string>; timeoutMs: number }): Promise<AgentRun> {
  const started = Date.now();
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, options.timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code: code ?? 128 + (signal === 'SIGKILL' ? 9 : 15), stdout, stderr, timedOut, ms: Date.now() - started });
    });
  });
}

/** Kills every agent still running (for afterAll, when a test gave up before its agent ended). */
export function killAgents(): void {
  for (const child of running) killGroup(child);
}
