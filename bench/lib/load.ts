// Load generators, each run as its own process on the load-generator CPU:
// - closed loop (fixed concurrency): wrk (Debian; µs latency) or, when wrk is missing, autocannon (npm; its
//   latency histogram has 1 ms resolution, so sub-millisecond figures are then rounded);
// - open loop (fixed rate): bench/open-loop.ts (undici, µs timing);
// - open streams: bench/open-streams.ts.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { CPU_LOADGEN, run } from './procs.js';
import type { Body } from './workload.js';

export const HAS_WRK = spawnSync('wrk', ['--version']).error === undefined;
const require = createRequire(import.meta.url);

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50us: number;
  p90us: number;
  p99us: number;
  /** Socket errors, timeouts and non-2xx responses. */
  errors: number;
}

export interface ClosedLoop {
  url: string;
  body: Body;
  key: string;
  connections: number;
  seconds: number;
  /** Scratch directory for wrk's Lua scripts. */
  dir: string;
}

export function closedLoop(o: ClosedLoop): Promise<LoadResult> {
  return HAS_WRK ? wrk(o) : autocannon(o);
}

// The Lua script reads the body file once per thread and prints the summary as JSON (µs), one line.
const WRK_DONE = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"errors":%d,"p50":%d,"p90":%d,"p99":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99)))
end
`;

async function wrk(o: ClosedLoop): Promise<LoadResult> {
  const script = join(o.dir, `wrk-${o.body.file.replace(/\W/g, '_')}.lua`);
  writeFileSync(
    script,
    `local f = assert(io.open(${JSON.stringify(o.body.file)}, "rb"))\nwrk.method = "POST"\nwrk.body = f:read("*a")\nf:close()\n` +
      `wrk.headers["Content-Type"] = ${JSON.stringify(o.body.contentType)}\nwrk.headers["Authorization"] = ${JSON.stringify(`Bearer ${o.key}`)}\n` +
      WRK_DONE,
  );
  const out = await run('wrk', ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--timeout', '30s', '-s', script, `${o.url}${o.body.path}`], {
    cpu: CPU_LOADGEN,
    timeoutMs: (o.seconds + 60) * 1000,
  });
  const m = /WRKJSON (\{.*\})/.exec(out);
  if (!m) throw new Error(`wrk printed no summary:\n${out}`);
  const j = JSON.parse(m[1]!) as { requests: number; duration_us: number; errors: number; p50: number; p90: number; p99: number };
  const seconds = j.duration_us / 1e6;
  return { requests: j.requests, seconds, rps: j.requests / seconds, p50us: j.p50, p90us: j.p90, p99us: j.p99, errors: j.errors };
}

async function autocannon(o: ClosedLoop): Promise<LoadResult> {
  const bin = join(require.resolve('autocannon/package.json'), '..', 'autocannon.js');
  const out = await run(
    process.execPath,
    [
      bin,
      '-j',
      '-c',
      String(o.connections),
      '-d',
      String(o.seconds),
      '-t',
      '30',
      '-m',
      'POST',
      '-H',
      `Content-Type=${o.body.contentType}`,
      '-H',
      `Authorization=Bearer ${o.key}`,
      '-i',
      o.body.file,
      `${o.url}${o.body.path}`,
    ],
    { cpu: CPU_LOADGEN, timeoutMs: (o.seconds + 60) * 1000 },
  );
  const j = JSON.parse(out) as {
    requests: { total: number };
    duration: number;
    latency: { p50: number; p90: number; p99: number };
    errors: number;
    timeouts: number;
    non2xx: number;
  };
  return {
    requests: j.requests.total,
    seconds: j.duration,
    rps: j.requests.total / j.duration,
    p50us: j.latency.p50 * 1000,
    p90us: j.latency.p90 * 1000,
    p99us: j.latency.p99 * 1000,
    errors: j.errors + j.timeouts + j.non2xx,
  };
}

export interface OpenLoop {
  url: string;
  body: Body;
  key: string;
  rate: number;
  seconds: number;
  connections: number;
}

export interface OpenLoopResult extends LoadResult {
  /** Requests the schedule called for. */
  scheduled: number;
  maxInFlight: number;
}

const TSX = ['--import', 'tsx'];
const HERE = new URL('..', import.meta.url).pathname;

export async function openLoop(o: OpenLoop): Promise<OpenLoopResult> {
  const out = await run(
    process.execPath,
    [
      ...TSX,
      join(HERE, 'open-loop.ts'),
      '--url',
      `${o.url}${o.body.path}`,
      '--rate',
      String(o.rate),
      '--seconds',
      String(o.seconds),
      '--connections',
      String(o.connections),
      '--body',
      o.body.file,
      '--content-type',
      o.body.contentType,
      '--key',
      o.key,
    ],
    { cpu: CPU_LOADGEN, timeoutMs: (o.seconds + 60) * 1000 },
  );
  return JSON.parse(out.trim().split('\n').pop()!) as OpenLoopResult;
}

/** Script path and args of the open-streams client (the runner manages its lifetime). */
export function openStreamsArgs(url: string, body: Body, key: string, streams: number): string[] {
  return [...TSX, join(HERE, 'open-streams.ts'), '--url', `${url}${body.path}`, '--body', body.file, '--key', key, '--streams', String(streams)];
}
