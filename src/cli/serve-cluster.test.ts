// The primary of `serve --workers` with a fake node:cluster, to give it an event order a real cluster produces only
// now and then: a worker's 'exit' while cluster.workers still lists it (its IPC 'disconnect' not seen yet).
import type { Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import { afterEach, expect, it, vi } from 'vitest';
import { waitUntil } from '../../test/support/wait.js';
import { type PrimaryCluster, runPrimary } from './serve-cluster.js';
import { parseServeArgs } from './serve-options.js';

class ExitBeforeDisconnect extends EventEmitter {
  workers: Record<number, Worker | undefined> = {};
  #ids = 0;
  fork = (): Worker => {
    const w = Object.assign(new EventEmitter(), {
      id: ++this.#ids,
      isConnected: () => w.id in this.workers,
      // A worker asked to stop exits at once; node removes it from cluster.workers only at its 'disconnect', later.
      process: { pid: 0, kill: () => void setImmediate(() => this.#exit(w)) },
    }) as unknown as Worker;
    this.workers[w.id] = w;
    return w;
  };
  #exit(w: Worker): void {
    this.emit('exit', w, 0, null);
    setImmediate(() => {
      delete this.workers[w.id];
      this.emit('disconnect', w);
    });
  }
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

it('exits once every worker has exited on SIGTERM, though cluster.workers still lists the last one at its exit', async () => {
  const parsed = parseServeArgs(['--host', '127.0.0.1', '--port', '0', '--metrics-port', '0', '--workers', '2', '--log-level', 'silent'], {});
  if (parsed.kind !== 'options') throw new Error(parsed.kind);
  const exitCodeBefore = process.exitCode;
  // The primary ends with process.exit a moment after its last log line: recorded here, not done.
  const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  const listenersBefore = { SIGTERM: process.listeners('SIGTERM'), SIGINT: process.listeners('SIGINT') };
  cleanups.push(() => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      for (const l of process.listeners(signal)) if (!listenersBefore[signal].includes(l)) process.off(signal, l);
    }
    exit.mockRestore();
    process.exitCode = exitCodeBefore;
  });
  const fake = new ExitBeforeDisconnect();
  expect(await runPrimary(parsed.options, false, fake as unknown as PrimaryCluster)).toBeUndefined();
  expect(Object.keys(fake.workers)).toHaveLength(2);

  const onSigterm = process.listeners('SIGTERM').find((l) => !listenersBefore.SIGTERM.includes(l))!;
  onSigterm('SIGTERM');
  await waitUntil(() => exit.mock.calls.length > 0, 10_000, 'the primary to exit');
  expect(exit).toHaveBeenCalledWith(0);
  expect(process.exitCode).toBe(0);
});
