// Where the gateway's heap allocations per request come from: V8's sampling heap profiler over a fixed load (chat,
// or streaming chat, at c=32, the benchmark's configuration and the image's flags), summed by package and by
// function. `npm run bench -- --alloc` gives the total the targets are held to; this says where it goes, for
// finding what to cut (bench/results/performance-history.md, "Allocations per request").
//
//   npm run build && npm run bench:heap [-- --stream] [--no-inline] [--callers fnA,fnB] [--cli path/to/cli.js]
//
// V8 charges an allocation to the function whose frame is on top, and code it inlined has no frame of its own: with
// --no-inline, the gateway runs with V8's inlining off, so that each allocation is charged to the function that
// makes it (the total is then higher than in production, and not the figure to quote).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { closedLoop } from './lib/load.js';
import { startLoneGateway } from './lib/lone-gateway.js';
import { BENCH_KEY } from './lib/manifests.js';
import { ROOT } from './lib/targets.js';

const { values: opt } = parseArgs({
  options: {
    stream: { type: 'boolean', default: false },
    'no-inline': { type: 'boolean', default: false },
    callers: { type: 'string', default: '' },
    warmup: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '6' },
    top: { type: 'string', default: '40' },
    cli: { type: 'string' },
  },
});

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

// Its own temp dir: the gateway is told the profile's path before the gateway's dir exists.
const profileDir = mkdtempSync(join(tmpdir(), 'mg-heap-'));
const profileFile = join(profileDir, 'heap.json');
const lone = await startLoneGateway({
  nodeArgs: [...(opt['no-inline'] ? ['--no-turbo-inlining', '--no-maglev-inlining'] : []), '--import', join(ROOT, 'bench/lib/heap-sampler.mjs')],
  ...(opt.cli ? { cli: opt.cli } : {}),
  env: { MG_HEAP_PROFILE: profileFile },
});
const { gateway, workload, dir } = lone;
const body = opt.stream ? workload.stream : workload.chat;
const load = (seconds: number) => closedLoop({ url: gateway.url, body, key: BENCH_KEY, connections: 32, seconds, dir });

let requests: number;
let root: ProfileNode;
try {
  await load(Number(opt.warmup));
  process.kill(gateway.pid, 'SIGUSR2');
  await sleep(300);
  const r = await load(Number(opt.seconds));
  if (r.errors > 0) throw new Error(`${r.errors} errors under load`);
  requests = r.requests;
  process.kill(gateway.pid, 'SIGUSR2');
  for (let i = 0; i < 100; i++) {
    await sleep(100);
    try {
      root = (JSON.parse(readFileSync(profileFile, 'utf8')) as { head: ProfileNode }).head;
      break;
    } catch {
      // not written yet
    }
  }
} finally {
  await lone.stop();
  rmSync(profileDir, { recursive: true, force: true });
}
if (!root!) throw new Error('the gateway wrote no heap profile');

/** `function file:line`, with paths shortened to the package or the build's folder. */
const where = (n: ProfileNode) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/')}:${n.callFrame.lineNumber + 1}`;
const packageOf = (url: string) => {
  const short = url.replace(/^.*node_modules\//, 'npm:').replace(/^.*\/dist\//, 'dist/');
  if (short.startsWith('npm:')) return short.split('/')[0]!;
  if (short.startsWith('dist/')) return `dist/${short.split('/')[1]}`;
  if (short.startsWith('node:')) return `node:${short.slice(5).split('/')[0]}`;
  return short || '(V8 and native)';
};

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
const callers = new Map<string, number>();
const wanted = new Set(opt.callers.split(',').filter(Boolean));
let total = 0;
const walk = (n: ProfileNode, path: readonly ProfileNode[]) => {
  total += n.selfSize;
  const fn = where(n);
  const pkg = packageOf(n.callFrame.url);
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + n.selfSize);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + n.selfSize);
  if (n.selfSize > 0 && wanted.has(n.callFrame.functionName)) {
    const chain = [n, ...path.slice(-4).reverse()].map(where).join(' ← ');
    callers.set(chain, (callers.get(chain) ?? 0) + n.selfSize);
  }
  for (const c of n.children) walk(c, [...path, n]);
};
walk(root, []);

const kb = (bytes: number) => `${(bytes / requests / 1024).toFixed(2).padStart(6)} KB`;
const table = (title: string, m: Map<string, number>, top: number) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${kb(v)}  ${((v / total) * 100).toFixed(1).padStart(5)} %  ${k}`);
};
console.log(
  `${opt.stream ? 'streaming chat' : 'chat'} at c=32, ${requests} requests sampled: ${kb(total).trim()} per request${opt['no-inline'] ? ' (inlining off: attribution, not the figure)' : ''}`,
);
table('by package', byPackage, 15);
table('by function', byFunction, Number(opt.top));
if (wanted.size > 0) table('callers', callers, 25);
process.exit(0);
