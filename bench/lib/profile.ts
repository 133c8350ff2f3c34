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
  /** Sampled time that was not idle (ms). */
  busyMs: number;
  functions: { name: string; percent: number }[];
  packages: { name: string; percent: number }[];
}

/** Which package (or Node/V8 part) a frame's URL belongs to. */
export function packageOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return `gateway ${url.slice(dist + 6).split('/').slice(0, -1).join('/') || '.'}`;
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
    self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const cf = byId.get(id)!.callFrame;
    if (cf.functionName === '(idle)') continue;
    busy += us;
    const file = cf.url.split('/').slice(-2).join('/');
    const name = `${cf.functionName || '(anonymous)'}${file ? ` ${file}:${cf.lineNumber + 1}` : ''}`;
    fn.set(name, (fn.get(name) ?? 0) + us);
    const k = packageOf(cf.url, cf.functionName);
    pkg.set(k, (pkg.get(k) ?? 0) + us);
  }
  const rank = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, percent: Math.round((us / busy) * 1000) / 10 }));
  return { busyMs: Math.round(busy / 1000), functions: rank(fn, top), packages: rank(pkg, 15) };
}

export function profileMarkdown(s: ProfileSummary, title: string): string {
  const lines = [`## ${title}`, '', `${s.busyMs.toLocaleString('en-US')} ms of busy CPU sampled (idle excluded).`, ''];
  lines.push('| package or part | self % |', '|---|---:|');
  for (const p of s.packages) lines.push(`| ${p.name} | ${p.percent.toFixed(1)} |`);
  lines.push('', '| function | self % |', '|---|---:|');
  for (const f of s.functions) lines.push(`| \`${f.name.replace(/\|/g, '\\|')}\` | ${f.percent.toFixed(1)} |`);
  lines.push('');
  return lines.join('\n');
}
