// The embedded default config source: a directory of the same YAML manifests a user would `kubectl apply`
// (multi-document files, nested folders, Secrets included), hot-reloaded on change.
//
// Every change (or a periodic resync, as a safety net for missed watch events) triggers a debounced rescan.
// A rescan stats every manifest file and re-parses only those whose identity (inode, size, mtime, ctime)
// changed, so editors' rename-replace and ConfigMap-style `..data` symlink swaps are seen like plain writes.
// A file that fails to parse is logged with file and line and keeps contributing its last good objects, so
// one broken save never takes anything away from what is serving.
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Logger } from '../../observability/logger.js';
import { displayPath, listManifestFiles, readManifestFile } from '../manifest-files.js';
import type { SourcedObject } from '../resources.js';
import type { ConfigSnapshot, ConfigSource } from './source.js';

export interface FileSourceOptions {
  /** Directory holding the manifests (read recursively). */
  readonly dir: string;
  readonly logger: Logger;
  /** Quiet period after the last file event before rescanning (default 150 ms). */
  readonly debounceMs?: number;
  /** Longest a burst of events can postpone a rescan (default 1 s). */
  readonly maxDelayMs?: number;
  /** Periodic rescan, in case a watch event is missed (default 10 s; 0 disables). */
  readonly resyncMs?: number;
  /** Watch for changes (default true); false relies on the periodic rescan alone (e.g. file systems without inotify). */
  readonly watch?: boolean;
  /** How files are named in logs and object sources (default: relative to the working directory). */
  readonly display?: (file: string) => string;
}

interface FileEntry {
  /** Identity of the version last read: a changed value means the file must be read again. */
  signature: string;
  /** Objects of the last version that parsed cleanly (possibly older than the file on disk). */
  objects: SourcedObject[];
  /** True when the version on disk failed to parse and `objects` are from an older version. */
  broken: boolean;
}

export class FileSource implements ConfigSource {
  readonly #dir: string;
  readonly #logger: Logger;
  readonly #debounceMs: number;
  readonly #maxDelayMs: number;
  readonly #resyncMs: number;
  readonly #watch: boolean;
  readonly #display: (file: string) => string;
  readonly #files = new Map<string, FileEntry>();
  #onSnapshot: ((snapshot: ConfigSnapshot) => void) | undefined;
  #watcher: FSWatcher | undefined;
  #watchedIno: number | undefined;
  #debounce: NodeJS.Timeout | undefined;
  #firstEventAt = 0;
  #resync: NodeJS.Timeout | undefined;
  #queue: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: FileSourceOptions) {
    this.#dir = resolve(options.dir);
    this.#logger = options.logger.child({ component: 'file-source' });
    this.#debounceMs = options.debounceMs ?? 150;
    this.#maxDelayMs = options.maxDelayMs ?? 1_000;
    this.#resyncMs = options.resyncMs ?? 10_000;
    this.#watch = options.watch ?? true;
    this.#display = options.display ?? displayPath;
  }

  async start(onSnapshot: (snapshot: ConfigSnapshot) => void): Promise<void> {
    const info = await stat(this.#dir).catch(() => undefined);
    if (!info?.isDirectory()) throw new Error(`config directory ${this.#display(this.#dir)} does not exist or is not a directory`);
    this.#onSnapshot = onSnapshot;
    await this.#rescan(true);
    this.#startWatching();
    if (this.#resyncMs > 0) {
      this.#resync = setInterval(() => void this.#checkWatcher().then(() => this.#enqueue()), this.#resyncMs);
      this.#resync.unref();
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#watcher?.close();
    this.#watcher = undefined;
    clearTimeout(this.#debounce);
    clearInterval(this.#resync);
    await this.#queue;
  }

  /** Re-creates the watch when it died or the directory was replaced (deleted and created again, or re-mounted). */
  async #checkWatcher(): Promise<void> {
    if (this.#stopped || !this.#watch) return;
    const ino = (await stat(this.#dir).catch(() => undefined))?.ino;
    if (ino === undefined) return;
    if (this.#watcher && ino === this.#watchedIno) return;
    this.#watcher?.close();
    this.#watcher = undefined;
    this.#startWatching();
  }

  #startWatching(): void {
    if (this.#stopped || !this.#watch) return;
    try {
      // Recursive watching is native on macOS/Windows and emulated per directory on Linux (Node >= 20).
      const w = watch(this.#dir, { recursive: true, persistent: false }, () => this.#onEvent());
      w.on('error', (err) => {
        // E.g. the directory was deleted: keep serving the last good table; the resync re-creates the watch.
        this.#logger.warn({ dir: this.#display(this.#dir), error: err.message }, 'watching the config directory failed');
        w.close();
        if (this.#watcher === w) this.#watcher = undefined;
        this.#onEvent();
      });
      this.#watcher = w;
      void stat(this.#dir).then((info) => (this.#watchedIno = info.ino), () => undefined);
    } catch (err) {
      this.#logger.warn({ dir: this.#display(this.#dir), error: (err as Error).message }, 'cannot watch the config directory');
    }
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
    this.#queue = this.#queue.then(() => this.#rescan(false)).catch((err: unknown) => {
      this.#logger.error({ error: (err as Error).message }, 'config rescan failed; the last good config keeps serving');
    });
  }

  async #rescan(initial: boolean): Promise<void> {
    if (this.#stopped) return;
    let files: string[];
    try {
      files = await listManifestFiles([this.#dir]);
    } catch (err) {
      if (initial) throw err;
      this.#logger.error({ dir: this.#display(this.#dir), error: (err as Error).message }, 'cannot list the config directory; keeping the last good config');
      return;
    }
    let changed = initial;
    const present = new Set(files);
    for (const file of [...this.#files.keys()]) {
      if (!present.has(file)) {
        this.#files.delete(file);
        this.#logger.info({ file: this.#display(file) }, 'manifest file removed');
        changed = true;
      }
    }
    for (const file of files) {
      const info = await stat(file).catch(() => undefined);
      if (!info) continue; // vanished between listing and stat: the next event rescans
      const signature = `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
      const previous = this.#files.get(file);
      if (previous?.signature === signature) continue;
      const parsed = await readManifestFile(file, this.#display);
      if (parsed.errors.length === 0) {
        this.#files.set(file, { signature, objects: parsed.objects, broken: false });
        if (!initial) this.#logger.info({ file: this.#display(file), objects: parsed.objects.length }, previous ? 'manifest file changed' : 'manifest file added');
        changed = true;
        continue;
      }
      for (const e of parsed.errors) this.#logger.error({ file: e.file, line: e.line, error: e.message }, `cannot parse ${e.file}:${e.line}: ${e.message}`);
      const kept = previous?.objects ?? [];
      if (kept.length > 0) this.#logger.warn({ file: this.#display(file), objects: kept.length }, 'keeping the objects of the last version of this file that parsed');
      // Same objects as before, so nothing to deliver unless this file is new (it then contributes nothing).
      this.#files.set(file, { signature, objects: kept, broken: true });
    }
    if (!changed || this.#stopped) return;
    const objects = files.flatMap((f) => this.#files.get(f)?.objects ?? []);
    this.#onSnapshot?.({ objects });
  }

  /** Files whose current version does not parse (their last good objects are still delivered). For tests and diagnostics. */
  brokenFiles(): string[] {
    return [...this.#files].filter(([, e]) => e.broken).map(([f]) => this.#display(f));
  }
}
