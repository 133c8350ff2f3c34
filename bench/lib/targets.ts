// The systems under test, each started in its own process on the target CPU (the fake upstream on the load
// generator's CPU): the upstream itself (direct), the bare express + undici proxy, the gateway's production
// build, and nginx as a plain reverse proxy when it is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { freePort } from '../../test/support/free-port.js';
import { join } from 'node:path';
import { CPU_ALL, CPU_LOADGEN, CPU_TARGET, start, type Started } from './procs.js';

export const ROOT = new URL('../..', import.meta.url).pathname;
const TSX = ['--import', 'tsx'];

export interface Target {
  readonly name: string;
  /** Base URL the load goes to (no trailing slash). */
  readonly url: string;
  /** Root pid of the process tree whose CPU and RSS are measured. */
  readonly pid: number;
  /** Where a request log is written, when the target logs (proof that logging was on). */
  readonly logFile?: string;
  /** Metrics endpoint, when the target has one. */
  readonly metricsUrl?: string;
  readonly proc: Started;
}

export async function startUpstream(dir: string): Promise<Started> {
  return start({
    name: 'fake-upstream',
    cmd: process.execPath,
    args: [...TSX, join(ROOT, 'bench/fake-upstream.ts')],
    cpu: CPU_LOADGEN,
    stderrFile: join(dir, 'upstream.err'),
  });
}

export function directTarget(upstream: Started): Target {
  return { name: 'direct', url: `http://127.0.0.1:${upstream.port}`, pid: upstream.pid, proc: upstream };
}

export async function startBare(upstreamPort: number, dir: string, nodeArgs: string[] = []): Promise<Target> {
  const proc = await start({
    name: 'bare',
    cmd: process.execPath,
    args: [...nodeArgs, ...TSX, join(ROOT, 'bench/bare-proxy.ts'), '--upstream', `http://127.0.0.1:${upstreamPort}`],
    cpu: CPU_TARGET,
    stderrFile: join(dir, 'bare.err'),
  });
  return { name: 'bare', url: `http://127.0.0.1:${proc.port}`, pid: proc.pid, proc };
}

/**
 * Node flags the gateway runs with in production: the container image's entry point (Dockerfile) and the
 * `model-gateway` bin's shebang (test/chart/dockerfile.test.ts checks both). --expose-gc lets the gateway release
 * the memory of config compiles and traffic bursts (src/runtime/memory-release.ts); V8's young generation keeps its
 * default size (docs/performance.md).
 */
export const GATEWAY_NODE_FLAGS = ['--expose-gc'];

/** Environment the container image sets for the gateway besides NODE_ENV (Dockerfile `ENV`): glibc's malloc arenas and mmap threshold. */
export const GATEWAY_IMAGE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '65536' };

export interface GatewayOptions {
  configDir: string;
  dir: string;
  workers?: number;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeArgs?: string[];
  name?: string;
  /** Extra environment, e.g. MG_REDIS_URL, or OTEL_* for a traced variant. */
  env?: Record<string, string>;
}

/** The production build (`node dist/cli.js serve`) with the file source, auth, routing, metrics and info logs. */
export async function startGateway(o: GatewayOptions): Promise<Target> {
  const name = o.name ?? 'gateway';
  const [port, metricsPort] = [await freePort(), await freePort()];
  const logFile = join(o.dir, `${name}.log`);
  const proc = await start({
    name,
    cmd: process.execPath,
    // A node argument naming a cli.js (e.g. a copy of an older build, for A/B runs) replaces this build's.
    args: [...(o.nodeArgs ?? []).filter((a) => !a.endsWith('cli.js')), o.nodeArgs?.find((a) => a.endsWith('cli.js')) ?? join(ROOT, 'dist/cli.js'), 'serve'],
    // Several workers share both CPUs; one process stays on the target CPU like the other targets.
    cpu: (o.workers ?? 1) > 1 ? CPU_ALL : CPU_TARGET,
    env: {
      MG_SOURCE: 'file',
      MG_CONFIG_DIR: o.configDir,
      MG_HOST: '127.0.0.1',
      MG_PORT: String(port),
      MG_METRICS_PORT: String(metricsPort),
      MG_LOG_LEVEL: 'info',
      MG_LEADER_ELECTION: 'false',
      MG_WORKERS: String(o.workers ?? 1),
      NODE_ENV: 'production',
      ...GATEWAY_IMAGE_ENV,
      ...o.env,
    },
    // pino writes JSON lines asynchronously to stdout; stdout is this file.
    stdoutFile: logFile,
    stderrFile: join(o.dir, `${name}.err`),
    port,
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    timeoutMs: 120_000,
  });
  return { name, url: `http://127.0.0.1:${port}`, pid: proc.pid, logFile, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, proc };
}

export function nginxBinary(): string | undefined {
  for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx']) if (existsSync(p)) return p;
  const r = spawnSync('sh', ['-c', 'command -v nginx']);
  const out = r.stdout?.toString().trim();
  return out ? out : undefined;
}

/** nginx, one worker, upstream keep-alive, no buffering (so streams and uploads pass through as with the proxies). */
export async function startNginx(bin: string, upstreamPort: number, dir: string): Promise<Target> {
  const port = await freePort();
  const prefix = join(dir, 'nginx');
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  const conf = join(prefix, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 8192; }
http {
  access_log ${prefix}/logs/access.log combined buffer=64k flush=1s;
  client_body_temp_path ${prefix}/client_body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  upstream fake { server 127.0.0.1:${upstreamPort}; keepalive 256; }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 64m;
    keepalive_requests 1000000;
    location / {
      proxy_pass http://fake;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 300s;
    }
  }
}
`,
  );
  const proc = await start({
    name: 'nginx',
    cmd: bin,
    args: ['-p', prefix, '-c', conf],
    cpu: CPU_TARGET,
    stderrFile: join(dir, 'nginx.err'),
    port,
    readyUrl: `http://127.0.0.1:${port}/v1/models`,
  });
  return { name: 'nginx', url: `http://127.0.0.1:${port}`, pid: proc.pid, logFile: join(prefix, 'logs/access.log'), proc };
}
