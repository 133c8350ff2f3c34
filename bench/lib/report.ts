// Turns the measurements of one run into figures (median over rounds), ratios, the target verdicts, and the
// markdown + JSON report.
import type { Measurement, StreamsRss } from './scenarios.js';
import type { MachineInfo } from './setup.js';

export interface Figure {
  id: string;
  label: string;
  unit: string;
  values: Record<string, number | undefined>;
  gatewayOverBare?: number;
  gatewayOverDirect?: number;
}

export interface Verdict {
  target: string;
  measured: string;
  met: boolean | undefined;
}

export interface RunData {
  machine: MachineInfo;
  mode: string;
  startedAt: string;
  finishedAt: string;
  loadAverageAtEnd: number[];
  targets: string[];
  skipped: Record<string, string>;
  rounds: number;
  scenarios: { id: string; title: string; seconds: number; connections: number; rate?: number }[];
  measurements: Measurement[];
  rssIdle: Record<string, number>;
  /** RSS afterLoadSeconds after the measured load ended. */
  rssAfterLoad?: Record<string, number>;
  afterLoadSeconds?: number;
  /** --alloc: JavaScript heap bytes allocated per chat request at c=32, per node target. */
  allocPerRequest?: Record<string, number>;
  rssStreams: StreamsRss[];
  notes: string[];
  gatewayLogLines?: number;
  gatewayMetrics?: Record<string, number>;
}

export function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1]! + s[m]!) / 2;
}

export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** The standard error of the mean of xs (0 for fewer than two). */
export function standardError(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1) / xs.length);
}

const MB = 1024 * 1024;

export function figures(d: RunData): Figure[] {
  const out: Figure[] = [];
  const pick = (sc: string, t: string, f: (m: Measurement) => number): number | undefined =>
    median(d.measurements.filter((m) => m.scenario === sc && m.target === t).map(f));
  const add = (id: string, label: string, unit: string, value: (t: string) => number | undefined, ratios = true): void => {
    const values = Object.fromEntries(d.targets.map((t) => [t, value(t)]));
    const g = values.gateway;
    out.push({
      id,
      label,
      unit,
      values,
      gatewayOverBare: ratios && g !== undefined && values.bare ? g / values.bare : undefined,
      gatewayOverDirect: ratios && g !== undefined && values.direct ? g / values.direct : undefined,
    });
  };
  // Added latency is taken round by round (target and direct measured minutes apart at most), then the median.
  const added = (sc: string, t: string, f: (m: Measurement) => number): number | undefined => {
    if (t === 'direct') return undefined;
    const diffs: number[] = [];
    for (const m of d.measurements.filter((x) => x.scenario === sc && x.target === t)) {
      const base = d.measurements.find((x) => x.scenario === sc && x.target === 'direct' && x.round === m.round);
      if (base) diffs.push(f(m) - f(base));
    }
    return median(diffs);
  };
  const ms = (m: Measurement): number => m.p50us / 1000;
  const ms99 = (m: Measurement): number => m.p99us / 1000;
  const has = (sc: string): boolean => d.measurements.some((m) => m.scenario === sc);
  if (has('chat-c1')) {
    add('chat-c1.p50', 'chat c=1: p50 latency', 'ms', (t) => pick('chat-c1', t, ms));
    add('chat-c1.p99', 'chat c=1: p99 latency', 'ms', (t) => pick('chat-c1', t, ms99));
    add('chat-c1.added-p50', 'chat c=1: p50 added over direct', 'ms', (t) => added('chat-c1', t, ms), false);
  }
  const names: Record<string, string> = {
    'chat-c32': 'chat c=32',
    'stream-c32': 'stream c=32',
    'stream-nousage-c32': 'stream without usage c=32',
    'messages-c32': 'messages (native) c=32',
  };
  for (const sc of Object.keys(names).filter(has)) {
    const name = names[sc]!;
    add(`${sc}.rps`, `${name}: throughput`, 'req/s', (t) => pick(sc, t, (m) => m.rps));
    add(`${sc}.p99`, `${name}: p99 latency`, 'ms', (t) => pick(sc, t, ms99));
    add(`${sc}.cpu`, `${name}: target CPU per request`, 'µs', (t) => pick(sc, t, (m) => m.cpuUsPerRequest));
  }
  if (has('rate-1000')) {
    add('rate-1000.rps', '1,000 req/s open loop: achieved', 'req/s', (t) => pick('rate-1000', t, (m) => m.rps));
    add('rate-1000.p50', '1,000 req/s: p50 latency', 'ms', (t) => pick('rate-1000', t, ms));
    add('rate-1000.p99', '1,000 req/s: p99 latency', 'ms', (t) => pick('rate-1000', t, ms99));
    add('rate-1000.added-p50', '1,000 req/s: p50 added over direct', 'ms', (t) => added('rate-1000', t, ms), false);
    add('rate-1000.added-p99', '1,000 req/s: p99 added over direct', 'ms', (t) => added('rate-1000', t, ms99), false);
  }
  for (const [sc, name] of [
    ['embed-100k', 'embeddings 100 KB c=8'],
    ['upload-5m', 'upload 5 MB c=4'],
  ] as const) {
    if (!has(sc)) continue;
    add(`${sc}.rps`, `${name}: throughput`, 'req/s', (t) => pick(sc, t, (m) => m.rps));
    add(`${sc}.p50`, `${name}: p50 latency`, 'ms', (t) => pick(sc, t, ms));
    add(`${sc}.p99`, `${name}: p99 latency`, 'ms', (t) => pick(sc, t, ms99));
  }
  add('rss.idle', 'RSS idle (after start-up)', 'MB', (t) => (d.rssIdle[t] !== undefined ? d.rssIdle[t]! / MB : undefined));
  add('alloc', 'chat c=32: JS heap allocated per request (--alloc)', 'KB', (t) =>
    d.allocPerRequest?.[t] !== undefined ? d.allocPerRequest[t]! / 1024 : undefined,
  );
  add('rss.afterLoad', `RSS ${d.afterLoadSeconds ?? 60} s after the load`, 'MB', (t) =>
    d.rssAfterLoad?.[t] !== undefined ? d.rssAfterLoad[t]! / MB : undefined,
  );
  const streams = d.rssStreams[0]?.streams ?? 1000;
  add('rss.streams', `RSS with ${streams} open streams`, 'MB', (t) => {
    const r = d.rssStreams.find((x) => x.target === t);
    return r ? r.rssBytes / MB : undefined;
  });
  return out;
}

export function verdicts(figs: Figure[], d: RunData): Verdict[] {
  const f = (id: string): Figure | undefined => figs.find((x) => x.id === id);
  const v = (target: string, value: number | undefined, fmt: (n: number) => string, ok: (n: number) => boolean): Verdict => ({
    target,
    measured: value === undefined ? 'not measured' : fmt(value),
    met: value === undefined ? undefined : ok(value),
  });
  const ratio = (n: number): string => `${n.toFixed(2)} × bare`;
  const msf = (n: number): string => `${n.toFixed(3)} ms`;
  const mb = (n: number): string => `${n.toFixed(0)} MB`;
  const streams = d.rssStreams.find((r) => r.target === 'gateway');
  const limited = (id: string): [number, number] | undefined => {
    const x = f(id)?.values;
    return x?.gateway !== undefined && x['gateway-limits'] !== undefined ? [x['gateway-limits'], x.gateway] : undefined;
  };
  const over = (id: string): number | undefined => {
    const p = limited(id);
    return p ? p[0] / p[1] : undefined;
  };
  // The Messages API passed through to a native backend, against chat in the same run and build.
  const messagesOverChat = (): number | undefined => {
    const m = f('messages-c32.cpu')?.values.gateway;
    const c = f('chat-c32.cpu')?.values.gateway;
    return m !== undefined && c ? m / c : undefined;
  };
  const more = (id: string): number | undefined => {
    const p = limited(id);
    return p ? p[0] - p[1] : undefined;
  };
  return [
    v('c=32 CPU per request ≤ 1.5 × bare (non-streaming)', f('chat-c32.cpu')?.gatewayOverBare, ratio, (n) => n <= 1.5),
    v('c=32 throughput ≥ 0.6 × bare (non-streaming)', f('chat-c32.rps')?.gatewayOverBare, ratio, (n) => n >= 0.6),
    v('c=32 throughput ≥ 0.8 × bare (streaming)', f('stream-c32.rps')?.gatewayOverBare, ratio, (n) => n >= 0.8),
    v(
      'Messages native passthrough: CPU per request ≤ 1.1 × chat (c=32)',
      messagesOverChat(),
      (n) => `${n.toFixed(2)} × chat`,
      (n) => n <= 1.1,
    ),
    v('c=1 p50 added ≤ 0.5 ms over direct', f('chat-c1.added-p50')?.values.gateway, msf, (n) => n <= 0.5),
    v('1,000 req/s p99 added ≤ 5 ms over direct', f('rate-1000.added-p99')?.values.gateway, msf, (n) => n <= 5),
    v('RSS idle ≤ 150 MB (10k tokens, 1k routes)', f('rss.idle')?.values.gateway, mb, (n) => n <= 150),
    v(
      'heap allocated per request ≤ 35 KB (chat, c=32)',
      f('alloc')?.values.gateway,
      (n) => `${n.toFixed(1)} KB`,
      (n) => n <= 35,
    ),
    // Limits on (Redis on loopback) against the same build with none, both measured in this run.
    v(
      'limits on: CPU per request ≤ 1.15 × limits off (chat, c=32)',
      over('chat-c32.cpu'),
      (n) => `${n.toFixed(2)} × off`,
      (n) => n <= 1.15,
    ),
    v('limits on: p50 ≤ 0.1 ms more than limits off (chat, c=1)', more('chat-c1.p50'), msf, (n) => n <= 0.1),
    v(
      'stream without upstream usage: CPU per request ≤ 1.3 × with usage (c=32, per round, median)',
      noUsageOverUsage(d),
      (n) => `${n.toFixed(2)} × with usage`,
      (n) => n <= 1.3,
    ),
    v(`RSS ${d.afterLoadSeconds ?? 60} s after the load ≤ 200 MB`, f('rss.afterLoad')?.values.gateway, mb, (n) => n <= 200),
    v(
      `RSS ≤ 300 MB with ${streams?.streams ?? 1000} open streams`,
      streams && streams.opened === streams.streams ? streams.rssBytes / MB : undefined,
      mb,
      (n) => n <= 300,
    ),
  ];
}

/** The gateway's CPU per request on a stream it must estimate over the same stream with usage, round by round. */
function noUsageOverUsage(d: RunData, target = 'gateway'): number | undefined {
  const ratios: number[] = [];
  for (const m of d.measurements.filter((x) => x.scenario === 'stream-nousage-c32' && x.target === target)) {
    const base = d.measurements.find((x) => x.scenario === 'stream-c32' && x.target === target && x.round === m.round);
    if (base?.cpuUsPerRequest) ratios.push(m.cpuUsPerRequest / base.cpuUsPerRequest);
  }
  return median(ratios);
}

function num(n: number | undefined, unit: string): string {
  if (n === undefined || Number.isNaN(n)) return '—';
  if (unit === 'req/s' || unit === 'MB' || unit === 'µs') return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1);
  return n.toFixed(3);
}

export function markdown(d: RunData, figs: Figure[], vs: Verdict[]): string {
  const m = d.machine;
  const lines: string[] = [];
  lines.push(`# model-gateway benchmark (${d.mode})`, '');
  lines.push(`Run ${d.startedAt} → ${d.finishedAt}, commit ${m.gitCommit ?? '?'}.`, '');
  lines.push(
    `Machine: ${m.nproc} × ${m.cpuModel}, ${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}, ${m.wrk ?? 'autocannon (no wrk)'}, ${m.nginx ?? 'no nginx'}.`,
    `Load average at start ${m.loadAverageAtStart.join(' / ')}, at end ${d.loadAverageAtEnd.join(' / ')} (other work on the machine shows up here).`,
    `Pinning: ${m.pinning}.`,
    `${d.rounds} round(s) per scenario, targets alternating (order rotated each round); each figure is the median over rounds.`,
    '',
  );
  lines.push(`| figure | ${d.targets.join(' | ')} | gateway / bare | gateway / direct |`);
  lines.push(`|---|${d.targets.map(() => '---:').join('|')}|---:|---:|`);
  for (const f of figs) {
    const r = (x: number | undefined): string => (x === undefined ? '—' : x.toFixed(2));
    lines.push(
      `| ${f.label} (${f.unit}) | ${d.targets.map((t) => num(f.values[t], f.unit)).join(' | ')} | ${r(f.gatewayOverBare)} | ${r(f.gatewayOverDirect)} |`,
    );
  }
  lines.push('', '## Targets', '', '| target | measured | met |', '|---|---:|---|');
  for (const v of vs) lines.push(`| ${v.target} | ${v.measured} | ${v.met === undefined ? 'not measured' : v.met ? 'yes' : '**no**'} |`);
  lines.push('', '## Scenarios', '');
  for (const s of d.scenarios) {
    lines.push(`- \`${s.id}\`: ${s.title}; ${s.seconds} s per target per round${s.rate ? `, ${s.connections} client connections` : ''}.`);
  }
  lines.push(
    '- RSS idle: the whole process tree right after start-up (gateway: config compiled). Open streams: held SSE streams',
    '  (one connection each) through the target to a fake upstream that keeps them open.',
  );
  const problems = d.measurements.filter((x) => x.problems.length > 0);
  lines.push('', '## Validity', '');
  if (problems.length === 0) lines.push('Every run: no errors, and the fake upstream received every completed request with its full body.');
  for (const p of problems) lines.push(`- ${p.scenario} / ${p.target} / round ${p.round}: ${p.problems.join('; ')}`);
  for (const r of d.rssStreams) if (r.opened !== r.streams) lines.push(`- open streams / ${r.target}: ${r.opened} of ${r.streams} opened, ${r.failed} failed`);
  if (d.gatewayLogLines !== undefined)
    lines.push(`- The gateway wrote ${d.gatewayLogLines.toLocaleString('en-US')} log lines during the run (logging was on).`);
  if (d.gatewayMetrics) for (const [k, v] of Object.entries(d.gatewayMetrics)) lines.push(`- gateway metric ${k}: ${v}`);
  for (const [t, why] of Object.entries(d.skipped)) lines.push(`- ${t} skipped: ${why}`);
  for (const n of d.notes) lines.push(`- ${n}`);
  lines.push('');
  return lines.join('\n');
}
