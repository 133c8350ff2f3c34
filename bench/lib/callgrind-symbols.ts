// Names the instructions of a callgrind count: V8's builtins, runtime and compilers are symbols of the node binary,
// but the JIT's code is anonymous to valgrind. Run with `--perf-basic-prof`, V8 writes each code object's address
// range and name to /tmp/perf-PID.map; this puts those names on callgrind_annotate's addresses and sums
// instructions per function and per part (a package, the gateway's folders, node's JS, V8's parts). Pure.
import { packageOf } from './profile.js';

interface MapEntry {
  readonly start: number;
  readonly end: number;
  readonly name: string;
}

export interface InstructionRow {
  readonly name: string;
  /** Thousands of instructions per request. */
  readonly kPerRequest: number;
  readonly percent: number;
}

export interface InstructionSummary {
  readonly parts: InstructionRow[];
  readonly functions: InstructionRow[];
}

/** The entries of a perf map (`<hex start> <hex size> <name>` per line), sorted for lookup. */
export function parsePerfMap(text: string): MapEntry[] {
  const entries: MapEntry[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.+)$/.exec(line);
    if (!m) continue;
    const start = Number.parseInt(m[1]!, 16);
    entries.push({ start, end: start + Number.parseInt(m[2]!, 16), name: m[3]! });
  }
  return entries.sort((a, b) => a.start - b.start);
}

function lookup(entries: readonly MapEntry[], address: number): string | undefined {
  let lo = 0;
  let hi = entries.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (entries[mid]!.start <= address) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  const e = found >= 0 ? entries[found] : undefined;
  return e && address < e.end ? e.name : undefined;
}

/** The part a symbol belongs to: JIT code by its script's package, native code by what it is. */
export function partOf(symbol: string): string {
  // V8 names JIT code `JS:<tier>name url:line:column` (tiers: ~ interpreted, ^ baseline, + Maglev, * TurboFan).
  const js = /^JS:\S*?(\S*) (\S+?)(?::\d+:\d+)?$/.exec(symbol);
  if (js) return packageOf(js[2]!.startsWith('/') ? `file://${js[2]}` : js[2]!, js[1]!).replace(/^node:.*/, 'node (JS)');
  if (symbol.startsWith('RegExp')) return 'regular expressions';
  if (symbol.startsWith('wasm')) return 'WebAssembly (undici llhttp)';
  if (/compiler::|maglev::|turboshaft::|baseline::|Deoptimizer|OptimizedCompilationJob/.test(symbol)) return 'V8 compilers';
  if (/Heap::|Scaveng|Marking|Sweeper|Evacuat|MemoryAllocator|MarkCompact|GCTracer/.test(symbol)) return 'V8 garbage collector';
  if (symbol.startsWith('Builtins_')) return 'V8 builtins';
  if (symbol.includes('v8::')) return 'V8 runtime';
  if (/^(node::|uv_|uv__|llhttp|simdutf|nbytes|ncrypto|ada::)/.test(symbol)) return 'node (native)';
  if (/libc|malloc|mem(cpy|move|set|cmp)|^str/.test(symbol)) return 'libc';
  return 'other';
}

/**
 * Instructions per function and per part, from `callgrind_annotate --inclusive=no` output (self counts) and the
 * process's perf map, divided over `requests`.
 */
export function summarizeInstructions(annotate: string, perfMap: string, requests: number, top = 30): InstructionSummary {
  const entries = parsePerfMap(perfMap);
  let total = 0;
  const byFunction = new Map<string, number>();
  for (const line of annotate.split('\n')) {
    const m = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.+?)(?: \[[^\]]*\])?$/.exec(line);
    if (!m) continue;
    const count = Number(m[1]!.replaceAll(',', ''));
    const raw = m[2]!;
    if (raw.startsWith('PROGRAM TOTALS')) {
      total = count;
      continue;
    }
    const address = /^\?\?\?:0x([0-9a-f]+)$/.exec(raw);
    const name = address ? (lookup(entries, Number.parseInt(address[1]!, 16)) ?? 'JIT code without a name') : raw.replace(/^\?\?\?:/, '');
    byFunction.set(name, (byFunction.get(name) ?? 0) + count);
  }
  const byPart = new Map<string, number>();
  for (const [name, count] of byFunction) {
    const part = partOf(name);
    byPart.set(part, (byPart.get(part) ?? 0) + count);
  }
  const rows = (m: Map<string, number>, n: number): InstructionRow[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, count]) => ({ name, kPerRequest: count / requests / 1000, percent: total > 0 ? (100 * count) / total : 0 }));
  return { parts: rows(byPart, byPart.size), functions: rows(byFunction, top) };
}
