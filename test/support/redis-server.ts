// A real redis-server (Debian's package; .ci/run installs it) on a free loopback port with a temp dir, for the
// limits tests: started, killed and restarted on the same port by the test.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** SIGKILL: gone at once, connections reset. */
  kill(): Promise<void>;
  /** Starts again on the same port (empty: no persistence). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: connected but silent (a slow Redis). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const c = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = c;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      c.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) resolve();
      });
      c.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
    });
  };
  const kill = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = once(c, 'exit');
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    restart: start,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    async stop() {
      child?.kill('SIGCONT');
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
