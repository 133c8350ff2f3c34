// The API server's processes: start.sh and stop.sh of ../shared/envtest (or $MG_ENVTEST_DIR), without vitest, so
// that the run's global setup can stop the servers the test files shared.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const envtestDir = process.env.MG_ENVTEST_DIR ?? resolve(repoRoot, '../shared/envtest');

export interface EnvtestEnv {
  KUBECONFIG: string;
  ENVTEST_DIR: string;
  KUBE_APISERVER_URL: string;
  ENVTEST_ADMIN_TOKEN: string;
}

/** Starts an API server and etcd in `dir` (new or empty; default a new temporary one) and returns its env. */
export function startServer(dir: string | undefined, audit: boolean): EnvtestEnv {
  const r = spawnSync('bash', [join(envtestDir, 'start.sh'), ...(dir ? [dir] : [])], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
    env: { ...process.env, ENVTEST_AUDIT: audit ? '1' : '0' },
  });
  if (r.status !== 0) throw new Error(`envtest start.sh failed (${r.status ?? r.signal}): ${r.stderr}`);
  return readEnv(r.stdout);
}

/** Stops the servers of `dir` and removes it. */
export function stopServer(dir: string): void {
  spawnSync('bash', [join(envtestDir, 'stop.sh'), dir], { stdio: 'ignore', timeout: 60_000 });
  rmSync(dir, { recursive: true, force: true }); // a directory start.sh never got to mark as its own
}

/** The KEY=value lines start.sh prints (and writes to DIR/env). */
export function readEnv(text: string): EnvtestEnv {
  return Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  ) as unknown as EnvtestEnv;
}

/** Stops every server sharedEnvtest started under `runDir` (in runDir/servers) and removes the directory. */
export function stopServersUnder(runDir: string): void {
  const servers = join(runDir, 'servers');
  if (existsSync(servers)) for (const name of readdirSync(servers)) stopServer(join(servers, name));
  rmSync(runDir, { recursive: true, force: true });
}
