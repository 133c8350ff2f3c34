// The garbage-collection pauses behind the gateway's tail latency at a fixed rate: the gateway (production build,
// the image's flags, the benchmark's configuration) warmed with chat at c=32, then chat in an open loop at --rate
// for --seconds under --trace-gc, whose lines (on the gateway's stdout, beside its log) are summed by kind. For
// comparing builds (--cli) on what the p99 at 1,000 req/s is made of; bench/results/performance-history.md, "Allocations per request".
//
//   npm run build && npm run bench:gc [-- --rate 1000] [--seconds 20] [--warmup 15] [--cli path/to/cli.js]
import { readFileSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { closedLoop, openLoop } from './lib/load.js';
import { startLoneGateway } from './lib/lone-gateway.js';
import { BENCH_KEY } from './lib/manifests.js';

const { values: opt } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '15' },
    cli: { type: 'string' },
  },
});

/** `… 1234 ms: Scavenge 45.2 (50.1) -> 44.0 (50.1) MB, pooled: 0 MB, 1.23 / 0.00 ms …`: the kind and the pause. */
const GC_LINE = /\d+ ms: (Scavenge|Mark-Compact|Minor Mark-Sweep|Mark-Sweep)\b.*?, ([\d.]+) \/ [\d.]+ ms/;

const lone = await startLoneGateway({ nodeArgs: ['--trace-gc'], ...(opt.cli ? { cli: opt.cli } : {}) });
const { gateway, workload, dir } = lone;
const logFile = gateway.logFile!; // the gateway's stdout: its log lines and V8's --trace-gc lines
try {
  await closedLoop({ url: gateway.url, body: workload.chat, key: BENCH_KEY, connections: 32, seconds: Number(opt.warmup), dir });
  await sleep(1_000);
  const from = statSync(logFile).size;
  const r = await openLoop({ url: gateway.url, body: workload.chat, key: BENCH_KEY, rate: Number(opt.rate), seconds: Number(opt.seconds), connections: 64 });
  await sleep(500);
  const pauses = new Map<string, number[]>();
  for (const line of readFileSync(logFile).subarray(from).toString('utf8').split('\n')) {
    const m = GC_LINE.exec(line);
    if (m) pauses.set(m[1]!, [...(pauses.get(m[1]!) ?? []), Number(m[2])]);
  }
  console.log(
    `${r.requests} requests at ${opt.rate}/s over ${opt.seconds} s (${r.errors} errors): p50 ${(r.p50us / 1000).toFixed(3)} ms, p99 ${(r.p99us / 1000).toFixed(3)} ms`,
  );
  for (const [kind, ms] of pauses) {
    const sum = ms.reduce((a, b) => a + b, 0);
    console.log(
      `${kind.padEnd(16)} ${String(ms.length).padStart(5)} pauses, ${sum.toFixed(1).padStart(7)} ms in all, longest ${Math.max(...ms).toFixed(2)} ms`,
    );
  }
  if (pauses.size === 0) console.log('no collection in the window');
} finally {
  await lone.stop();
}
