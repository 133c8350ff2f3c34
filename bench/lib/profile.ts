// Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time per function and per package, idle excluded,
// so the report can say where the gateway's CPU goes under the benchmark's load.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Samples that were not idle (one per sampling interval, 1 ms by default, of running JS or native code). */
  busySamples: number;
  functions: { name: string; percent: number }[];
  packages: { name: string; percent: number }[];
  /** Busy samples per package or part (all of them), for per-request comparisons between profiles. */
  packageSamples: Record<string, number>;
}

/** Which package (or Node/V8 part) a frame's URL belongs to. */
export function packageOf(url: string, functionName: string): string {
  // Native frames keep their name: writev, writeString and friends are where syscalls show up.
  if (url === '') return functionName.startsWith('(') ? functionName : `native ${functionName || '?'}`;
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const dist = url.indexOf('/dist/');
  if (dist >= 0)
    return `gateway ${
      url
        .slice(dist + 6)
        .split('/')
        .slice(0, -1)
        .join('/') || '.'
    }`;
  return url.split('/').slice(-2, -1)[0] ?? url;
}

/**
 * `fromUs`: leave out samples taken before this CLOCK_MONOTONIC time in µs (V8 stamps profiles with the same
 * clock as process.hrtime), so start-up (config parsing, module loading) does not drown the request path.
 */
export function summarize(file: string, top = 25, fromUs = 0): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < fromUs) continue;
    // Each sample counts once. Weighting by timeDeltas would charge whatever function happened to be sampled
    // after the process had been descheduled (common on a shared machine) with the time it was not running.
    self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + 1);
  }
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let busy = 0;
  for (const [id, n] of self) {
    const cf = byId.get(id)!.callFrame;
    if (cf.functionName === '(idle)') continue;
    busy += n;
    const file = cf.url.split('/').slice(-2).join('/');
    const name = `${cf.functionName || '(anonymous)'}${file ? ` ${file}:${cf.lineNumber + 1}` : ''}`;
    fn.set(name, (fn.get(name) ?? 0) + n);
    const k = packageOf(cf.url, cf.functionName);
    pkg.set(k, (pkg.get(k) ?? 0) + n);
  }
  const rank = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, n]) => ({ name, percent: Math.round((n / busy) * 1000) / 10 }));
  return { busySamples: busy, functions: rank(fn, top), packages: rank(pkg, 15), packageSamples: Object.fromEntries(pkg) };
}

export function profileMarkdown(s: ProfileSummary, title: string): string {
  const lines = [`## ${title}`, '', `${s.busySamples.toLocaleString('en-US')} busy samples (idle excluded), self time by sample count.`, ''];
  lines.push('| package or part | self % |', '|---|---:|');
  for (const p of s.packages) lines.push(`| ${p.name} | ${p.percent.toFixed(1)} |`);
  lines.push('', '| function | self % |', '|---|---:|');
  for (const f of s.functions) lines.push(`| \`${f.name.replace(/\|/g, '\\|')}\` | ${f.percent.toFixed(1)} |`);
  lines.push('');
  return lines.join('\n');
}

/**
 * Sampled CPU per request by package, gateway next to the bare proxy, largest difference first: where the
 * gateway's extra time per request goes. One sample ≈ one sampling interval (`--cpu-prof` default: 1 ms).
 */
export function profileDiffMarkdown(
  gateway: { summary: ProfileSummary; requests: number },
  bare: { summary: ProfileSummary; requests: number },
  intervalUs = 1000,
  top = 20,
  names: readonly [string, string] = ['gateway', 'bare proxy'],
): string {
  const per = (x: { summary: ProfileSummary; requests: number }, k: string): number =>
    ((x.summary.packageSamples[k] ?? 0) * intervalUs) / Math.max(1, x.requests);
  const keys = new Set([...Object.keys(gateway.summary.packageSamples), ...Object.keys(bare.summary.packageSamples)]);
  const rows = [...keys].map((k) => ({ k, g: per(gateway, k), b: per(bare, k) })).sort((x, y) => y.g - y.b - (x.g - x.b));
  const total = (x: { summary: ProfileSummary; requests: number }): number => (x.summary.busySamples * intervalUs) / Math.max(1, x.requests);
  const lines = [
    `## Sampled CPU per request: ${names[0]} vs ${names[1]} (--profile)`,
    '',
    `${names[0]} ${total(gateway).toFixed(0)} µs, ${names[1]} ${total(bare).toFixed(0)} µs per request (busy samples × interval ÷ requests in the measured rounds).`,
    '',
    `| package or part | ${names[0]} µs/req | ${names[1]} µs/req | difference |`,
    '|---|---:|---:|---:|',
  ];
  for (const r of rows.slice(0, top)) lines.push(`| ${r.k} | ${r.g.toFixed(1)} | ${r.b.toFixed(1)} | ${(r.g - r.b).toFixed(1)} |`);
  lines.push('');
  return lines.join('\n');
}
