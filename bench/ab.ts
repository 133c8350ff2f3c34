// A/B of gateway variants, several processes each: for effects of a few percent, which one process per target
// cannot tell apart. Two processes of the same build, measured side by side, differ by up to 15 % in CPU per
// request (V8's choices differ from process to process: bench/results/2026-11-27-evening-ab.md), so each variant
// runs as --copies processes and a round's figure for a variant is the mean of its copies.
//
//   npm run bench:ab -- --variant NAME="WORDS" [--variant …] [--copies 3] [--rounds 6] [--seconds 2]
//                         [--bare] [--body chat|stream|messages] [--no-build]
//
// A variant's words are as for `npm run bench -- --variant`: node flags, another build's path/to/cli.js, NAME=VALUE
// environment variables ({upstream} is the fake upstream). An empty variant (`--variant off=`) is the build as the
// image starts it. The first variant is the baseline: each round, every other variant's mean over its copies is
// divided by the baseline's. --bare adds the bench's bare express + undici proxy (--copies processes too).
// Targets on the target CPU, wrk and the fake upstream on the other (as `npm run bench`); each slice re-warms
// its process for 1 s first, every process is measured once per round, in an order rotated each round.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { closedLoop } from './lib/load.js';
import { BENCH_KEY, writeManifests } from './lib/manifests.js';
import { cpuSeconds } from './lib/procs.js';
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

const groups: { name: string; procs: Target[] }[] = [];
try {
  for (const v of opt.variant.map((v) => parseVariant(v, upstreamUrl))) {
    const procs: Target[] = [];
    for (let k = 0; k < copies; k++) {
      procs.push(
        await startGateway({ configDir: join(dir, 'manifests'), dir, name: `${v.name}-${k}`, nodeArgs: [...GATEWAY_NODE_FLAGS, ...v.args], env: v.env }),
      );
    }
    groups.push({ name: v.name, procs });
  }
  if (opt.bare) groups.push({ name: 'bare', procs: await Promise.all(Array.from({ length: copies }, () => startBare(upstream.port, dir))) });
  const all = groups.flatMap((g) => g.procs);
  log(`${all.length} processes; warming up …`);
  for (const t of all) await closedLoop({ url: t.url, body, key: BENCH_KEY, connections: 32, seconds: 10, dir });

  // perRound[group][round]: the mean over the group's copies of CPU µs per request.
  const perRound = groups.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    const cpu = new Map<Target, number>();
    for (let j = 0; j < all.length; j++) {
      const t = all[(j + r) % all.length]!;
      await closedLoop({ url: t.url, body, key: BENCH_KEY, connections: 32, seconds: 1, dir });
      const c0 = cpuSeconds(t.pid);
      const res = await closedLoop({ url: t.url, body, key: BENCH_KEY, connections: 32, seconds, dir });
      if (res.errors > 0) throw new Error(`${t.name}: ${res.errors} errors`);
      cpu.set(t, ((cpuSeconds(t.pid) - c0) * 1e6) / res.requests);
    }
    for (const [i, g] of groups.entries()) perRound[i]!.push(g.procs.reduce((s, t) => s + cpu.get(t)!, 0) / g.procs.length);
    log(`round ${r + 1}: ${groups.map((g, i) => `${g.name} ${perRound[i]![r]!.toFixed(1)}`).join(', ')} µs/req`);
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  console.log(`| variant | CPU µs per request (median of rounds) | × ${groups[0]!.name} (median of rounds) | by round |\n|---|---:|---:|---|`);
  groups.forEach((g, i) => {
    const ratios = perRound[i]!.map((x, r) => x / perRound[0]![r]!);
    console.log(`| ${g.name} | ${median(perRound[i]!).toFixed(1)} | ${median(ratios).toFixed(3)} | ${ratios.map((x) => x.toFixed(2)).join(' ')} |`);
  });
  console.log(`\n${copies} processes per variant, ${rounds} rounds of ${seconds} s each at c=32 (${opt.body}).`);
} finally {
  for (const t of groups.flatMap((g) => g.procs)) await t.proc.stop();
  await upstream.stop();
  rmSync(dir, { recursive: true, force: true });
}
