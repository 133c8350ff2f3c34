// Open-loop load at a fixed rate (requests are sent on schedule whether or not earlier ones finished), timed in
// microseconds. Latency runs from the moment a request is handed to the client pool to the end of its response
// body, so time spent queued for a free connection counts against the target.
//
//   node --import tsx bench/open-loop.ts --url URL --rate 1000 --seconds 5 --connections 64 --body FILE
//        --content-type TYPE --key KEY        → prints one JSON line
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values: a } = parseArgs({
  options: {
    url: { type: 'string' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '64' },
    body: { type: 'string' },
    'content-type': { type: 'string', default: 'application/json' },
    key: { type: 'string', default: '' },
  },
});
const url = new URL(a.url!);
const rate = Number(a.rate);
const total = Math.round(rate * Number(a.seconds));
const body = readFileSync(a.body!);
const headers = { 'content-type': a['content-type']!, authorization: `Bearer ${a.key}` };
const pool = new Pool(url.origin, { connections: Number(a.connections), keepAliveTimeout: 60_000 });
const path = url.pathname + url.search;

const latencies = new Float64Array(total);
let completed = 0;
let errors = 0;
let inFlight = 0;
let maxInFlight = 0;
let sent = 0;

async function fire(i: number): Promise<void> {
  inFlight++;
  if (inFlight > maxInFlight) maxInFlight = inFlight;
  const t0 = performance.now();
  try {
    const res = await pool.request({ path, method: 'POST', headers, body });
    await res.body.arrayBuffer();
    if (res.statusCode >= 200 && res.statusCode < 300) latencies[i] = performance.now() - t0;
    else errors++;
  } catch {
    errors++;
  }
  completed++;
  inFlight--;
}

const interval = 1000 / rate;
const start = performance.now();
let finishedAt = start;
await new Promise<void>((resolve) => {
  const pending: Promise<void>[] = [];
  const tick = (): void => {
    const now = performance.now();
    // Everything due by now goes out in this turn: timers are ~1 ms coarse, the schedule is not.
    while (sent < total && start + sent * interval <= now) pending.push(fire(sent++));
    if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
    else
      void Promise.all(pending).then(() => {
        finishedAt = performance.now();
        resolve();
      });
  };
  tick();
});
await pool.close();

const ok = Array.from(latencies.filter((v) => v > 0)).sort((x, y) => x - y);
const pct = (p: number): number => (ok.length ? Math.round(ok[Math.min(ok.length - 1, Math.floor((p / 100) * ok.length))]! * 1000) : 0);
const seconds = (finishedAt - start) / 1000;
process.stdout.write(
  `${JSON.stringify({
    scheduled: total,
    requests: completed,
    seconds,
    rps: completed / seconds,
    p50us: pct(50),
    p90us: pct(90),
    p99us: pct(99),
    errors,
    maxInFlight,
  })}\n`,
);
