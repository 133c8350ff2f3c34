// What a pause in the traffic costs the next requests. The gateway (production build, the image's flags, the
// benchmark's configuration) is warmed with chat at c=32, measured over two 5 s windows, left idle, then measured
// over two more. A major GC during the pause (the memory release after a burst, runtime/traffic-quiet.ts) makes V8
// discard much of the request path's optimised code, which shows as CPU per request in the first window after it;
// the RSS drop across the pause tells whether a release ran. Not part of `npm run bench`: a focused measurement
// (bench/results/performance-history.md, "JIT warm-up and the memory release").
//
//   npm run build && node --import tsx bench/pause.ts [--idle 15] [--warmup 40] [--cli path/to/cli.js]
//
// --idle 15 is shorter than the release's quiet period (no release); --idle 45 is longer (one release).
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { closedLoop } from './lib/load.js';
import { startLoneGateway } from './lib/lone-gateway.js';
import { BENCH_KEY } from './lib/manifests.js';
import { cpuSeconds, rssBytes } from './lib/procs.js';

const { values: opt } = parseArgs({
  options: {
    idle: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '40' },
    cli: { type: 'string' },
  },
});
const WINDOW_S = 5;

const lone = await startLoneGateway(opt.cli ? { cli: opt.cli } : {});
const { gateway, workload, dir } = lone;
const MB = (n: number) => `${(n / 2 ** 20).toFixed(0)} MB`;

async function window(name: string): Promise<void> {
  const cpu0 = cpuSeconds(gateway.pid);
  const r = await closedLoop({ url: gateway.url, body: workload.chat, key: BENCH_KEY, connections: 32, seconds: WINDOW_S, dir });
  const us = ((cpuSeconds(gateway.pid) - cpu0) * 1e6) / r.requests;
  if (r.errors > 0) throw new Error(`${r.errors} errors in window "${name}"`);
  console.log(`${name.padEnd(24)} ${String(r.requests).padStart(7)} requests  ${us.toFixed(0).padStart(4)} µs CPU per request`);
}

try {
  // The release of the start-up compile's memory falls due 5 s after the config loaded: let it run before the load.
  await sleep(7_000);
  await closedLoop({ url: gateway.url, body: workload.chat, key: BENCH_KEY, connections: 32, seconds: Number(opt.warmup), dir });
  await window('before the pause, 1');
  await window('before the pause, 2');
  const rssBefore = rssBytes(gateway.pid);
  await sleep(Number(opt.idle) * 1000);
  console.log(`idle ${opt.idle} s: RSS ${MB(rssBefore)} → ${MB(rssBytes(gateway.pid))}`);
  await window('after the pause, 1');
  await window('after the pause, 2');
} finally {
  await lone.stop();
}
