// Preloaded into the gateway by bench/heap.ts (`node --import`): the first SIGUSR2 starts V8's sampling heap
// profiler, the second writes the profile of everything allocated in between (collected or not) to the file named
// by MG_HEAP_PROFILE. Through the inspector in the same process, so nothing but the signal is needed from outside.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

let session;
process.on('SIGUSR2', async () => {
  if (!session) {
    session = new Session();
    session.connect();
    // Every 512 bytes on average; objects a GC has already collected count too: the point is what is allocated.
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    return;
  }
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  session = undefined;
  writeFileSync(process.env.MG_HEAP_PROFILE, JSON.stringify(profile));
});
