// Reload chaos: every way an editor, a shell, `kubectl cp`, a ConfigMap mount or `mv` replaces a manifest file,
// each repeated while valid keys send requests through the gateway as `serve` runs it (startGateway with the
// file source, its real debounce and hold, no periodic resync: every reload comes from a watch event).
// Asserts: no request with a valid key fails (no 401, no 404, nothing else), each new version serves within a
// bound (the figures are printed), a broken save keeps the last good objects, and a route's `created` stays put.
import { copyFile, mkdir, mkdtemp, open, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSource } from '../../src/sources/file/file-source.js';
import { waitUntil } from '../support/wait.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { startServedGatewayWith } from './served-gateway.js';

const KEY = 'sk-chaos-client-key-0123456789';
const MODEL = 'chaos-model';
/** Each replacement's new version must serve within this (the target is "well under 2 s"; figures are printed). */
const BOUND_MS = 1_500;
const REPEATS = 3;

/** One self-contained gateway.yaml, as in a quick start; `marker` (the route's owned_by) tells versions apart. */
const manifest = (upstream: string, marker: string) => `apiVersion: v1
kind: Secret
metadata: {name: upstream}
stringData: {apiKey: sk-upstream-chaos-0123}
---
apiVersion: v1
kind: Secret
metadata: {name: client-key}
stringData:
  token: ${KEY}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: everyone}
spec:
  models: ["chaos-*"]
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: chaos}
spec:
  group: everyone
  secretRef: {name: client-key, key: token}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${MODEL}}
spec:
  ownedBy: ${marker}
  backends:
  - name: up
    baseURL: ${upstream}
    apiKeySecretRef: {name: upstream, key: apiKey}
`;
const extra = (marker: string) =>
  `apiVersion: modelgateway.io/v1alpha1\nkind: ModelRoute\nmetadata: {name: chaos-extra}\nspec:\n  ownedBy: ${marker}\n  backends: [{name: up, baseURL: "http://127.0.0.1:9/v1"}]\n`;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Requests with the valid key in a few loops: every answer that is not a success is a failure. */
class Traffic {
  readonly failures: { at: number; status: number | undefined; message: string }[] = [];
  /** When each owned_by value of chaos-model was first answered. */
  readonly firstSeen = new Map<string, number>();
  readonly created = new Set<number>();
  requests = 0;
  #stopped = false;
  #loops: Promise<void>[] = [];

  constructor(private readonly client: OpenAI) {}

  start(loops: number): void {
    this.#loops = Array.from({ length: loops }, () => this.#loop());
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#loops);
  }

  /** The owned_by that the gateway answers now (through a request of its own). */
  async current(model = MODEL): Promise<string | undefined> {
    return (await this.client.models.retrieve(model)).owned_by;
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      try {
        const models = await this.client.models.list();
        const route = models.data.find((m) => m.id === MODEL);
        if (!route) throw Object.assign(new Error(`${MODEL} missing from /v1/models`), { status: 200 });
        if (!this.firstSeen.has(route.owned_by)) this.firstSeen.set(route.owned_by, Date.now());
        this.created.add(route.created);
        const chat = await this.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
        if (chat.choices[0]?.message.content !== 'Hello from upstream') throw new Error('unexpected answer');
        this.requests += 2;
      } catch (err) {
        const e = err as { status?: number; message?: string };
        this.failures.push({ at: Date.now(), status: e.status, message: String(e.message).slice(0, 200) });
        await pause(5); // no hot loop while something is wrong
      }
    }
  }
}

/** A way of putting `text` into `file`; resolves with the time the complete new version was in place. */
type Replace = (file: string, text: string) => Promise<number>;

let dir: string;
let staging: string; // outside the config directory, on the same file system (for mv and cp)
let upstream: RecordingUpstream;
let gateway: Awaited<ReturnType<typeof startServedGatewayWith>>;
let traffic: Traffic;
let startedAt = 0;
let readyAt = 0;
let version = 0;
const latencies = new Map<string, number[]>();

const file = () => join(dir, 'gateway.yaml');
const next = () => `v${String(++version).padStart(3, '0')}`;

/** Replaces the file with a new version and measures until an answer shows it; fails on any failed request. */
async function replaceAndMeasure(style: string, replace: Replace): Promise<void> {
  const marker = next();
  const failuresBefore = traffic.failures.length;
  const done = await replace(file(), manifest(upstream.baseURL, marker));
  await waitUntil(() => traffic.firstSeen.has(marker), 5_000, `${style}: version ${marker} served`);
  const took = Math.max(0, traffic.firstSeen.get(marker)! - done);
  latencies.set(style, [...(latencies.get(style) ?? []), took]);
  expect(traffic.failures.slice(failuresBefore), style).toEqual([]);
  expect(took, `${style}: ${marker} took ${took} ms`).toBeLessThan(BOUND_MS);
}

/** Writes `text` through an open descriptor in `parts` pieces with `gapMs` between them (a slow writer). */
async function writeInParts(path: string, text: string, parts: number, gapMs: number): Promise<number> {
  const handle = await open(path, 'w'); // O_TRUNC: the file is empty from here until the first piece
  try {
    for (let i = 0; i < parts; i++) {
      if (gapMs > 0) await pause(gapMs);
      await handle.write(text.slice(Math.floor((text.length * i) / parts), Math.floor((text.length * (i + 1)) / parts)));
    }
  } finally {
    await handle.close();
  }
  return Date.now();
}

async function staged(text: string): Promise<string> {
  const path = join(staging, `new-${version}.yaml`);
  await writeFile(path, text);
  return path;
}

const STYLES: [string, Replace][] = [
  ['write in place (echo >)', async (f, t) => (await writeFile(f, t), Date.now())],
  // The issue's reproduction: `{ sleep .5; cat good.yaml; } > gateway.yaml` (the file is empty for 0.5 s).
  ['truncate, 500 ms pause, write', (f, t) => writeInParts(f, t, 1, 500)],
  ['write in 3 chunks, 300 ms apart', (f, t) => writeInParts(f, t, 3, 300)],
  ['cp over', async (f, t) => (await copyFile(await staged(t), f), Date.now())],
  ['mv over', async (f, t) => (await rename(await staged(t), f), Date.now())],
  [
    'rm && cp',
    async (f, t) => {
      const from = await staged(t);
      await rm(f);
      await copyFile(from, f);
      return Date.now();
    },
  ],
  [
    'rm, 300 ms pause, create again',
    async (f, t) => {
      await rm(f);
      await pause(300);
      await writeFile(f, t);
      return Date.now();
    },
  ],
  [
    'editor atomic save (temp file, rename)',
    async (f, t) => {
      await writeFile(join(dir, '.gateway.yaml.tmp-1234'), t);
      await rename(join(dir, '.gateway.yaml.tmp-1234'), f);
      return Date.now();
    },
  ],
  [
    'vim, backupcopy=no (rename to backup, write new, delete backup)',
    async (f, t) => {
      await writeFile(join(dir, '.gateway.yaml.swp'), 'swap');
      await writeFile(join(dir, '4913'), ''); // vim's probe for whether it may create files here
      await rm(join(dir, '4913'));
      await rename(f, `${f}~`);
      const done = await writeInParts(f, t, 1, 0);
      await rm(`${f}~`);
      await rm(join(dir, '.gateway.yaml.swp'));
      return done;
    },
  ],
  [
    'vim, backupcopy=yes (copy to backup, overwrite in place)',
    async (f, t) => {
      await copyFile(f, `${f}~`);
      const done = await writeInParts(f, t, 1, 0);
      await rm(`${f}~`);
      return done;
    },
  ],
  [
    'kubectl cp (tar: truncate, chunks, old mtime)',
    async (f, t) => {
      await writeInParts(f, t, 2, 100);
      await utimes(f, new Date('2024-01-01T00:00:00Z'), new Date('2024-01-01T00:00:00Z'));
      return Date.now();
    },
  ],
];

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  dir = await mkdtemp(join(tmpdir(), 'mg-reload-chaos-'));
  staging = await mkdtemp(join(tmpdir(), 'mg-reload-staging-'));
  await writeFile(file(), manifest(upstream.baseURL, next()));
  await writeFile(join(dir, 'extra.yaml'), extra('e0'));
  startedAt = Date.now();
  gateway = await startServedGatewayWith(({ logger }) => new FileSource({ dir, logger, resyncMs: 0 }));
  readyAt = Date.now();
  traffic = new Traffic(new OpenAI({ apiKey: KEY, baseURL: `${gateway.apiURL}/v1`, maxRetries: 0, timeout: 10_000 }));
  traffic.start(3);
  await waitUntil(() => traffic.firstSeen.has('v001'), 5_000, 'the first version served');
});

afterAll(async () => {
  await traffic?.stop();
  await gateway?.close({ timeoutMs: 1_000 });
  await upstream?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(staging, { recursive: true, force: true });
  const rows = [...latencies].map(([style, ms]) => `  ${style.padEnd(66)} ${ms.map((m) => `${m}`.padStart(5)).join(' ')} ms`);
  console.log(`reload latency per replacement style (end of the write to the first answer with the new version):\n${rows.join('\n')}`);
});

describe('reload chaos: replacing the manifest file while valid keys send requests', () => {
  for (const [style, replace] of STYLES) {
    it(`${style}, ${REPEATS} times: no failed request, each version serves within ${BOUND_MS} ms`, async () => {
      for (let i = 0; i < REPEATS; i++) await replaceAndMeasure(style, replace);
    });
  }

  it('a broken save (alias typo, unclosed bracket) keeps the last good objects through later reloads', async () => {
    const parseError = (l: string) => l.includes('"msg":"cannot parse ') && l.includes('gateway.yaml:');
    const failuresBefore = traffic.failures.length;
    const good = await traffic.current();
    const breakages = [(t: string) => t.replace(`token: ${KEY}`, 'token: *oops'), (t: string) => t.replace('models: ["chaos-*"]', 'models: ["chaos-*"')];
    for (const [i, breakIt] of breakages.entries()) {
      const errorsBefore = gateway.logLines.filter(parseError).length;
      await writeFile(file(), breakIt(manifest(upstream.baseURL, next())));
      await waitUntil(() => gateway.logLines.filter(parseError).length > errorsBefore, 5_000, 'the parse error logged');
      // A later reload (another file changes) must not drop the broken file's last good objects either.
      await writeFile(join(dir, 'extra.yaml'), extra(`e${i + 1}`));
      await waitUntil(async () => (await traffic.current('chaos-extra')) === `e${i + 1}`, 5_000, 'the other file reloaded');
      expect(await traffic.current()).toBe(good);
    }
    expect(gateway.logLines.some((l) => /gateway\.yaml:10: Unresolved alias/.test(l))).toBe(true);
    expect(traffic.failures.slice(failuresBefore)).toEqual([]);
    await replaceAndMeasure('good save after broken ones', async (f, t) => (await writeFile(f, t), Date.now()));
  });

  it('ConfigMap mount: the file becomes a ..data symlink, then ..data is swapped atomically', async () => {
    // kubelet's layout: gateway.yaml -> ..data/gateway.yaml, ..data -> ..<timestamp>/; an update writes a new
    // timestamped folder, points ..data_tmp at it, renames ..data_tmp over ..data and deletes the old folder.
    let generation = 0;
    let current: string | undefined;
    const swap: Replace = async (f, t) => {
      const folder = `..2026_01_01_00_00_0${++generation}`;
      await mkdir(join(dir, folder));
      await writeFile(join(dir, folder, 'gateway.yaml'), t);
      await symlink(folder, join(dir, '..data_tmp'));
      await rename(join(dir, '..data_tmp'), join(dir, '..data'));
      if (current) await rm(join(dir, current), { recursive: true });
      current = folder;
      if (generation === 1) {
        // The first time, the regular file is replaced by the symlink (as `ln -sfn` does: a rename over it).
        await symlink(join('..data', 'gateway.yaml'), join(dir, '.gateway.yaml.link'));
        await rename(join(dir, '.gateway.yaml.link'), f);
      }
      return Date.now();
    };
    for (let i = 0; i < REPEATS + 1; i++) await replaceAndMeasure('ConfigMap ..data symlink swap', swap);
  });

  it('kept one `created` for the route through every reload: when this gateway first saw it', () => {
    expect(traffic.requests).toBeGreaterThan(100);
    expect([...traffic.created]).toHaveLength(1);
    const [created] = traffic.created;
    expect(created).toBeGreaterThanOrEqual(Math.floor(startedAt / 1000));
    expect(created).toBeLessThanOrEqual(Math.floor(readyAt / 1000));
  });
});
