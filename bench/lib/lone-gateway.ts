// One gateway alone with its fake upstream, for the focused measurements (bench:pause, bench:heap, bench:gc): the
// production build (or another build's cli.js), the image's node flags plus the script's own, and the benchmark's
// configuration (10k tokens, 1k routes) in a temp dir that stop() removes with everything else.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeManifests } from './manifests.js';
import { GATEWAY_NODE_FLAGS, startGateway, startUpstream, type Target } from './targets.js';
import { type Workload, writeWorkload } from './workload.js';

export interface LoneGateway {
  readonly gateway: Target;
  readonly workload: Workload;
  /** The temp dir the load's scratch files go to. */
  readonly dir: string;
  stop(): Promise<void>;
}

export async function startLoneGateway(o: { nodeArgs?: readonly string[]; cli?: string; env?: Record<string, string> } = {}): Promise<LoneGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-lone-'));
  const workload = writeWorkload(dir);
  const upstream = await startUpstream(dir);
  writeManifests(join(dir, 'manifests'), `http://127.0.0.1:${upstream.port}/v1`);
  const gateway = await startGateway({
    configDir: join(dir, 'manifests'),
    dir,
    nodeArgs: [...GATEWAY_NODE_FLAGS, ...(o.nodeArgs ?? []), ...(o.cli ? [o.cli] : [])],
    ...(o.env ? { env: o.env } : {}),
  });
  return {
    gateway,
    workload,
    dir,
    async stop() {
      await gateway.proc.stop();
      await upstream.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
