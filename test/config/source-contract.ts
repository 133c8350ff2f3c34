// The behaviour every ConfigSource promises, as one suite run against each source (Kubernetes API, manifest
// directory). A source under test needs only a harness that can apply and delete plain manifest objects in
// whatever backs it: a fake API server, or YAML files in a temporary directory.
import { afterEach, describe, expect, it } from 'vitest';
import { secretValue, type RawObject, type Secret } from '../../src/compile/resources.js';
import type { ConfigSnapshot, ConfigSource } from '../../src/sources/source.js';

export interface SourceHarness {
  /** The source under test, not started yet, reading the backing store below. */
  readonly source: ConfigSource;
  /** Namespace the objects are created in (and that the source reads). */
  readonly namespace: string;
  /** Creates or replaces the object (kind/namespace/name identify it). Objects may be applied before start. */
  apply(object: RawObject): Promise<void>;
  /** Removes the object. */
  delete(object: RawObject): Promise<void>;
  /** Stops the source (if running) and cleans up the backing store. */
  teardown(): Promise<void>;
}

export interface SourceContractOptions {
  /** Longest a change may take to show up in a snapshot (ms). Default 5000. */
  readonly timeoutMs?: number;
}

/** Collects snapshots and waits for one that satisfies a predicate. */
export class SnapshotRecorder {
  readonly snapshots: ConfigSnapshot[] = [];
  #waiters: { test: (s: ConfigSnapshot) => boolean; resolve: (s: ConfigSnapshot) => void }[] = [];

  readonly onSnapshot = (s: ConfigSnapshot): void => {
    this.snapshots.push(s);
    this.#waiters = this.#waiters.filter((w) => (w.test(s) ? (w.resolve(s), false) : true));
  };

  get latest(): ConfigSnapshot | undefined {
    return this.snapshots.at(-1);
  }

  /** Resolves with the latest snapshot if it already matches, else with the next one that does. */
  waitFor(test: (s: ConfigSnapshot) => boolean, timeoutMs = 5000, what = 'a matching snapshot'): Promise<ConfigSnapshot> {
    const latest = this.latest;
    if (latest && test(latest)) return Promise.resolve(latest);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
      this.#waiters.push({ test, resolve: (s) => (clearTimeout(timer), resolve(s)) });
    });
  }
}

const GV = 'modelgateway.io/v1alpha1';

export function find(s: ConfigSnapshot, kind: string, name: string, namespace?: string): RawObject | undefined {
  return s.objects.find(
    (o) => o.object.kind === kind && o.object.metadata?.name === name && (namespace === undefined || (o.object.metadata?.namespace ?? 'default') === namespace),
  )?.object;
}

export function contractObjects(namespace: string) {
  const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace, ...extra });
  return {
    route: (name: string, model: string): RawObject => ({
      apiVersion: GV,
      kind: 'ModelRoute',
      metadata: meta(name),
      spec: { model, backends: [{ name: 'up', baseURL: 'http://127.0.0.1:9/v1' }] },
    }),
    group: (name: string, models: string[]): RawObject => ({ apiVersion: GV, kind: 'Group', metadata: meta(name), spec: { models } }),
    token: (name: string, group: string, secret: string): RawObject => ({
      apiVersion: GV,
      kind: 'GatewayToken',
      metadata: meta(name),
      spec: { group, secretRef: { name: secret, key: 'token' } },
    }),
    secret: (name: string, value: string): RawObject => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta(name, { labels: { 'modelgateway.io/secret': 'true' } }),
      type: 'Opaque',
      stringData: { token: value },
    }),
  };
}

const specOf = (o: RawObject | undefined) => (o as { spec?: Record<string, unknown> } | undefined)?.spec;
const tokenValue = (o: RawObject | undefined) => (o ? secretValue(o as unknown as Secret, 'token') : undefined);

/** Registers the shared contract tests for one source. */
export function describeSourceContract(name: string, setup: () => Promise<SourceHarness>, options: SourceContractOptions = {}): void {
  const timeout = options.timeoutMs ?? 5000;
  describe(`ConfigSource contract: ${name}`, () => {
    let h: SourceHarness | undefined;
    afterEach(async () => {
      await h?.teardown();
      h = undefined;
    });

    it('delivers a first snapshot with every object applied before start, before start() resolves', async () => {
      h = await setup();
      const o = contractObjects(h.namespace);
      await h.apply(o.secret('alice-key', 'sk-alice'));
      await h.apply(o.route('r1', 'model-one'));
      await h.apply(o.group('g1', ['model-*']));
      await h.apply(o.token('alice', 'g1', 'alice-key'));
      const rec = new SnapshotRecorder();
      await h.source.start(rec.onSnapshot);
      expect(rec.snapshots.length).toBeGreaterThanOrEqual(1);
      const first = rec.snapshots[0]!;
      expect(specOf(find(first, 'ModelRoute', 'r1', h.namespace))?.model).toBe('model-one');
      expect(specOf(find(first, 'Group', 'g1', h.namespace))?.models).toEqual(['model-*']);
      expect(specOf(find(first, 'GatewayToken', 'alice', h.namespace))?.group).toBe('g1');
      expect(tokenValue(find(first, 'Secret', 'alice-key', h.namespace))).toBe('sk-alice');
      for (const kind of ['ModelRoute', 'Group', 'GatewayToken', 'Secret']) {
        expect(find(first, kind, kind === 'ModelRoute' ? 'r1' : kind === 'Group' ? 'g1' : kind === 'Secret' ? 'alice-key' : 'alice')?.apiVersion).toBeTypeOf(
          'string',
        );
      }
    });

    it('delivers an empty first snapshot when there is nothing to read', async () => {
      h = await setup();
      const rec = new SnapshotRecorder();
      await h.source.start(rec.onSnapshot);
      expect(rec.snapshots[0]?.objects.filter((x) => x.object.kind !== 'Namespace')).toEqual([]);
    });

    type Objs = ReturnType<typeof contractObjects>;
    const cases: { kind: string; make: (o: Objs) => [RawObject, RawObject]; field: (x: RawObject | undefined) => unknown }[] = [
      { kind: 'ModelRoute', make: (o) => [o.route('r2', 'first'), o.route('r2', 'second')], field: (x) => specOf(x)?.model },
      { kind: 'Group', make: (o) => [o.group('g2', ['a']), o.group('g2', ['a', 'b'])], field: (x) => JSON.stringify(specOf(x)?.models) },
      { kind: 'GatewayToken', make: (o) => [o.token('t2', 'one', 's'), o.token('t2', 'two', 's')], field: (x) => specOf(x)?.group },
      { kind: 'Secret', make: (o) => [o.secret('s2', 'v1'), o.secret('s2', 'v2')], field: tokenValue },
    ];
    for (const c of cases) {
      it(`${c.kind}: create, update and delete each show up in a later, complete snapshot`, async () => {
        h = await setup();
        const o = contractObjects(h.namespace);
        const keep = o.group('unrelated', ['x']);
        await h.apply(keep);
        const rec = new SnapshotRecorder();
        await h.source.start(rec.onSnapshot);
        const [v1, v2] = c.make(o);
        const name = v1.metadata!.name as string;
        const ns = h.namespace;
        const want1 = c.field(v1);
        const want2 = c.field(v2);
        await h.apply(v1);
        await rec.waitFor((s) => c.field(find(s, c.kind, name, ns)) === want1, timeout, `${c.kind} created`);
        await h.apply(v2);
        const updated = await rec.waitFor((s) => c.field(find(s, c.kind, name, ns)) === want2, timeout, `${c.kind} updated`);
        // Snapshots are complete, not deltas: the untouched object is still there.
        expect(find(updated, 'Group', 'unrelated', ns)).toBeDefined();
        await h.delete(v2);
        const deleted = await rec.waitFor((s) => find(s, c.kind, name, ns) === undefined, timeout, `${c.kind} deleted`);
        expect(find(deleted, 'Group', 'unrelated', ns)).toBeDefined();
      });
    }

    it('a Secret rotation (new value under the same name) shows up', async () => {
      h = await setup();
      const o = contractObjects(h.namespace);
      await h.apply(o.secret('rotating', 'old-value'));
      const rec = new SnapshotRecorder();
      await h.source.start(rec.onSnapshot);
      expect(tokenValue(find(rec.latest!, 'Secret', 'rotating', h.namespace))).toBe('old-value');
      await h.apply(o.secret('rotating', 'new-value'));
      await rec.waitFor((s) => tokenValue(find(s, 'Secret', 'rotating', h!.namespace)) === 'new-value', timeout, 'rotated secret');
    });

    it('delivers nothing after stop() resolves', async () => {
      h = await setup();
      const o = contractObjects(h.namespace);
      const rec = new SnapshotRecorder();
      await h.source.start(rec.onSnapshot);
      await h.source.stop();
      const count = rec.snapshots.length;
      await h.apply(o.route('late', 'late'));
      await new Promise((r) => setTimeout(r, 400));
      expect(rec.snapshots.length).toBe(count);
    });
  });
}
