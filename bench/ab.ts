// A/B of gateway variants over several processes each: for effects of a few percent, which one process per target
// cannot tell apart. Two processes of the same build, measured side by side, differed by up to 15 % in CPU per
// request (bench/results/2026-11-27-evening-ab.md), so the run starts a set of processes (one per variant), measures
// them in alternating rounds, stops them, and does that --copies times; every round of every set is one ratio.
//
//   npm run bench:ab -- --variant NAME="WORDS" [--variant …] [--copies 3] [--rounds 6] [--seconds 2]
//                         [--bare] [--body chat|stream|messages] [--no-build]
//
// A variant's words are as for `npm run bench -- --variant`: node flags, another build's path/to/cli.js, NAME=VALUE
// environment variables ({upstream} is the fake upstream). An empty variant (`--variant off=`) is the build as the
// image starts it. The first variant is the baseline. --bare adds the bench's bare express + undici proxy to each set.
// Targets on the target CPU, wrk and the fake upstream on the other (as `npm run bench`). Each measurement re-warms
// its process for 1 s first, and each set's first round only settles (not recorded). Reported: the median of the
// rounds' ratios, and the mean of the sets' mean ratios with its standard error (the sets are the samples). A set
// is kept small so that no process idles long between its rounds: with eight processes measured in turn every
// figure came out about a quarter higher. A cost paid in garbage-collection cycles (tracing's) needs long windows,
// each order once (--rounds 2 --seconds 20): short rounds after an idle miss part of it
// (bench/results/2026-11-27-night-tracing-mixing.md).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { closedLoop } from './lib/load.js';
import { BENCH_KEY, writeManifests } from './lib/manifests.js';
import { cpuSeconds } from './lib/procs.js';
import { mean, median, standardError } from './lib/report.js';
import { build } from './lib/setup.js';
import { GATEWAY_NODE_FLAGS, ROOT, startBare, startGateway, startUpstream, type Target } from './lib/targets.js';
import { parseVariant } from './lib/variant.js';
import { writeWorkload } from './lib/workload.js';

const { values: opt } = parseArgs({
  options: {
    variant: { type: 'string', multiple: true, default: [] },
    copies: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '2' },
    bare: { type: 'boolean', default: false },
    body: { type: 'string', default: 'chat' },
    'no-build': { type: 'boolean', default: false },
  },
});
const log = (s: string): void => void process.stderr.write(`[ab ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const [copies, rounds, seconds] = [Number(opt.copies), Number(opt.rounds), Number(opt.seconds)];
if (opt.variant.length === 0 && !opt.bare) throw new Error('give at least one --variant NAME="…" (or --bare)');
if (!opt['no-build']) build(ROOT, log);

const dir = mkdtempSync(join(tmpdir(), 'mg-ab-'));
const workload = writeWorkload(dir);
const body = workload[opt.body as 'chat' | 'stream' | 'messages'];
const upstream = await startUpstream(dir);
const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
writeManifests(join(dir, 'manifests'), `${upstreamUrl}/v1`);

const variants = opt.variant.map((v) => parseVariant(v, upstreamUrl));
const names = [...variants.map((v) => v.name), ...(opt.bare ? ['bare'] : [])];
let running: Target[] = [];
try {
  // figures[variant]: CPU µs per request, one per round of each set.
  const figures = names.map(() => [] as number[]);
  for (let k = 0; k < copies; k++) {
    for (const v of variants) {
      const nodeArgs = [...GATEWAY_NODE_FLAGS, ...v.args];
      running.push(await startGateway({ configDir: join(dir, 'manifests'), dir, name: `${v.name}-${k}`, nodeArgs, env: v.env }));
    }
    if (opt.bare) running.push(await startBare(upstream.port, dir));
    log(`set ${k + 1} of ${copies}: warming up …`);
    for (const t of running) await closedLoop({ url: t.url, body, key: BENCH_KEY, connections: 32, seconds: 10, dir });
    // Round -1 settles and is not recorded: the first round's ratios were biased, its first process having idled
    // through the others' warm-up (bench/results/2026-11-27-late-tracing.md).
    for (let r = -1; r < rounds; r++) {
      const round = new Array<number>(running.length);
      for (let j = 0; j < running.length; j++) {
        const i = (j + r + running.length) % running.length;
        const t = running[i]!;
        await closedLoop({ url: t.url, body, key: BENCH_KEY, connections: 32, seconds: 1, dir });
        const c0 = cpuSeconds(t.pid);
        const res = await closedLoop({ url: t.url, body, key: BENCH_KEY, connections: 32, seconds, dir });
        if (res.errors > 0) throw new Error(`${t.name}: ${res.errors} errors`);
        round[i] = ((cpuSeconds(t.pid) - c0) * 1e6) / res.requests;
      }
      const line = `${names.map((n, i) => `${n} ${round[i]!.toFixed(1)}`).join(', ')} µs/req`;
      if (r < 0) {
        log(`set ${k + 1} settling round: ${line} (not recorded)`);
        continue;
      }
      for (const [i, x] of round.entries()) figures[i]!.push(x);
      log(`set ${k + 1} round ${r + 1}: ${line}`);
    }
    for (const t of running) await t.proc.stop();
    running = [];
  }
  console.log(
    `| variant | CPU µs per request (median) | × ${names[0]} (median of rounds) | × ${names[0]} (mean of sets ± SE) | by round |\n|---|---:|---:|---:|---|`,
  );
  for (const [i, n] of names.entries()) {
    const ratios = figures[i]!.map((x, r) => x / figures[0]![r]!);
    const sets = Array.from({ length: copies }, (_, k) => mean(ratios.slice(k * rounds, (k + 1) * rounds)));
    const spread = `${mean(sets).toFixed(3)} ± ${standardError(sets).toFixed(3)}`;
    console.log(`| ${n} | ${median(figures[i]!)!.toFixed(1)} | ${median(ratios)!.toFixed(3)} | ${spread} | ${ratios.map((x) => x.toFixed(2)).join(' ')} |`);
  }
  console.log(`\n${copies} sets of processes (one per variant) in turn, ${rounds} rounds each of ${seconds} s per process at c=32 (${opt.body}).`);
} finally {
  for (const t of running) await t.proc.stop();
  await upstream.stop();
  rmSync(dir, { recursive: true, force: true });
}
