// The embedded default config source: a directory of the same YAML manifests a user would `kubectl apply`
// (multi-document files, nested folders, Secrets included), hot-reloaded on change.
//
// Every change (or a periodic resync, as a safety net for missed watch events) triggers a debounced rescan.
// A rescan stats every manifest file and re-parses only those whose identity (inode, size, mtime, ctime)
// changed. Each directory of the tree has its own watch (directory-watchers.ts), so editors' rename-replace,
// `mv` over a file, `rm && cp` and ConfigMap-style `..data` symlink swaps are seen like plain writes.
//
// A save never takes objects away while it may still be under way:
// - a file that fails to parse is logged with file and line and keeps contributing its last good objects;
// - a version that takes something away from the last good one (takes-away.ts: an object, a field, a list
//   item, the end of a value; an emptied file: `{ sleep 1; cat good.yaml; } > f.yaml` is empty for a
//   second), and a deleted file, are held: the last good objects serve until the file has stayed unchanged
//   for settleMs. A version that only adds or changes things applies at once.
// A file's versions are judged as a whole (per file, not per document), like the parse rule: half a file is
// worse than the last good version of it.
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Logger } from '../../observability/logger.js';
import { displayPath, listManifestTree, readManifestFile, type ManifestTree } from './manifest-files.js';
import type { SourcedObject } from '../../compile/resources.js';
import { DirectoryWatchers } from './directory-watchers.js';
import type { ConfigSnapshot, ConfigSource } from '../source.js';
import { identity, takesAway } from './takes-away.js';

export interface FileSourceOptions {
  /** Directory holding the manifests (read recursively). */
  readonly dir: string;
  readonly logger: Logger;
  /** Quiet period after the last file event before rescanning (default 150 ms). */
  readonly debounceMs?: number;
  /** Longest a burst of events can postpone a rescan (default 1 s). */
  readonly maxDelayMs?: number;
  /**
   * How long a file whose new version takes something away (emptied, cut short, deleted: takes-away.ts) must
   * stay unchanged before that version applies (default 2 s): longer than a slow writer's pauses.
   */
  readonly settleMs?: number;
  /** Periodic rescan, in case a watch event is missed (default 10 s; 0 disables). */
  readonly resyncMs?: number;
  /** Watch for changes (default true); false relies on the periodic rescan alone (e.g. file systems without inotify). */
  readonly watch?: boolean;
  /** How files are named in logs and object sources (default: relative to the working directory). */
  readonly display?: (file: string) => string;
}

interface FileEntry {
  /** Identity of the version last read ('' once the file is gone): a changed value means it must be read again. */
  signature: string;
  /** Objects this file contributes: those of its last good version (possibly older than the file on disk). */
  objects: SourcedObject[];
  /** True when the version on disk failed to parse and `objects` are from an older version. */
  broken: boolean;
  /** The version on disk takes objects away: it replaces `objects` once unchanged for settleMs after `since`. */
  held?: { since: number; objects: SourcedObject[] };
}

/** The signature of a file that is no longer there. */
const GONE = '';

export class FileSource implements ConfigSource {
  readonly #dir: string;
  readonly #logger: Logger;
  readonly #debounceMs: number;
  readonly #maxDelayMs: number;
  readonly #settleMs: number;
  readonly #resyncMs: number;
  readonly #watch: boolean;
  readonly #display: (file: string) => string;
  readonly #files = new Map<string, FileEntry>();
  /** When this process first saw each object (kind/namespace/name) still present: /v1/models' `created`. */
  #firstSeen = new Map<string, number>();
  #onSnapshot: ((snapshot: ConfigSnapshot) => void) | undefined;
  readonly #watchers: DirectoryWatchers;
  #debounce: NodeJS.Timeout | undefined;
  #firstEventAt = 0;
  #settle: { timer: NodeJS.Timeout; at: number } | undefined;
  #resync: NodeJS.Timeout | undefined;
  #queue: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: FileSourceOptions) {
    this.#dir = resolve(options.dir);
    this.#logger = options.logger.child({ component: 'file-source' });
    this.#debounceMs = options.debounceMs ?? 150;
    this.#maxDelayMs = options.maxDelayMs ?? 1_000;
    this.#settleMs = options.settleMs ?? 2_000;
    this.#resyncMs = options.resyncMs ?? 10_000;
    this.#watch = options.watch ?? true;
    this.#display = options.display ?? displayPath;
    this.#watchers = new DirectoryWatchers({ onEvent: () => this.#onEvent(), logger: this.#logger, display: this.#display });
  }

  async start(onSnapshot: (snapshot: ConfigSnapshot) => void): Promise<void> {
    const info = await stat(this.#dir).catch(() => undefined);
    if (!info?.isDirectory()) throw new Error(`config directory ${this.#display(this.#dir)} does not exist or is not a directory`);
    this.#onSnapshot = onSnapshot;
    await this.#rescan(true);
    if (this.#resyncMs > 0) {
      // Also re-creates the watch of a config directory that was deleted and created again (nothing watches its parent).
      this.#resync = setInterval(() => this.#enqueue(), this.#resyncMs);
      this.#resync.unref();
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#watchers.close();
    clearTimeout(this.#debounce);
    clearTimeout(this.#settle?.timer);
    clearInterval(this.#resync);
    await this.#queue;
  }

  /** Trailing debounce, bounded so a steady stream of events still reloads at least every maxDelayMs. */
  #onEvent(): void {
    if (this.#stopped) return;
    const now = Date.now();
    if (this.#debounce === undefined) this.#firstEventAt = now;
    clearTimeout(this.#debounce);
    const wait = Math.max(0, Math.min(this.#debounceMs, this.#firstEventAt + this.#maxDelayMs - now));
    this.#debounce = setTimeout(() => {
      this.#debounce = undefined;
      this.#enqueue();
    }, wait);
  }

  /** Rescans run one at a time, in order. */
  #enqueue(): void {
    this.#queue = this.#queue
      .then(() => this.#rescan(false))
      .catch((err: unknown) => {
        this.#logger.error({ error: (err as Error).message }, 'config rescan failed; the last good config keeps serving');
      });
  }

  async #rescan(initial: boolean): Promise<void> {
    if (this.#stopped) return;
    let tree: ManifestTree;
    try {
      tree = await listManifestTree([this.#dir]);
    } catch (err) {
      if (initial) throw err;
      this.#logger.error({ dir: this.#display(this.#dir), error: (err as Error).message }, 'cannot list the config directory; keeping the last good config');
      return;
    }
    const now = Date.now();
    let changed = initial;
    const present = new Set(tree.files);
    for (const file of [...this.#files.keys()]) {
      if (!present.has(file)) changed = (await this.#update(file, GONE, now, initial)) || changed;
    }
    for (const file of tree.files) {
      const info = await stat(file).catch(() => undefined);
      if (!info) continue; // vanished between listing and stat: the next event rescans
      changed = (await this.#update(file, `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`, now, initial)) || changed;
    }
    this.#scheduleSettle();
    if (this.#stopped) return;
    // A directory watched only now may have changed since it was listed: look once more.
    if (this.#watch && (await this.#watchers.update(tree.dirs))) this.#onEvent();
    if (!changed || this.#stopped) return;
    // Files in listing order, then files that are gone but whose removal is still held.
    const order = [...tree.files, ...[...this.#files.keys()].filter((f) => !present.has(f))];
    const objects = order.flatMap((f) => this.#files.get(f)?.objects ?? []);
    this.#stampFirstSeen(objects, now);
    this.#onSnapshot?.({ objects });
  }

  /** Brings one file's entry up to date with its version on disk; true when the objects it contributes changed. */
  async #update(file: string, signature: string, now: number, initial: boolean): Promise<boolean> {
    const entry = this.#files.get(file);
    const name = this.#display(file);
    if (entry?.signature === signature) {
      if (!entry.held || now - entry.held.since < this.#settleMs) return false;
      return this.#accept(file, signature, entry.held.objects, 'changed');
    }
    if (signature === GONE && !entry) return false;
    const parsed = signature === GONE ? { objects: [], errors: [] } : await readManifestFile(file, this.#display);
    if (parsed.errors.length > 0) {
      for (const e of parsed.errors) this.#logger.error({ file: e.file, line: e.line, error: e.message }, `cannot parse ${e.file}:${e.line}: ${e.message}`);
      const kept = entry?.objects ?? [];
      if (kept.length > 0) this.#logger.warn({ file: name, objects: kept.length }, 'keeping the objects of the last version of this file that parsed');
      // Same objects as before (a held version is dropped: it is not the newest any more), so nothing to deliver.
      this.#files.set(file, { signature, objects: kept, broken: true });
      return false;
    }
    if (!initial && entry && takesAway(entry.objects, parsed.objects)) {
      this.#logger.info(
        { file: name, objects: entry.objects.length, newObjects: parsed.objects.length, settleMs: this.#settleMs },
        signature === GONE
          ? 'manifest file removed; keeping its objects until it stays removed'
          : 'manifest file takes objects or fields away; keeping its last version until it stops changing',
      );
      this.#files.set(file, { signature, objects: entry.objects, broken: false, held: { since: now, objects: parsed.objects } });
      return false;
    }
    return this.#accept(file, signature, parsed.objects, initial ? undefined : entry ? 'changed' : 'added');
  }

  #accept(file: string, signature: string, objects: SourcedObject[], how: 'changed' | 'added' | undefined): true {
    if (signature === GONE) {
      this.#files.delete(file);
      this.#logger.info({ file: this.#display(file) }, 'manifest file removed');
      return true;
    }
    this.#files.set(file, { signature, objects, broken: false });
    if (how) this.#logger.info({ file: this.#display(file), objects: objects.length }, how === 'added' ? 'manifest file added' : 'manifest file changed');
    return true;
  }

  /** A rescan when the earliest held version has been unchanged for settleMs. */
  #scheduleSettle(): void {
    let due = Infinity;
    for (const e of this.#files.values()) if (e.held) due = Math.min(due, e.held.since + this.#settleMs);
    if (this.#settle?.at === due) return;
    clearTimeout(this.#settle?.timer);
    this.#settle = undefined;
    if (!Number.isFinite(due) || this.#stopped) return;
    const timer = setTimeout(
      () => {
        this.#settle = undefined;
        this.#enqueue();
      },
      Math.max(0, due - Date.now()),
    );
    timer.unref();
    this.#settle = { timer, at: due };
  }

  /**
   * Objects from files carry no creationTimestamp unless written: /v1/models then reports when this process
   * first saw the object, kept while it stays (edits and moves between files included) and forgotten once it goes.
   */
  #stampFirstSeen(objects: readonly SourcedObject[], now: number): void {
    const seen = new Map<string, number>();
    for (const o of objects) {
      const key = identity(o);
      const at = seen.get(key) ?? this.#firstSeen.get(key) ?? now;
      seen.set(key, at);
      o.seenAt = at;
    }
    this.#firstSeen = seen;
  }

  /** Files whose current version does not parse (their last good objects are still delivered). For tests and diagnostics. */
  brokenFiles(): string[] {
    return [...this.#files].filter(([, e]) => e.broken).map(([f]) => this.#display(f));
  }
}
