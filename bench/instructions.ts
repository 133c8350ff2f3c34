// Instructions per request under callgrind: a count that does not depend on what else the machine is doing, for
// A/B runs of two gateway builds where CPU time is too noisy to tell a few percent apart (bench/results/performance-history.md).
// Counts user-space instructions of the target process only (the kernel's socket work, identical for every build,
// is left out), after a warm-up, over a fixed number of chat requests at c=16 with the benchmark's configuration
// (10k tokens, 1k routes, info logs to a file), each request the benchmark's own body (bench/lib/workload.ts).
//
//   node --import tsx bench/instructions.ts [--requests 2000] [--warmup 20000] [--cli dist/cli.js] [--label NAME]
//                                           [--by-function [--top 30]] [--bare] [--stream]
//                                           [--messages [--translated]] [--responses [--translated]]
//                                           [--node-args="FLAGS"]
//
// --bare counts the benchmark's bare express + undici proxy (bench/bare-proxy.ts) instead, under the same load:
// the floor the gateway's count is compared with, as `npm run bench` compares CPU time.
// --stream sends `"stream": true`: the fake upstream answers with 20 SSE events, one per turn of its event loop.
// --messages sends the benchmark's messages-c32 request instead: the same content as POST /v1/messages to its
// native (api: anthropic) route, which the fake upstream answers in the Messages API's shape (with --stream, 20
// events with the usage in message_start and message_delta). With --translated, to its route on a chat completions
// backend instead: the gateway translates the request to chat and the answer (or its 20 chat chunks) back.
// --responses sends a Codex-shaped Responses request (≈2 KB: instructions, five input items, two function tools,
// store: false) to its route on an OpenAI backend, passed through; the fake upstream answers a Response with usage
// (with --stream, the 26 Responses events of the chat stream's 18 deltas). With --translated, to its route on an
// `api: chatCompletions` backend: the request goes as chat, the answer (or its 20 chat chunks) comes back translated.
// --node-args adds node flags to the target's (V8 flags, which NODE_OPTIONS refuses), for A/B runs of a flag.
//
// The warm-up is long because V8 keeps compiling for a while: after 2,000 requests about 40 % of the counted
// instructions were still warm-up, a quarter of them in its compilers (bench/results/performance-history.md). --by-function names
// where the instructions go (bench/lib/callgrind-symbols.ts: V8's perf map puts names on the JIT's code).
//
// Needs valgrind (Debian's package). Variables in the environment reach the gateway and win over the defaults
// below (MG_LOG_LEVEL=warn: no access lines); `{upstream}` in their values becomes the fake upstream's URL
// (OTEL_EXPORTER_OTLP_ENDPOINT={upstream} exports to it).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { type InstructionRow, summarizeInstructions } from './lib/callgrind-symbols.js';
import {
  BENCH_KEY,
  BENCH_MESSAGES_MODEL,
  BENCH_MESSAGES_TRANSLATED_MODEL,
  BENCH_MODEL,
  BENCH_RESPONSES_MODEL,
  BENCH_RESPONSES_TRANSLATED_MODEL,
  writeManifests,
} from './lib/manifests.js';
import { chatBody, messagesBody, responsesBody } from './lib/workload.js';
import { freePort } from '../test/support/free-port.js';
import { ROOT, startUpstream } from './lib/targets.js';

const { values: opt } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '20000' },
    'by-function': { type: 'boolean', default: false },
    top: { type: 'string', default: '30' },
    cli: { type: 'string', default: join(ROOT, 'dist/cli.js') },
    label: { type: 'string' },
    bare: { type: 'boolean', default: false },
    stream: { type: 'boolean', default: false },
    messages: { type: 'boolean', default: false },
    responses: { type: 'boolean', default: false },
    translated: { type: 'boolean', default: false },
    'node-args': { type: 'string', default: '' },
  },
});
const N = Number(opt.requests);
const WARMUP = Number(opt.warmup);
const byFunction = opt['by-function'];
const bare = opt.bare;
const label = opt.label ?? (bare ? 'bare' : 'gateway');
const CONCURRENCY = 16;

const dir = mkdtempSync(join(tmpdir(), 'mg-instructions-'));
const upstream = await startUpstream(dir);
const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
writeManifests(dir, `${upstreamUrl}/v1`);
const [port, metricsPort] = [await freePort(), await freePort()];
const out = join(dir, 'callgrind.out');
const env = Object.fromEntries(Object.entries(process.env).map(([k, v]) => [k, v?.replaceAll('{upstream}', upstreamUrl)]));
// Instrumentation starts off (the start-up and its config compile run at full speed) and is switched on for the
// measured requests only; the image's flags and environment, as the benchmark's gateway target.
// --perf-basic-prof also writes V8's own logs into the working directory: the temporary one.
// The bare proxy runs as the benchmark runs it: through tsx (its loader works at start-up only), no flags.
const program = bare
  ? ['--import', import.meta.resolve('tsx'), join(ROOT, 'bench/bare-proxy.ts'), '--upstream', upstreamUrl, '--port', String(port)]
  : ['--expose-gc', resolve(opt.cli), 'serve'];
const nodeArgs = [...(byFunction ? ['--perf-basic-prof'] : []), ...opt['node-args'].split(' ').filter(Boolean), ...program];
const target = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`, process.execPath, ...nodeArgs], {
  cwd: dir,
  stdio: ['ignore', 'ignore', 'pipe'],
  env: {
    MG_SOURCE: 'file',
    MG_CONFIG_DIR: dir,
    MG_HOST: '127.0.0.1',
    MG_PORT: String(port),
    MG_METRICS_PORT: String(metricsPort),
    MG_LOG_LEVEL: 'info',
    MG_LEADER_ELECTION: 'false',
    NODE_ENV: 'production',
    MALLOC_ARENA_MAX: '2',
    ...env, // MG_LOG_LEVEL=warn, say, for a run without access lines
  },
});
let stderr = '';
target.stderr?.on('data', (d: Buffer) => {
  stderr = (stderr + d.toString()).slice(-4000);
});
const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY });

async function ready(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      const r = await pool.request({ method: 'GET', path: '/readyz' });
      await r.body.dump();
      // The bare proxy has no probe of its own: any answer (the upstream's) means it listens.
      if (r.statusCode === 200 || bare) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`the gateway did not get ready\n${stderr}`);
}

if (opt.messages && opt.responses) throw new Error('--messages and --responses are two requests: pick one');
if (opt.translated && !opt.messages && !opt.responses) throw new Error('--translated goes with --messages or --responses');
const how = opt.translated ? 'translated' : 'native';
const { body, path, name } = opt.messages
  ? {
      body: messagesBody(opt.translated ? BENCH_MESSAGES_TRANSLATED_MODEL : BENCH_MESSAGES_MODEL, opt.stream),
      path: '/v1/messages',
      name: `Messages API (${how})`,
    }
  : opt.responses
    ? {
        body: responsesBody(opt.translated ? BENCH_RESPONSES_TRANSLATED_MODEL : BENCH_RESPONSES_MODEL, opt.stream),
        path: '/v1/responses',
        name: `Responses API (${how})`,
      }
    : { body: chatBody(BENCH_MODEL, opt.stream), path: '/v1/chat/completions', name: 'chat' };
const kind = `${opt.stream ? 'streaming ' : ''}${name}`;
async function load(n: number): Promise<void> {
  let left = n;
  let failed = 0;
  const worker = async () => {
    while (left-- > 0) {
      const r = await pool.request({
        method: 'POST',
        path,
        headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
        body,
      });
      await r.body.text();
      if (r.statusCode !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  if (failed > 0) throw new Error(`${failed} of ${n} requests failed`);
}

function control(on: boolean): void {
  const r = spawnSync('callgrind_control', ['-i', on ? 'on' : 'off', String(target.pid)]);
  if (r.status !== 0) throw new Error(`callgrind_control failed: ${r.stderr.toString()}`);
}

try {
  await ready();
  await load(WARMUP); // the JIT's tiers, the pools' connections, the young generation's size
  control(true);
  await load(N);
  control(false);
} finally {
  target.kill('SIGTERM');
  await new Promise((r) => target.once('exit', r));
  await upstream.stop();
  await pool.close();
}
const totals = /\ntotals: (\d+)/.exec(readFileSync(out, 'utf8'));
if (!totals) throw new Error('callgrind wrote no totals');
console.log(`${label}: ${(Number(totals[1]) / N / 1000).toFixed(1)} k instructions per request (${N} ${kind} requests at c=${CONCURRENCY} after ${WARMUP})`);
// The by-function summary reads the count's output and V8's perf map; both go, whatever happens.
try {
  if (byFunction) {
    const perfMap = `/tmp/perf-${target.pid}.map`; // valgrind runs node in its own process: the same pid
    try {
      const annotate = spawnSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', out], { maxBuffer: 256 * 1024 * 1024 });
      if (annotate.status !== 0) throw new Error(`callgrind_annotate failed: ${annotate.stderr.toString()}`);
      const summary = summarizeInstructions(annotate.stdout.toString(), readFileSync(perfMap, 'utf8'), N, Number(opt.top));
      const table = (title: string, rows: InstructionRow[]) =>
        [
          `| ${title} | k instructions per request | % |`,
          '|---|---:|---:|',
          ...rows.map((r) => `| ${r.name.replaceAll('|', '\\|')} | ${r.kPerRequest.toFixed(2)} | ${r.percent.toFixed(1)} |`),
        ].join('\n');
      console.log(`\n${table('part', summary.parts)}\n\n${table('function (self)', summary.functions)}`);
    } finally {
      rmSync(perfMap, { force: true });
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
