// Instructions are attributed by this code, so its naming and sums are tested on a synthetic annotate output.
import { describe, expect, it } from 'vitest';
import { parsePerfMap, partOf, summarizeInstructions } from '../../bench/lib/callgrind-symbols.js';

describe('partOf', () => {
  it("names the JIT's code by its script and native code by what it is", () => {
    expect(partOf("JS:*'objectEnd file:///w/dist/features/usage/usage-object.js:101:19")).toBe('gateway features/usage');
    expect(partOf("JS:+'_resume /w/node_modules/undici/lib/dispatcher/client.js:663:18")).toBe('undici');
    expect(partOf('JS:* /w/node_modules/prom-client/lib/histogram.js:232:9')).toBe('prom-client');
    expect(partOf("JS:*'nextTick node:internal/process/task_queues:113:18")).toBe('node (JS)');
    expect(partOf('Builtins_LoadIC')).toBe('V8 builtins');
    expect(partOf('v8::internal::compiler::GraphReducer::ReduceTop()')).toBe('V8 compilers');
    expect(partOf('v8::internal::Heap::Scavenge()')).toBe('V8 garbage collector');
    expect(partOf('v8::internal::JSObject::MigrateToMap(...)')).toBe('V8 runtime');
    expect(partOf("RegExp.> src: '[^\\t]' flags: ''")).toBe('regular expressions');
    expect(partOf('llhttp__internal__run')).toBe('node (native)');
  });
});

describe('summarizeInstructions', () => {
  it("puts the perf map's names on anonymous addresses and sums per function and part, per request", () => {
    const map = [
      "1000 100 JS:*'forward file:///w/dist/dataplane/upstream/forward.js:16:30",
      "2000 80 JS:*'relay file:///w/dist/dataplane/upstream/forward.js:300:1",
    ].join('\n');
    expect(parsePerfMap(map).map((e) => [e.start, e.end])).toEqual([
      [0x1000, 0x1100],
      [0x2000, 0x2080],
    ]);
    const annotate = [
      '--------------------------------------------------------------------------------',
      '10,000,000 (100.0%)  PROGRAM TOTALS',
      '--------------------------------------------------------------------------------',
      '3,500,000 (35.00%)  ???:Builtins_LoadIC [/usr/local/bin/node]',
      '3,000,000 (30.00%)  ???:0x0000000000001040 [???]', // inside forward
      '1,000,000 (10.00%)  ???:0x00000000000010f0 [???]', // forward again: summed
      '1,500,000 (15.00%)  ???:0x0000000000002010 [???]', // relay
      '1,000,000 (10.00%)  ???:0x0000000000009000 [???]', // outside every entry
    ].join('\n');
    const s = summarizeInstructions(annotate, map, 1000);
    expect(s.functions).toEqual([
      { name: "JS:*'forward file:///w/dist/dataplane/upstream/forward.js:16:30", kPerRequest: 4, percent: 40 },
      { name: 'Builtins_LoadIC', kPerRequest: 3.5, percent: 35 },
      { name: "JS:*'relay file:///w/dist/dataplane/upstream/forward.js:300:1", kPerRequest: 1.5, percent: 15 },
      { name: 'JIT code without a name', kPerRequest: 1, percent: 10 },
    ]);
    expect(s.parts).toEqual([
      { name: 'gateway dataplane/upstream', kPerRequest: 5.5, percent: 55 },
      { name: 'V8 builtins', kPerRequest: 3.5, percent: 35 },
      { name: 'other', kPerRequest: 1, percent: 10 },
    ]);
  });
});
