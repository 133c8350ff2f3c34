// Child processes of the benchmark: spawn pinned to a CPU (taskset), wait until they listen, read their CPU time
// and RSS from /proc (summed over the process tree: nginx and node:cluster have workers), stop them.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { openSync, readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export const HAS_TASKSET = spawnSync('taskset', ['--version']).status === 0;
const CPUS = readdirSync('/sys/devices/system/cpu').filter((d) => /^cpu\d+$/.test(d)).length;

/** CPU pinning plan: the load generator and the fake upstream on CPU 0, the target under test alone on CPU 1. */
export const CPU_LOADGEN = '0';
export const CPU_TARGET = CPUS > 1 ? '1' : '0';
/** Every CPU (the runner itself is pinned to CPU 0, and children inherit that unless told otherwise). */
export const CPU_ALL = `0-${CPUS - 1}`;

/** Prefix a command with `taskset -c CPU` when taskset exists and a cpu is given. */
export function pinned(cpu: string | undefined, cmd: string, args: string[]): [string, string[]] {
  return HAS_TASKSET && cpu !== undefined ? ['taskset', ['-c', cpu, cmd, ...args]] : [cmd, args];
}

export interface Started {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  cmd: string;
  args: string[];
  cpu?: string;
  env?: NodeJS.ProcessEnv;
  /** Where stdout goes; default: parsed for `LISTENING <port>`. */
  stdoutFile?: string;
  stderrFile?: string;
  /** When the port is known up front (nginx, the gateway): poll this URL until it answers `readyStatus`. */
  port?: number;
  readyUrl?: string;
  timeoutMs?: number;
}

export async function start(o: StartOptions): Promise<Started> {
  const [cmd, args] = pinned(o.cpu, o.cmd, o.args);
  const stdio: SpawnOptions['stdio'] = ['ignore', o.stdoutFile ? openSync(o.stdoutFile, 'a') : 'pipe', o.stderrFile ? openSync(o.stderrFile, 'a') : 'pipe'];
  const child = spawn(cmd, args, { stdio, env: { ...process.env, ...o.env } });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, sig) => reject(new Error(`${o.name} exited (${code ?? sig}) before it was ready\n${stderr}`))),
  );
  exited.catch(() => {});
  const timeoutMs = o.timeoutMs ?? 60_000;
  const ready = o.port !== undefined ? waitHttp(o.readyUrl ?? `http://127.0.0.1:${o.port}/`, timeoutMs).then(() => o.port!) : waitListening(child, timeoutMs);
  let port: number;
  try {
    port = await Promise.race([ready, exited]);
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(t);
  };
  return { name: o.name, child, pid: child.pid!, port, stop };
}

function waitListening(child: ChildProcess, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const t = setTimeout(() => reject(new Error('no LISTENING line in time')), timeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /LISTENING (\d+)/.exec(buf);
      if (m) {
        clearTimeout(t);
        resolve(Number(m[1]));
      }
    });
  });
}

async function waitHttp(url: string, timeoutMs: number, want = 200): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await r.arrayBuffer();
      if (r.status === want) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error(`${url} did not answer ${want} within ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** All pids in the tree rooted at `root` (the root included). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const st = readStat(Number(d));
    if (!st) continue;
    const list = children.get(st.ppid) ?? [];
    list.push(Number(d));
    children.set(st.ppid, list);
  }
  const out: number[] = [];
  const todo = [root];
  while (todo.length) {
    const p = todo.pop()!;
    out.push(p);
    todo.push(...(children.get(p) ?? []));
  }
  return out;
}

function readStat(pid: number): { ppid: number; ticks: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the ")" of the command name: state ppid ... utime(14) stime(15).
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return undefined;
  }
}

const TICKS_PER_SECOND = 100;

/** User + system CPU seconds used so far by the tree under `root`. */
export function cpuSeconds(root: number): number {
  let ticks = 0;
  for (const p of processTree(root)) ticks += readStat(p)?.ticks ?? 0;
  return ticks / TICKS_PER_SECOND;
}

/** Resident set size of the tree under `root`, in bytes. */
export function rssBytes(root: number): number {
  let kb = 0;
  for (const p of processTree(root)) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) kb += Number(m[1]);
    } catch {
      // exited meanwhile
    }
  }
  return kb * 1024;
}

/** Run a command to completion, capturing stdout; rejects on a non-zero exit. */
export function run(cmd: string, args: string[], opts: { cpu?: string; timeoutMs?: number; input?: string } = {}): Promise<string> {
  const [c, a] = pinned(opts.cpu, cmd, args);
  return new Promise((resolve, reject) => {
    const child = spawn(c, a, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    const t = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('exit', (code) => {
      clearTimeout(t);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${a.join(' ')} exited ${code}: ${err || out.slice(-2000)}`));
    });
    child.stdin.end(opts.input ?? '');
  });
}
