// Preloaded into a benchmark target with `node --import` when the benchmark runs with --alloc: counts the bytes V8
// allocates on the JavaScript heap between two SIGUSR2 signals, as the heap used before each garbage collection
// minus the heap used after the previous one (plus the growth since the last collection), from V8's own GC
// profiler. The second signal writes the total to alloc-<pid>.json in MG_ALLOC_PROBE_DIR. Buffers' bytes outside
// the heap are not counted.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';

const used = () => v8.getHeapStatistics().used_heap_size;
let profiler;
let startUsed = 0;
process.on('SIGUSR2', () => {
  if (!profiler) {
    profiler = new v8.GCProfiler();
    startUsed = used();
    profiler.start();
    return;
  }
  const { statistics } = profiler.stop();
  profiler = undefined;
  let allocated = 0;
  let after = startUsed;
  for (const s of statistics) {
    allocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - after);
    after = s.afterGC.heapStatistics.usedHeapSize;
  }
  allocated += Math.max(0, used() - after);
  const dir = process.env.MG_ALLOC_PROBE_DIR;
  if (dir) writeFileSync(join(dir, `alloc-${process.pid}.json`), JSON.stringify({ allocated, gcs: statistics.length }));
});
