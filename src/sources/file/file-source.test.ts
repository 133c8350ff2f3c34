import { appendFile, copyFile, mkdir, mkdtemp, rename, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureLogs, type LogCapture } from '../../../test/support/log-capture.js';
import { waitUntil } from '../../../test/support/wait.js';
import type { SourcedObject } from '../../compile/resources.js';
import { FileSource } from './file-source.js';
import type { ConfigSnapshot } from '../source.js';

const group = (name: string, models = '["m"]') => `apiVersion: modelgateway.io/v1alpha1\nkind: Group\nmetadata: {name: ${name}}\nspec: {models: ${models}}\n`;
const secret = (name: string) => `apiVersion: v1\nkind: Secret\nmetadata: {name: ${name}}\nstringData: {token: t-${name}}\n`;

/** The models of the snapshot's Groups, joined: tells versions of one object apart. */
const models = (s: ConfigSnapshot | undefined) => (s?.objects ?? []).flatMap((o) => (o.object.spec as { models?: string[] } | undefined)?.models ?? []).join();
const names = (s: ConfigSnapshot | undefined) =>
  (s?.objects ?? []).map((o: SourcedObject) => `${String(o.object.kind)}/${String(o.object.metadata?.name)}`).sort();

describe('FileSource', () => {
  let dir: string;
  let logs: LogCapture;
  let source: FileSource | undefined;
  let snapshots: ConfigSnapshot[];
  let deliveredAt: number[];
  const last = () => snapshots.at(-1);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mg-file-source-'));
    logs = captureLogs();
    snapshots = [];
    deliveredAt = [];
  });
  afterEach(async () => {
    await source?.stop();
    source = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  // resyncMs 0: every reload in these tests must come from a watch event, not from the periodic safety net.
  // settleMs 300: removals wait that long; the tests of the hold itself set their own.
  const start = async (extra: Partial<ConstructorParameters<typeof FileSource>[0]> = {}) => {
    source = new FileSource({ dir, logger: logs.logger, debounceMs: 60, settleMs: 300, resyncMs: 0, display: (f) => f.slice(dir.length + 1), ...extra });
    await source.start((s) => (snapshots.push(s), deliveredAt.push(Date.now())));
  };

  it('reads multi-document files in nested folders, with file and line, skipping dot-files and other extensions', async () => {
    await mkdir(join(dir, 'teams', 'a'), { recursive: true });
    await writeFile(join(dir, 'base.yaml'), `${group('g1')}---\n${secret('s1')}`);
    await writeFile(join(dir, 'teams', 'a', 'more.yml'), group('g2'));
    await writeFile(join(dir, 'teams', '.hidden.yaml'), group('hidden'));
    await writeFile(join(dir, 'notes.txt'), 'not a manifest');
    await start();
    expect(snapshots).toHaveLength(1);
    expect(names(last())).toEqual(['Group/g1', 'Group/g2', 'Secret/s1']);
    const s1 = last()!.objects.find((o) => o.object.metadata?.name === 's1');
    expect(s1?.source).toMatchObject({ file: 'base.yaml', line: 6 });
    expect(last()!.objects.find((o) => o.object.metadata?.name === 'g2')?.source?.file).toBe(join('teams', 'a', 'more.yml'));
  });

  it('rejects start when the directory does not exist', async () => {
    source = new FileSource({ dir: join(dir, 'missing'), logger: logs.logger });
    await expect(source.start(() => undefined)).rejects.toThrow(/does not exist/);
  });

  it('hot-reloads added, changed and deleted files, debouncing a burst of writes into one snapshot', async () => {
    await writeFile(join(dir, 'a.yaml'), group('a'));
    // A window wide enough that five writes fit inside it even on a loaded CI machine.
    await start({ debounceMs: 1_000, maxDelayMs: 5_000 });
    await writeFile(join(dir, 'b.yaml'), group('b'));
    await waitUntil(() => names(last()).includes('Group/b'));

    // A burst of writes inside the debounce window → a single reload with the final content.
    const before = snapshots.length;
    for (let i = 0; i < 5; i++) await writeFile(join(dir, 'b.yaml'), group('b', `["v${i}"]`));
    await waitUntil(() => JSON.stringify(last()?.objects).includes('v4'));
    await new Promise((r) => setTimeout(r, 1_200));
    expect(snapshots.length - before).toBe(1);

    await rm(join(dir, 'a.yaml'));
    await waitUntil(() => !names(last()).includes('Group/a'));
    expect(names(last())).toEqual(['Group/b']);
  });

  it('picks up files in a folder created after start', async () => {
    await start();
    await mkdir(join(dir, 'new', 'deeper'), { recursive: true });
    await writeFile(join(dir, 'new', 'deeper', 'x.yaml'), group('x'));
    await waitUntil(() => names(last()).includes('Group/x'));
  });

  it('logs a broken file with file and line, keeps other files, and keeps its last good objects', async () => {
    await writeFile(join(dir, 'good.yaml'), group('good'));
    await writeFile(join(dir, 'edit.yaml'), group('edited-v1'));
    await writeFile(join(dir, 'bad.yaml'), 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: [unclosed\n');
    await start();
    expect(names(last())).toEqual(['Group/edited-v1', 'Group/good']);
    const parseError = logs.records.find((r) => r.file === 'bad.yaml');
    expect(parseError).toMatchObject({ level: 50, file: 'bad.yaml' });
    expect(parseError!.line).toBeGreaterThanOrEqual(4);
    expect(String(parseError!.msg)).toContain('bad.yaml:');

    // Breaking a file that was good: it keeps contributing its last good objects; the rest is untouched.
    const count = snapshots.length;
    await writeFile(join(dir, 'edit.yaml'), 'apiVersion: modelgateway.io/v1alpha1\nkind: Group\n  bad: indentation: here\n');
    await waitUntil(() => logs.records.some((r) => r.file === 'edit.yaml' && r.level === 50));
    expect(logs.records.find((r) => r.file === 'edit.yaml' && r.level === 40)).toMatchObject({ objects: 1 });
    expect(source!.brokenFiles().sort()).toEqual(['bad.yaml', 'edit.yaml']);
    expect(names(last())).toEqual(['Group/edited-v1', 'Group/good']);
    expect(snapshots.length).toBe(count); // nothing changed for consumers: no new snapshot

    // Fixing it brings the new version in; the still-broken file stays out.
    await writeFile(join(dir, 'edit.yaml'), group('edited-v2'));
    await waitUntil(() => names(last()).includes('Group/edited-v2'));
    expect(names(last())).toEqual(['Group/edited-v2', 'Group/good']);
    expect(source!.brokenFiles()).toEqual(['bad.yaml']);
  });

  it('logs a YAML typo in a Secret file with file and line but without the value next to it', async () => {
    // Regression (issue 12, item 3): the parser's message quoted the line, upstream key included.
    await writeFile(join(dir, 'key.yaml'), 'apiVersion: v1\nkind: Secret\nmetadata: {name: k}\nstringData:\n  apiKey: >sk-file-W4nb8Hq2\n');
    await start();
    expect(logs.records.find((r) => r.file === 'key.yaml')).toMatchObject({ line: 5, error: 'Block scalar header includes extra characters' });
    expect(JSON.stringify(logs.records)).not.toMatch(/W4nb|8Hq2|sk-file/);
  });

  it("sees editors' write-to-temp-then-rename replacements", async () => {
    await writeFile(join(dir, 'r.yaml'), group('r', '["before"]'));
    await start();
    await writeFile(join(dir, '.r.yaml.swp'), group('r', '["after"]'));
    await rename(join(dir, '.r.yaml.swp'), join(dir, 'r.yaml'));
    await waitUntil(() => models(last()) === 'after');
    expect(names(last())).toEqual(['Group/r']);
  });

  it('follows a ConfigMap-style ..data symlink swap', async () => {
    // kubelet layout: name -> ..data/name, ..data -> ..<timestamp>/; an update swaps ..data atomically.
    await mkdir(join(dir, '..v1'));
    await writeFile(join(dir, '..v1', 'cm.yaml'), group('cm', '["v1"]'));
    await symlink('..v1', join(dir, '..data'));
    await symlink(join('..data', 'cm.yaml'), join(dir, 'cm.yaml'));
    await start();
    expect(models(last())).toEqual('v1');

    await mkdir(join(dir, '..v2'));
    await writeFile(join(dir, '..v2', 'cm.yaml'), group('cm', '["v2"]'));
    await symlink('..v2', join(dir, '..data_tmp'));
    await rename(join(dir, '..data_tmp'), join(dir, '..data'));
    await rm(join(dir, '..v1'), { recursive: true });
    await waitUntil(() => models(last()) === 'v2');
    expect(names(last())).toEqual(['Group/cm']);
  });

  it('rescans periodically as a safety net, and then delivers only when something changed', async () => {
    await writeFile(join(dir, 'a.yaml'), group('a'));
    await start({ watch: false, resyncMs: 100 });
    await new Promise((r) => setTimeout(r, 350));
    expect(snapshots).toHaveLength(1); // several resyncs, nothing changed
    await writeFile(join(dir, 'z.yaml'), group('z'));
    await waitUntil(() => names(last()).includes('Group/z'));
    expect(snapshots).toHaveLength(2);
  });

  it('keeps the last good config when the directory disappears, and recovers when it is back', async () => {
    await writeFile(join(dir, 'a.yaml'), group('a'));
    await start({ resyncMs: 100 });
    const count = snapshots.length;
    await rm(dir, { recursive: true });
    await waitUntil(() => logs.records.some((r) => String(r.msg).includes('cannot list the config directory')));
    expect(snapshots.length).toBe(count); // nothing was taken away
    await mkdir(dir);
    await writeFile(join(dir, 'b.yaml'), group('b'));
    await waitUntil(() => names(last()).join() === 'Group/b'); // a.yaml's objects go once it has stayed away for settleMs
  });

  it('still sees changes promptly after the directory is deleted and re-created', async () => {
    await writeFile(join(dir, 'a.yaml'), group('a'));
    const t0 = Date.now();
    await start({ resyncMs: 1_000 });
    await rm(dir, { recursive: true });
    await mkdir(dir);
    // The resync at ~1 s reads the new (empty) directory; the next one is only at ~2 s.
    await waitUntil(() => snapshots.length > 1 && names(last()).length === 0, 2_000);
    await writeFile(join(dir, 'c.yaml'), group('c'));
    await waitUntil(() => names(last()).includes('Group/c'), 2_000);
    expect(Date.now() - t0).toBeLessThan(1_900); // through a watch event, before the second resync
  });

  // Regression (issue 12, item 6): Node's recursive watch on Linux went silent after the first replacement of a
  // watched file, so every later change waited for the periodic resync (disabled here).
  for (const [style, replace] of [
    ['mv over the file', async (file: string, text: string) => (await writeFile(`${file}.new`, text), await rename(`${file}.new`, file))],
    [
      'rm && cp',
      async (file: string, text: string) => (await writeFile(join(dir, '..staged'), text), await rm(file), await copyFile(join(dir, '..staged'), file)),
    ],
  ] as const) {
    it(`sees every one of several replacements by ${style}, and writes after them`, async () => {
      const file = join(dir, 'g.yaml');
      await writeFile(file, group('g', '["v0"]'));
      await start();
      for (let i = 1; i <= 3; i++) {
        await replace(file, group('g', `["v${i}"]`));
        await waitUntil(() => models(last()) === `v${i}`, 3_000);
      }
      await writeFile(file, group('g', '["written"]'));
      await waitUntil(() => models(last()) === 'written', 3_000);
    });
  }

  it('sees files in a sub-folder that was deleted and created again', async () => {
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'g.yaml'), group('g', '["v1"]'));
    await start();
    await rm(join(dir, 'sub'), { recursive: true });
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'g.yaml'), group('g', '["v2"]'));
    await waitUntil(() => models(last()) === 'v2', 3_000);
    await writeFile(join(dir, 'sub', 'g.yaml'), group('g', '["v3"]'));
    await waitUntil(() => models(last()) === 'v3', 3_000);
  });

  // Regression (issue 12, item 2): `{ sleep .5; cat good.yaml; } > gateway.yaml` served an empty file for 0.5 s.
  describe('a file being written never serves fewer objects than its last good version', () => {
    const two = `${group('a', '["v1"]')}---\n${group('b', '["v1"]')}`;
    const held = () =>
      logs.records.filter(
        (r) => String(r.msg).startsWith('manifest file takes objects or fields away') || String(r.msg).startsWith('manifest file removed; keeping'),
      ).length;
    const fewest = () => Math.min(...snapshots.map((s) => s.objects.length));

    it('emptied, then written after a pause: the old objects serve until the new ones arrive', async () => {
      await writeFile(join(dir, 'f.yaml'), two);
      await start({ settleMs: 5_000 });
      await truncate(join(dir, 'f.yaml'), 0); // the shell's `>` before the slow writer writes
      await waitUntil(() => held() === 1 || fewest() < snapshots[0]!.objects.length); // the rescan saw the empty file
      await writeFile(join(dir, 'f.yaml'), two.replaceAll('v1', 'v2'));
      await waitUntil(() => models(last()) === 'v2,v2');
      expect(fewest()).toBe(2);
    });

    it('written in chunks with pauses: a prefix with fewer documents is held, the whole file applies at once', async () => {
      const three = `${two}---\n${group('c', '["v1"]')}`;
      await writeFile(join(dir, 'f.yaml'), three);
      await start({ settleMs: 5_000 });
      const next = three.replaceAll('v1', 'v2');
      const cut = next.indexOf('---', next.indexOf('---') + 3); // after the second document
      await writeFile(join(dir, 'f.yaml'), next.slice(0, cut));
      await waitUntil(() => held() === 1 || fewest() < snapshots[0]!.objects.length); // the rescan saw it
      const t = Date.now();
      await appendFile(join(dir, 'f.yaml'), next.slice(cut));
      await waitUntil(() => models(last()) === 'v2,v2,v2');
      expect(Date.now() - t).toBeLessThan(2_500); // the complete version did not wait for the hold
      expect(fewest()).toBe(3);
    });

    it('deleted and created again (rm, then cp after a pause): never served without its objects', async () => {
      await writeFile(join(dir, 'f.yaml'), two);
      await start({ settleMs: 5_000 });
      await rm(join(dir, 'f.yaml'));
      await waitUntil(() => held() === 1 || fewest() < snapshots[0]!.objects.length); // the rescan saw it
      await writeFile(join(dir, 'f.yaml'), two.replaceAll('v1', 'v2'));
      await waitUntil(() => models(last()) === 'v2,v2');
      expect(fewest()).toBe(2);
    });

    it('a file that stays emptied, shortened or deleted gives its objects up once unchanged for settleMs', async () => {
      await writeFile(join(dir, 'empty.yaml'), two);
      await writeFile(join(dir, 'short.yaml'), `${group('c')}---\n${group('d')}`);
      await writeFile(join(dir, 'gone.yaml'), group('e'));
      await start({ settleMs: 600 });
      const t = Date.now();
      await writeFile(join(dir, 'empty.yaml'), '# nothing here any more\n');
      await writeFile(join(dir, 'short.yaml'), group('c'));
      await rm(join(dir, 'gone.yaml'));
      await waitUntil(() => names(last()).join() === 'Group/c');
      const firstLoss = snapshots.findIndex((s) => s.objects.length < 5);
      expect(deliveredAt[firstLoss]! - t).toBeGreaterThanOrEqual(600); // nothing went before it settled
    });
  });

  // Issue 12, item 14: files rarely carry metadata.creationTimestamp; /v1/models' `created` is when the gateway first saw the object.
  it('stamps each object with when it was first seen, kept across edits and moves, renewed after it was gone', async () => {
    await writeFile(join(dir, 'a.yaml'), group('a', '["v1"]'));
    const t0 = Date.now();
    await start();
    const seen = (name: string) => last()?.objects.find((o) => o.object.metadata?.name === name)?.seenAt;
    const a = seen('a')!;
    expect(a).toBeGreaterThanOrEqual(t0);
    await writeFile(join(dir, 'a.yaml'), group('a', '["v2"]'));
    await writeFile(join(dir, 'b.yaml'), group('b'));
    await waitUntil(() => models(last()) === 'v2,m');
    expect(seen('a')).toBe(a);
    expect(seen('b')).toBeGreaterThan(a);
    await rename(join(dir, 'a.yaml'), join(dir, 'moved.yaml')); // the same object in another file
    await waitUntil(() => last()?.objects.some((o) => o.source?.file === 'moved.yaml'));
    expect(seen('a')).toBe(a);
    await rm(join(dir, 'moved.yaml'));
    await waitUntil(() => seen('a') === undefined);
    await writeFile(join(dir, 'a.yaml'), group('a'));
    await waitUntil(() => seen('a') !== undefined);
    expect(seen('a')).toBeGreaterThan(a);
  });

  it('delivers nothing after stop()', async () => {
    await writeFile(join(dir, 'a.yaml'), group('a'));
    await start();
    await source!.stop();
    const count = snapshots.length;
    await writeFile(join(dir, 'b.yaml'), group('b'));
    await new Promise((r) => setTimeout(r, 300));
    expect(snapshots.length).toBe(count);
  });
});
