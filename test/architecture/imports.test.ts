// The import rules of src/ (.dependency-cruiser.cjs: which layer may import which, no file circles), and no circle
// between folders at any depth (dataplane/handlers ↔ dataplane/upstream would be one), read from
// dependency-cruiser's own analysis of the source.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { beforeAll, describe, expect, it } from 'vitest';
import { folderCycles } from './folder-cycles.js';

const require = createRequire(import.meta.url);
const config = require('../../.dependency-cruiser.cjs');
let result: ICruiseResult;

beforeAll(async () => {
  const out = await cruise(['src'], { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } });
  result = out.output as ICruiseResult;
}, 60_000);

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
    expect(
      folderCycles([
        ['a', 'b'],
        ['b', 'c'],
        ['c', 'a'],
        ['c', 'd'],
      ]),
    ).toEqual([['a', 'b', 'c']]);
    expect(
      folderCycles([
        ['a', 'b'],
        ['b', 'c'],
      ]),
    ).toEqual([]);
  });
});
