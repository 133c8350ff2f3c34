// The import rules of src/ (.dependency-cruiser.cjs: which layer may import which, no file circles), and no circle
// between folders at any depth (dataplane/handlers ↔ dataplane/upstream would be one), read from
// dependency-cruiser's own analysis of the source.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const config = require('../../.dependency-cruiser.cjs');
let result: ICruiseResult;

beforeAll(async () => {
  const out = await cruise(['src'], { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } });
  result = out.output as ICruiseResult;
}, 60_000);

/** Folders of src/ (relative) that sit on a circle of folder imports, one list per strongly connected set. */
export function folderCycles(edges: ReadonlyArray<readonly [string, string]>): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const [a, b] of edges) {
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Set());
    if (!graph.has(b)) graph.set(b, new Set());
    graph.get(a)!.add(b);
  }
  // Tarjan's strongly connected components.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const set: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        set.push(w);
      } while (w !== v);
      if (set.length > 1) cycles.push(set.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('imports of src/', () => {
  it('follow the layer rules and form no file circle', () => {
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    const violations = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    expect(violations).toEqual([]);
  });

  it('form no circle between folders', () => {
    const edges = result.modules
      .filter((m) => m.source.startsWith('src/'))
      .flatMap((m) => m.dependencies.filter((d) => d.resolved.startsWith('src/')).map((d) => [dirname(m.source), dirname(d.resolved)] as const));
    expect(edges.length).toBeGreaterThan(100);
    expect(folderCycles(edges)).toEqual([]);
  });

  it('the circle finder finds circles', () => {
    expect(folderCycles([['a', 'b'], ['b', 'c'], ['c', 'a'], ['c', 'd']])).toEqual([['a', 'b', 'c']]);
    expect(folderCycles([['a', 'b'], ['b', 'c']])).toEqual([]);
  });
});
