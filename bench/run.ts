// `npm run bench`: the side-by-side benchmark. Builds the gateway, starts a fake upstream and every target in
// its own process, warms them up, runs each scenario against each target in alternating rounds, then writes
// bench/results/latest.md and latest.json. `--quick` is a shorter run for development.
//
// Flags: --quick  --rounds N  --targets direct,bare,gateway,nginx  --scenarios chat-c1,...  --workers N (adds a
// gateway-wN target)  --gateway-node-args "FLAGS" (node flags for every gateway target)  --variant NAME="FLAGS"
// (adds a gateway target NAME with those node flags, and/or another build's path/to/cli.js, and/or NAME=VALUE
// environment variables, for A/B runs; repeatable)  --streams N  --profile (gateway, bare and variants under --cpu-prof; summaries in the report)  --no-install
// --no-build  --out DIR  --keep (keep the temp dir)  --warmup SECONDS (per target, of chat, of streaming and of Messages when
//   its scenario runs; default 15 each)
// --rewarm SECONDS (each target again, with the scenario's own load, right before each of its measurements; default 2)
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { closedLoop, HAS_WRK } from './lib/load.js';
import { BENCH_KEY, ROUTES, TOKENS, writeManifests } from './lib/manifests.js';
import { rssBytes } from './lib/procs.js';
import { scrapeSeries } from './lib/prom-text.js';
import { profileDiffMarkdown, profileMarkdown, summarize, type ProfileSummary } from './lib/profile.js';
import { figures, markdown, verdicts, type RunData } from './lib/report.js';
import { measure, rssWithOpenStreams, scenarios } from './lib/scenarios.js';
import { build, ensureTools, machineInfo } from './lib/setup.js';
import { directTarget, GATEWAY_NODE_FLAGS, nginxBinary, ROOT, startBare, startGateway, startNginx, startUpstream, type Target } from './lib/targets.js';
import { parseVariant } from './lib/variant.js';
import { writeWorkload } from './lib/workload.js';
import { startRedis, type TestRedis } from '../test/support/redis-server.js';

const { values: opt } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    // gateway-limits: the gateway with limits on every group and token, counted in Redis on loopback.
    targets: { type: 'string', default: 'direct,bare,gateway,gateway-limits,nginx' },
    'after-load-wait': { type: 'string' },
    scenarios: { type: 'string' },
    workers: { type: 'string' },
    'gateway-node-args': { type: 'string' },
    variant: { type: 'string', multiple: true, default: [] },
    streams: { type: 'string', default: '1000' },
    'no-install': { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
    out: { type: 'string', default: join(ROOT, 'bench/results') },
    keep: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    alloc: { type: 'boolean', default: false },
    warmup: { type: 'string' },
    rewarm: { type: 'string' },
  },
});

const log = (s: string): void => void process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const wanted = new Set(opt.targets.split(','));
const rounds = Number(opt.rounds ?? (opt.quick ? 1 : 3));
const streamsWanted = Number(opt.streams);
// V8 keeps compiling for the first few hundred thousand requests: 3 s of each left the first measured round in that
// warm-up (chat at c=32: 296 against 119–151 µs per request in later rounds). A pod serves far longer than that.
const warmupSeconds = Number(opt.warmup ?? (opt.quick ? 1 : 15));
// A target idle for 30 s while the others ran has released memory after the burst, which costs the gateway its
// optimised code (src/runtime/traffic-quiet.ts): the re-warm keeps that lull's price out of a steady-load figure.
const rewarmSeconds = Number(opt.rewarm ?? (opt.quick ? 0 : 2));
const allScenarios = scenarios(opt.quick);
const chosen = opt.scenarios ? allScenarios.filter((s) => opt.scenarios!.split(',').includes(s.id)) : allScenarios;

const startedAt = new Date().toISOString();
const missing = ensureTools(!opt['no-install'], log);
if (!opt['no-build']) build(ROOT, log);
const machine = machineInfo(ROOT);
const dir = mkdtempSync(join(tmpdir(), 'mg-bench-'));
const skipped: Record<string, string> = {};
const notes: string[] = [];
if (!HAS_WRK) notes.push('wrk is not installed: closed-loop figures come from autocannon, whose latency histogram has 1 ms resolution.');

const workload = writeWorkload(dir);
const upstream = await startUpstream(dir);
const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
const targets: Target[] = [];
let redis: TestRedis | undefined;
try {
  if (wanted.has('direct')) targets.push(directTarget(upstream));
  // Given to bare, gateway and the variants (`instrumented` below), and to no other target.
  const profArgs = (name: string): string[] => [
    ...(opt.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, `prof-${name}`)}`] : []),
    // --alloc: the heap-allocation probe (bench/lib/alloc-probe.mjs); it writes into `dir`.
    ...(opt.alloc ? ['--import', join(ROOT, 'bench/lib/alloc-probe.mjs')] : []),
  ];
  if (opt.alloc) process.env.MG_ALLOC_PROBE_DIR = dir;
  if (wanted.has('bare')) targets.push(await startBare(upstream.port, dir, profArgs('bare')));
  const configDir = join(dir, 'manifests');
  const gatewayArgs = opt['gateway-node-args'] !== undefined ? opt['gateway-node-args'].split(' ').filter(Boolean) : GATEWAY_NODE_FLAGS;
  const variants = opt.variant.map((v) => parseVariant(v, upstreamUrl));
  // The targets started with profArgs: only they are profiled, and only they may get the allocation probe's
  // SIGUSR2 (the signal ends any node process without it, e.g. gateway-limits).
  const instrumented = ['gateway', 'bare', ...variants.map((v) => v.name)];
  if (wanted.has('gateway') || wanted.has('gateway-limits') || opt.workers || variants.length > 0) {
    log(`writing ${ROUTES} routes and ${TOKENS} tokens …`);
    writeManifests(configDir, `${upstreamUrl}/v1`);
  }
  const gateways: { name: string; workers: number; args: string[]; configDir?: string; env: Record<string, string> }[] = [
    ...(wanted.has('gateway') ? [{ name: 'gateway', workers: 1, args: [...gatewayArgs, ...profArgs('gateway')], env: {} }] : []),
    ...(opt.workers ? [{ name: `gateway-w${opt.workers}`, workers: Number(opt.workers), args: gatewayArgs, env: {} }] : []),
    ...variants.map((v) => ({ name: v.name, workers: 1, args: [...gatewayArgs, ...v.args, ...profArgs(v.name)], env: v.env })),
  ];
  if (wanted.has('gateway-limits')) {
    try {
      redis = await startRedis();
      const limitsDir = join(dir, 'manifests-limits');
      writeManifests(limitsDir, `${upstreamUrl}/v1`, { limits: true });
      gateways.push({ name: 'gateway-limits', workers: 1, args: gatewayArgs, configDir: limitsDir, env: { MG_REDIS_URL: redis.url } });
    } catch (e) {
      skipped['gateway-limits'] = `no Redis: ${(e as Error).message.split('\n')[0]} (apt-get install redis-server)`;
    }
  }
  for (const { name, workers, args, configDir: cfg, env } of gateways) {
    try {
      log(`starting ${name}${args.length ? ` (node ${args.join(' ')})` : ''}${Object.keys(env).length ? ` with ${Object.keys(env).join(', ')}` : ''} …`);
      targets.push(await startGateway({ configDir: cfg ?? configDir, dir, workers, name, nodeArgs: args, env }));
      const script = args.find((a) => a.endsWith('cli.js')) ?? 'dist/cli.js';
      notes.push(
        `${name}: \`${Object.entries(env)
          .map(([k, v]) => `${k}=${v} `)
          .join(
            '',
          )}node ${[...args.filter((a) => a !== script), script, 'serve'].join(' ')}\`${workers > 1 ? ` with MG_WORKERS=${workers}` : ''}, file source, log level info to a file.`,
      );
    } catch (e) {
      skipped[name] = `did not start: ${(e as Error).message.split('\n').slice(0, 3).join(' ')}`;
      log(`${name} skipped: ${skipped[name]}`);
    }
  }
  if (wanted.has('nginx')) {
    const bin = nginxBinary();
    if (!bin) skipped.nginx = missing.includes('nginx') ? 'not installed (apt-get install nginx)' : 'binary not found';
    else targets.push(await startNginx(bin, upstream.port, dir));
  }
  const names = targets.map((t) => t.name);
  log(`targets: ${names.join(', ')}${Object.keys(skipped).length ? ` (skipped: ${Object.keys(skipped).join(', ')})` : ''}`);

  // Idle as a running pod is idle: the gateway releases its compile's memory 5 s after loading the config
  // (src/runtime/memory-release.ts), so wait past that.
  await sleep(7_000);
  const rssIdle = Object.fromEntries(targets.map((t) => [t.name, rssBytes(t.pid)]));

  const ctx = { upstreamUrl, workload, key: BENCH_KEY, dir };
  log('warming up …');
  // Messages too when its scenario runs: measured cold, its first round would count V8 compiling its path.
  const warmups = chosen.some((s) => s.body === 'messages') ? [workload.chat, workload.stream, workload.messages] : [workload.chat, workload.stream];
  for (const t of targets) {
    for (const body of warmups) {
      await closedLoop({ url: t.url, body, key: BENCH_KEY, connections: 32, seconds: warmupSeconds, dir });
    }
  }

  const measurements: RunData['measurements'] = [];
  const measuredFromUs = Number(process.hrtime.bigint() / 1000n);
  for (let round = 1; round <= rounds; round++) {
    const order = targets.map((_, i) => targets[(i + round - 1) % targets.length]!);
    for (const sc of chosen) {
      for (const t of order) {
        if (rewarmSeconds > 0 && sc.rate === undefined) {
          await closedLoop({ url: t.url, body: workload[sc.body], key: BENCH_KEY, connections: sc.connections, seconds: rewarmSeconds, dir });
        }
        const m = await measure(sc, t, round, ctx);
        measurements.push(m);
        log(
          `round ${round} ${sc.id.padEnd(10)} ${t.name.padEnd(10)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${(m.p50us / 1000).toFixed(3)} ms  p99 ${(m.p99us / 1000).toFixed(3)} ms  cpu ${m.cpuUsPerRequest.toFixed(0)} µs/req${m.problems.length ? `  PROBLEM: ${m.problems.join('; ')}` : ''}`,
        );
      }
    }
  }

  // --alloc: JavaScript heap bytes allocated per request, each instrumented target alone under chat at c=32 for 3 s.
  const allocPerRequest: Record<string, number> = {};
  if (opt.alloc) {
    for (const t of targets.filter((x) => instrumented.includes(x.name))) {
      const file = join(dir, `alloc-${t.pid}.json`);
      process.kill(t.pid, 'SIGUSR2');
      const r = await closedLoop({ url: t.url, body: workload.chat, key: BENCH_KEY, connections: 32, seconds: 3, dir });
      process.kill(t.pid, 'SIGUSR2');
      for (let i = 0; i < 100 && !existsSync(file); i++) await sleep(50);
      const { allocated } = JSON.parse(readFileSync(file, 'utf8')) as { allocated: number };
      allocPerRequest[t.name] = allocated / r.requests;
      log(`${t.name}: ${(allocated / r.requests / 1024).toFixed(1)} KB of heap allocated per request over ${r.requests} requests`);
    }
  }

  // What a pod keeps after a burst: RSS once the load has been over for a while (V8 and the allocator hold on to
  // pages they grew into; the young-generation size decides much of it).
  const afterLoadSeconds = Number(opt['after-load-wait'] ?? (opt.quick ? 10 : 60));
  log(`waiting ${afterLoadSeconds} s after the load …`);
  await sleep(afterLoadSeconds * 1000);
  const rssAfterLoad = Object.fromEntries(targets.map((t) => [t.name, rssBytes(t.pid)]));

  const rssStreams: RunData['rssStreams'] = [];
  if (streamsWanted > 0) {
    for (const t of targets.filter((x) => x.name !== 'direct')) {
      log(`holding ${streamsWanted} streams open through ${t.name} …`);
      try {
        const r = await rssWithOpenStreams(t, workload, BENCH_KEY, streamsWanted);
        rssStreams.push(r);
        log(`${t.name}: ${r.opened}/${r.streams} open, RSS ${(r.rssBytes / 2 ** 20).toFixed(0)} MB`);
      } catch (e) {
        notes.push(`open streams through ${t.name} failed: ${(e as Error).message}`);
      }
    }
  }

  // The same gateway with Node's default heap sizing, for memory only: what the production flags save.
  if (streamsWanted > 0 && targets.some((t) => t.name === 'gateway') && gatewayArgs.length > 0) {
    const name = 'gateway-node-defaults';
    log(`starting ${name} (memory only) …`);
    const t = await startGateway({ configDir, dir, workers: 1, name, nodeArgs: [] });
    try {
      await sleep(7_000); // the same wait as the other targets' idle figure
      rssIdle[name] = rssBytes(t.pid);
      for (const body of [workload.chat, workload.stream]) {
        await closedLoop({ url: t.url, body, key: BENCH_KEY, connections: 32, seconds: opt.quick ? 1 : body === workload.chat ? 3 : 2, dir });
      }
      const r = await rssWithOpenStreams(t, workload, BENCH_KEY, streamsWanted);
      rssStreams.push(r);
      names.push(name);
      notes.push(`${name}: \`node dist/cli.js serve\` without the production node flags, measured for memory only.`);
    } finally {
      await t.proc.stop();
    }
  }

  const gw = targets.find((t) => t.name === 'gateway');
  let gatewayLogLines: number | undefined;
  let gatewayMetrics: Record<string, number> | undefined;
  if (gw?.logFile) {
    await sleep(500);
    gatewayLogLines = readFileSync(gw.logFile, 'utf8').split('\n').filter(Boolean).length;
  }
  if (gw?.metricsUrl) gatewayMetrics = await scrapeMetrics(gw.metricsUrl);
  // Stop everything before writing: a --cpu-prof profile is written when the gateway exits.
  for (const t of targets) if (t.proc !== upstream) await t.proc.stop();
  const profiles: Record<string, ProfileSummary> = {};
  for (const name of opt.profile ? instrumented : []) {
    if (!targets.some((t) => t.name === name)) continue;
    const pdir = join(dir, `prof-${name}`);
    const file = existsSync(pdir) ? readdirSync(pdir).find((f) => f.endsWith('.cpuprofile')) : undefined;
    if (!file) {
      notes.push(`--profile: ${name} wrote no profile`);
      continue;
    }
    mkdirSync(opt.out, { recursive: true });
    copyFileSync(join(pdir, file), join(opt.out, `${name}.cpuprofile`));
    profiles[name] = summarize(join(pdir, file), 30, measuredFromUs);
  }

  const data: RunData = {
    machine,
    mode: opt.quick ? 'quick' : 'full',
    startedAt,
    finishedAt: new Date().toISOString(),
    loadAverageAtEnd: loadavg().map((l) => Math.round(l * 100) / 100),
    targets: names,
    skipped,
    rounds,
    scenarios: chosen.map((s) => ({ id: s.id, title: s.title, seconds: s.seconds, connections: s.connections, rate: s.rate })),
    measurements,
    rssIdle,
    rssAfterLoad,
    afterLoadSeconds,
    allocPerRequest,
    rssStreams,
    notes,
    gatewayLogLines,
    gatewayMetrics,
  };
  const requestsOf = (target: string): number => measurements.filter((m) => m.target === target).reduce((a, m) => a + m.requests, 0);
  const figs = figures(data);
  const vs = verdicts(figs, data);
  const md =
    markdown(data, figs, vs) +
    Object.entries(profiles)
      .map(([name, p]) => `\n${profileMarkdown(p, `Where ${name} spends its CPU under load (--profile, measured rounds only)`)}`)
      .join('') +
    (profiles.gateway && profiles.bare
      ? `\n${profileDiffMarkdown({ summary: profiles.gateway, requests: requestsOf('gateway') }, { summary: profiles.bare, requests: requestsOf('bare') })}`
      : '') +
    // A variant next to the gateway: where what the variant changes costs (e.g. tracing on against off).
    variants
      .filter((v) => profiles[v.name] && profiles.gateway)
      .map(
        (v) =>
          `\n${profileDiffMarkdown({ summary: profiles[v.name]!, requests: requestsOf(v.name) }, { summary: profiles.gateway!, requests: requestsOf('gateway') }, 1000, 20, [v.name, 'gateway'])}`,
      )
      .join('');
  mkdirSync(opt.out, { recursive: true });
  writeFileSync(join(opt.out, 'latest.md'), md);
  writeFileSync(
    join(opt.out, 'latest.json'),
    `${JSON.stringify({ ...data, figures: figs, verdicts: vs, profiles, profileFromUs: measuredFromUs }, null, 2)}\n`,
  );
  process.stdout.write(md);
  log(`wrote ${join(opt.out, 'latest.md')} and latest.json`);
} finally {
  for (const t of targets) if (t.proc !== upstream) await t.proc.stop();
  await redis?.stop();
  await upstream.stop();
  if (opt.keep) log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/** A few of the gateway's own figures from /metrics (sums over label sets), to cross-check the benchmark. */
async function scrapeMetrics(url: string): Promise<Record<string, number>> {
  const out = await scrapeSeries(url, [
    'model_gateway_overhead_seconds_sum',
    'model_gateway_overhead_seconds_count',
    'gen_ai_server_request_duration_seconds_count',
  ]);
  const sum = out.model_gateway_overhead_seconds_sum;
  const count = out.model_gateway_overhead_seconds_count;
  if (sum !== undefined && count) out['model_gateway_overhead mean (ms)'] = Math.round((sum / count) * 1e6) / 1e3;
  return out;
}
