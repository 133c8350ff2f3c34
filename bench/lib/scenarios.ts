// The scenarios and how one of them is measured against one target: load, the target's CPU time over the run,
// and a check with the fake upstream that every completed request really reached it with its whole body.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { closedLoop, openLoop, openStreamsArgs, type LoadResult } from './load.js';
import { CPU_LOADGEN, cpuSeconds, pinned, rssBytes } from './procs.js';
import type { Target } from './targets.js';
import type { Body, Workload } from './workload.js';

export interface Scenario {
  readonly id: string;
  readonly title: string;
  readonly body: keyof Workload;
  readonly connections: number;
  readonly seconds: number;
  /** Set for open-loop scenarios: requests per second. */
  readonly rate?: number;
}

export function scenarios(quick: boolean): Scenario[] {
  const s = (full: number): number => (quick ? Math.max(2, Math.round(full / 2.5)) : full);
  return [
    { id: 'chat-c1', title: 'chat, concurrency 1', body: 'chat', connections: 1, seconds: s(4) },
    { id: 'chat-c32', title: 'chat, concurrency 32', body: 'chat', connections: 32, seconds: s(5) },
    { id: 'stream-c32', title: 'streaming chat (20 SSE events), concurrency 32', body: 'stream', connections: 32, seconds: s(5) },
    // The same stream from an upstream that ignores stream_options: the gateway estimates its usage.
    {
      id: 'stream-nousage-c32',
      title: 'streaming chat without upstream usage (estimated), concurrency 32',
      body: 'streamNoUsage',
      connections: 32,
      seconds: s(5),
    },
    // The Messages API to a native (api: anthropic) backend: passed through, read only for its usage.
    { id: 'messages-c32', title: 'Messages API, native passthrough, concurrency 32', body: 'messages', connections: 32, seconds: s(5) },
    { id: 'rate-1000', title: 'chat, open loop at 1,000 req/s', body: 'chat', connections: 64, seconds: s(4), rate: 1000 },
    { id: 'embed-100k', title: 'embeddings, 100 KB body, concurrency 8', body: 'embed', connections: 8, seconds: s(3) },
    { id: 'upload-5m', title: 'transcription, 5 MB multipart, concurrency 4', body: 'upload', connections: 4, seconds: s(3) },
  ];
}

export interface Measurement extends LoadResult {
  scenario: string;
  target: string;
  round: number;
  /** CPU time the target's process tree used during the run, per completed request (µs). */
  cpuUsPerRequest: number;
  /** Empty when the upstream saw every completed request with its full body; otherwise what was wrong. */
  problems: string[];
}

interface UpstreamStats {
  [path: string]: { requests: number; bytes: number };
}

async function upstreamStats(upstreamUrl: string, reset: boolean): Promise<UpstreamStats> {
  const r = await fetch(`${upstreamUrl}/__stats`, { method: reset ? 'POST' : 'GET' });
  return (await r.json()) as UpstreamStats;
}

export async function measure(
  sc: Scenario,
  target: Target,
  round: number,
  ctx: { upstreamUrl: string; workload: Workload; key: string; dir: string },
): Promise<Measurement> {
  const body: Body = ctx.workload[sc.body];
  await upstreamStats(ctx.upstreamUrl, true);
  const cpu0 = cpuSeconds(target.pid);
  const result =
    sc.rate !== undefined
      ? await openLoop({ url: target.url, body, key: ctx.key, rate: sc.rate, seconds: sc.seconds, connections: sc.connections })
      : await closedLoop({ url: target.url, body, key: ctx.key, connections: sc.connections, seconds: sc.seconds, dir: ctx.dir });
  const cpu = cpuSeconds(target.pid) - cpu0;
  // Let requests cut off at the end of the run reach the upstream before counting.
  await sleep(300);
  const seen = (await upstreamStats(ctx.upstreamUrl, false))[body.path] ?? { requests: 0, bytes: 0 };
  const problems: string[] = [];
  if (result.errors > 0) problems.push(`${result.errors} errors or non-2xx responses`);
  if (result.requests === 0) problems.push('no request completed');
  if (seen.requests < result.requests) problems.push(`upstream saw ${seen.requests} requests, client completed ${result.requests}`);
  const avg = seen.requests ? seen.bytes / seen.requests : 0;
  if (avg < 0.9 * body.bytes) problems.push(`upstream received ${Math.round(avg)} bytes per request, sent ${body.bytes}`);
  return {
    ...result,
    scenario: sc.id,
    target: target.name,
    round,
    cpuUsPerRequest: result.requests ? (cpu * 1e6) / result.requests : 0,
    problems,
  };
}

export interface StreamsRss {
  target: string;
  streams: number;
  opened: number;
  failed: number;
  rssBytes: number;
}

/** Opens `streams` concurrent held streams through the target and reads its RSS while they are open. */
export async function rssWithOpenStreams(target: Target, workload: Workload, key: string, streams: number): Promise<StreamsRss> {
  const [cmd, args] = pinned(CPU_LOADGEN, process.execPath, openStreamsArgs(target.url, workload.hold, key, streams));
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let buf = '';
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        const m = /READY \d+ \d+/.exec(buf);
        if (m) resolve(m[0]);
      });
      child.once('exit', (code) => reject(new Error(`open-streams exited ${code}`)));
    });
    const [, opened, failed] = line.split(' ').map(Number);
    await sleep(1_000);
    return { target: target.name, streams, opened: opened!, failed: failed!, rssBytes: rssBytes(target.pid) };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    }
    // Give the target time to tear the streams down before the next measurement.
    await sleep(1_000);
  }
}
