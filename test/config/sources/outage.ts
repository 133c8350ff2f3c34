// An API-server outage on the fake API server, and a change to every kind made at its end, timed until the
// Kubernetes source delivers it: shared by the outage test and `npm run bench:outage`.
import { secretValue, type Secret } from '../../../src/compile/resources.js';
import type { ConfigSnapshot } from '../../../src/sources/source.js';
import type { FakeApiServer } from '../../fake-apiserver/server.js';
import type { KubeObj } from '../../fake-apiserver/store.js';
import { contractObjects, find, type SnapshotRecorder } from '../source-contract.js';

/** 'refused': nothing listens on the port (the API server is down); '503': it answers every request with 503. */
export type Outage = 'refused' | '503';

export async function goDown(api: FakeApiServer, how: Outage): Promise<void> {
  if (how === 'refused') return api.setUnreachable(true, 'refuse');
  api.failRequests({}, 503, Infinity);
  api.dropWatches();
}

export async function comeBack(api: FakeApiServer, how: Outage): Promise<void> {
  if (how === 'refused') return api.setUnreachable(false);
  api.clearFailures();
}

/** One object of each kind the source watches (a route, a group, a labelled Secret, a token using both). */
export function applyEveryKind(api: FakeApiServer, namespace: string): void {
  const o = contractObjects(namespace);
  for (const x of [o.route('r', 'm1'), o.group('g', ['m1']), o.secret('s', 'v1'), o.token('t', 'g', 's')]) api.apply(x as KubeObj);
}

/**
 * Changes each object of applyEveryKind now, and resolves with the milliseconds until the source delivered each
 * change, by kind.
 */
export async function changeEveryKind(api: FakeApiServer, rec: SnapshotRecorder, namespace: string, timeoutMs: number): Promise<Record<string, number>> {
  const o = contractObjects(namespace);
  const start = performance.now();
  for (const x of [o.route('r', 'm2'), o.group('g', ['m2']), o.secret('s', 'v2'), o.token('t', 'g2', 's')]) api.apply(x as KubeObj);
  const seen: Record<string, number> = {};
  const stamp = (kind: string, ok: boolean) => {
    if (ok) seen[kind] ??= Math.round(performance.now() - start);
    return ok;
  };
  const spec = (s: ConfigSnapshot, kind: string, name: string) => (find(s, kind, name, namespace) as { spec?: Record<string, any> } | undefined)?.spec;
  await rec.waitFor(
    (s) =>
      [
        stamp('ModelRoute', spec(s, 'ModelRoute', 'r')?.model === 'm2'),
        stamp('Group', spec(s, 'Group', 'g')?.models?.[0] === 'm2'),
        stamp('Secret', secretValue(find(s, 'Secret', 's', namespace) as unknown as Secret, 'token') === 'v2'),
        stamp('GatewayToken', spec(s, 'GatewayToken', 't')?.group === 'g2'),
      ].every(Boolean),
    timeoutMs,
    'a change to every kind',
  );
  return seen;
}
