// The profile summary is the evidence the README cites, so its attribution is tested on a synthetic profile.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageOf, profileDiffMarkdown, profileMarkdown, summarize } from '../../bench/lib/profile.js';

describe('packageOf', () => {
  it('names npm packages (scoped too), node internals, the gateway build and V8 pseudo-frames', () => {
    expect(packageOf('file:///r/node_modules/express/lib/router.js', 'handle')).toBe('express');
    expect(packageOf('file:///r/node_modules/@scope/pkg/x.js', 'f')).toBe('@scope/pkg');
    expect(packageOf('node:internal/http_server', 'f')).toBe('node:internal');
    expect(packageOf('file:///r/dist/proxy/forward.js', 'forward')).toBe('gateway proxy');
    expect(packageOf('', '(garbage collector)')).toBe('(garbage collector)');
    expect(packageOf('', 'writev')).toBe('native writev');
  });
});

describe('summarize', () => {
  it('ranks self time per function and package, leaving idle out', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-prof-'));
    const file = join(dir, 'p.cpuprofile');
    const frame = (id: number, functionName: string, url: string) => ({ id, callFrame: { functionName, url, lineNumber: 9 } });
    writeFileSync(
      file,
      JSON.stringify({
        nodes: [
          frame(1, '(idle)', ''),
          frame(2, 'handle', 'file:///r/node_modules/express/lib/router.js'),
          frame(3, 'forward', 'file:///r/dist/proxy/forward.js'),
        ],
        startTime: 0,
        // The long delta before a sample of `handle` (the process was descheduled) must not inflate it.
        samples: [1, 2, 3, 3, 3, 1],
        timeDeltas: [5000, 90000, 1000, 1000, 1000, 9000],
      }),
    );
    const s = summarize(file);
    expect(s.busySamples).toBe(4);
    expect(s.functions[0]).toEqual({ name: 'forward proxy/forward.js:10', percent: 75 });
    expect(s.packages).toEqual([
      { name: 'gateway proxy', percent: 75 },
      { name: 'express', percent: 25 },
    ]);
    expect(profileMarkdown(s, 'T')).toContain('| express | 25.0 |');
    // Samples before the cut-off (start-up) are left out: t = 5000, 95000 are before 95500.
    const late = summarize(file, 25, 95_500);
    expect(late.busySamples).toBe(3);
    expect(late.packages).toEqual([{ name: 'gateway proxy', percent: 100 }]);
    rmSync(dir, { recursive: true, force: true });
    // Per request against a "bare" profile that spent 1 sample on express over 2 requests: the gateway's
    // 4 samples over 4 requests are 750 µs/req in its own code, 250 in express.
    const diff = profileDiffMarkdown({ summary: s, requests: 4 }, { summary: { ...s, busySamples: 1, packageSamples: { express: 1 } }, requests: 2 });
    expect(diff).toContain('gateway 1000 µs, bare proxy 500 µs per request');
    expect(diff).toContain('| gateway proxy | 750.0 | 0.0 | 750.0 |');
    expect(diff).toContain('| express | 250.0 | 500.0 | -250.0 |');
    // A variant against the gateway names both in the title and the columns.
    const named = profileDiffMarkdown({ summary: s, requests: 4 }, { summary: s, requests: 8 }, 1000, 20, ['traced', 'gateway']);
    expect(named).toContain('## Sampled CPU per request: traced vs gateway (--profile)');
    expect(named).toContain('| package or part | traced µs/req | gateway µs/req | difference |');
    expect(named).toContain('| gateway proxy | 750.0 | 375.0 | 375.0 |');
  });
});
