// A gateway process serving a directory of manifests with its limits counted in a shared Redis, as one replica of a
// deployment runs: the tests that need several processes on one store start them here.
import { type CliRun, runCli } from '../support/spawn-cli.js';

export interface Replica {
  readonly run: CliRun;
  /** Base URLs of its API and metrics listeners. */
  readonly api: string;
  readonly metrics: string;
}

/** Started and listening (its config may still be loading); `storeTimeout` is --limits-store-timeout, e.g. `250ms`. */
export async function startReplica(o: { dir: string; redisUrl: string; storeTimeout: string; listeningWithinMs: number }): Promise<Replica> {
  const args = ['serve', '--config', o.dir, '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0'];
  const run = runCli([...args, '--redis-url', o.redisUrl, '--limits-store-timeout', o.storeTimeout]);
  const listening = await run.waitForLog((r) => r.msg === 'model-gateway listening', o.listeningWithinMs);
  return { run, api: String(listening['api']), metrics: String(listening['metrics']) };
}

/** SIGTERM to each, and wait until every one has exited. */
export async function stopReplicas(replicas: readonly { readonly run: CliRun }[]): Promise<void> {
  for (const r of replicas) r.run.child.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.run.exited));
}
