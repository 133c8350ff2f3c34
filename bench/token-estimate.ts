// How close the usage estimate's token count (src/features/usage/token-count.ts) is to the exact o200k_base count
// (gpt-tokenizer, the encoding the gateway estimates for), on bench/token-corpus: real text from npm packages
// (READMEs, licences, code, JSON, READMEs in eight other languages). Each file is cut into answer-sized segments
// (about 1,000 characters, at line ends); the weights are fitted on the first half of each file's segments and
// judged on the second half, which the fit never saw. Also the CPU of each count per KB. Prints markdown.
//
//   node --import tsx bench/token-estimate.ts [--fit]   (--fit: print weights fitted on the first halves)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { approximateTokens, FEATURES, TokenTally, WEIGHTS } from '../src/features/usage/token-count.js';

const { values: opt } = parseArgs({ options: { fit: { type: 'boolean', default: false } } });
const DIR = join(import.meta.dirname, 'token-corpus');
const SEGMENT = 1_000;
const exact = (text: string): number => countTokens(text, { disallowedSpecial: new Set() });

interface Sample {
  readonly kind: string;
  readonly file: string;
  readonly text: string;
  readonly exact: number;
  readonly features: Float64Array;
}

function segments(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start + SEGMENT);
    end = end === -1 ? text.length : end + 1;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

function sample(kind: string, file: string, text: string): Sample {
  const t = new TokenTally();
  t.text(text);
  t.tokens(); // ends the last piece
  return { kind, file, text, exact: exact(text), features: t.features };
}

const files = readdirSync(DIR).filter((f) => !f.endsWith('SOURCES.md'));
const fitSet: Sample[] = [];
const heldOut: Sample[] = [];
const whole: Sample[] = [];
for (const file of files) {
  const text = readFileSync(join(DIR, file), 'utf8');
  const kind = file.slice(0, file.indexOf('-'));
  const segs = segments(text);
  const half = Math.ceil(segs.length / 2);
  for (const [i, s] of segs.entries()) (i < half ? fitSet : heldOut).push(sample(kind, file, s));
  whole.push(sample(kind, file, text));
}

if (opt.fit) {
  // Weighted least squares on relative error: minimise Σ ((w·x − y) / y)², i.e. rows x/y against 1.
  const a = Array.from({ length: FEATURES }, () => new Float64Array(FEATURES));
  const b = new Float64Array(FEATURES);
  for (const s of fitSet) {
    for (let i = 0; i < FEATURES; i++) {
      const xi = s.features[i]! / s.exact;
      b[i]! += xi;
      for (let j = 0; j < FEATURES; j++) a[i]![j]! += xi * (s.features[j]! / s.exact);
    }
  }
  // A little ridge toward 0, so a feature the corpus hardly holds gets no wild weight.
  for (let i = 0; i < FEATURES; i++) a[i]![i]! += 1e-3;
  console.log(
    `fitted weights: [${solve(a, b)
      .map((w) => Number(w.toFixed(3)))
      .join(', ')}]`,
  );
}

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
function table(title: string, samples: Sample[]): void {
  console.log(`\n${title}\n\n| kind | texts | exact tokens | mean error | worst error | bias |\n|---|---:|---:|---:|---:|---:|`);
  const kinds = [...new Set(samples.map((s) => s.kind)), 'all'];
  for (const kind of kinds) {
    const of = samples.filter((s) => kind === 'all' || s.kind === kind);
    const errs = of.map((s) => (estimate(s) - s.exact) / s.exact);
    const mean = errs.reduce((n, e) => n + Math.abs(e), 0) / errs.length;
    const worst = errs.reduce((w, e) => (Math.abs(e) > Math.abs(w) ? e : w), 0);
    const bias = errs.reduce((n, e) => n + e, 0) / errs.length;
    const tokens = of.reduce((n, s) => n + s.exact, 0);
    console.log(`| ${kind} | ${of.length} | ${tokens.toLocaleString('en-US')} | ${pct(mean)} | ${pct(worst)} | ${pct(bias)} |`);
  }
}
function estimate(s: Sample): number {
  let n = 0;
  for (let i = 0; i < FEATURES; i++) n += s.features[i]! * WEIGHTS[i]!;
  return Math.round(n);
}

table(`Segments of about ${SEGMENT} characters the fit did not see (second half of each file)`, heldOut);
table('Segments the fit saw (first half of each file)', fitSet);
table('Whole files', whole);

// CPU per KB of text, each count over every whole file, repeated.
function cpuPerKb(count: (t: string) => number): number {
  const texts = whole.map((s) => s.text);
  const kb = texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / 1024;
  for (const t of texts) count(t);
  let rounds = 0;
  const t0 = process.cpuUsage();
  const start = performance.now();
  while (performance.now() - start < 2_000) {
    for (const t of texts) count(t);
    rounds++;
  }
  const c = process.cpuUsage(t0);
  return (c.user + c.system) / rounds / kb;
}
console.log(`\nCPU per KB of text: approximation ${cpuPerKb(approximateTokens).toFixed(2)} µs, gpt-tokenizer o200k_base ${cpuPerKb(exact).toFixed(2)} µs`);

/** Solves a x = b by Gaussian elimination with partial pivoting. */
function solve(a: Float64Array[], b: Float64Array): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r;
    [m[c], m[p]] = [m[p]!, m[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const k = m[r]![c]! / m[c]![c]!;
      for (let j = c; j <= n; j++) m[r]![j]! -= k * m[c]![j]!;
    }
  }
  return m.map((row, i) => row[n]! / row[i]!);
}
