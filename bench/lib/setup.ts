// What a run needs before it starts: wrk and nginx (Debian; installed when missing and we are root with apt),
// the gateway's production build, and a description of the machine for the report.
import { execSync, spawnSync } from 'node:child_process';
import { cpus, freemem, loadavg, release, totalmem } from 'node:os';
import { CPU_LOADGEN, CPU_TARGET, HAS_TASKSET } from './procs.js';

function has(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd} || test -x /usr/sbin/${cmd}`]).status === 0;
}

/** Installs wrk and nginx with apt-get when they are missing; returns what is still missing afterwards. */
export function ensureTools(install: boolean, log: (s: string) => void): string[] {
  const missing = ['wrk', 'nginx'].filter((c) => !has(c));
  if (missing.length === 0) return [];
  const root = process.getuid?.() === 0;
  if (!install || !root || !has('apt-get')) {
    log(`not installing ${missing.join(', ')} (${!install ? '--no-install' : !root ? 'not root' : 'no apt-get'}): optional targets are skipped`);
    return missing;
  }
  log(`installing ${missing.join(' ')} with apt-get …`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const ok =
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env }).status === 0 &&
    spawnSync('apt-get', ['install', '-y', '-qq', ...missing], { stdio: ['ignore', 'ignore', 'inherit'], env }).status === 0;
  if (!ok) log('apt-get failed: continuing without them');
  return missing.filter((c) => !has(c));
}

export function build(root: string, log: (s: string) => void): void {
  log('building the gateway (npm run build) …');
  const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build failed');
}

function version(cmd: string): string | undefined {
  const r = spawnSync('sh', ['-c', cmd]);
  const out = `${r.stdout?.toString() ?? ''}${r.stderr?.toString() ?? ''}`.trim().split('\n')[0];
  return r.status === 0 && out ? out : undefined;
}

export interface MachineInfo {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  freeMemoryGiB: number;
  kernel: string;
  node: string;
  wrk?: string;
  nginx?: string;
  gitCommit?: string;
  loadAverageAtStart: number[];
  pinning: string;
}

export function machineInfo(root: string): MachineInfo {
  let gitCommit: string | undefined;
  try {
    gitCommit = execSync('git rev-parse --short HEAD', { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    gitCommit = undefined;
  }
  return {
    nproc: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeMemoryGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    node: process.version,
    wrk: version('wrk --version 2>&1 | head -1'),
    nginx: version('nginx -v 2>&1 || /usr/sbin/nginx -v 2>&1'),
    gitCommit,
    loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
    pinning: HAS_TASKSET
      ? `taskset: load generator and fake upstream on CPU ${CPU_LOADGEN}; each target (bare, gateway, nginx) alone on CPU ${CPU_TARGET}; multi-worker gateway unpinned`
      : 'no taskset: processes unpinned',
  };
}
