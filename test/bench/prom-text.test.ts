import { describe, expect, it } from 'vitest';
import { seriesSums } from '../../bench/lib/prom-text.js';

describe('seriesSums', () => {
  it('sums a series over its label sets, ignores others and comments, leaves out absent names', () => {
    const text = [
      '# HELP x_total help text 5',
      '# TYPE x_total counter',
      'x_total{a="1"} 2',
      'x_total{a="2",b="q r"} 3.5',
      'x_total_other 100',
      'process_resident_memory_bytes 1.5e+8',
    ].join('\n');
    expect(seriesSums(text, ['x_total', 'process_resident_memory_bytes', 'missing'])).toEqual({ x_total: 5.5, process_resident_memory_bytes: 1.5e8 });
  });
});
