// One non-recursive fs.watch per directory of the manifest tree, reconciled after every rescan.
//
// Why not fs.watch(dir, { recursive: true })? On Linux, Node emulates it in JavaScript and also watches each
// file's inode: replacing a file (`mv new.yaml gateway.yaml`, `rm && cp`, an editor's rename-replace) left it
// watching the dead inode, and after such a replacement no event arrived at all, so changes waited for the
// periodic resync. A directory's own watch reports every create, delete, rename and write
// of its entries whatever their inodes, so a watch per directory sees replacements like writes.
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Logger } from '../../observability/logger.js';

export class DirectoryWatchers {
  readonly #onEvent: () => void;
  readonly #logger: Logger;
  readonly #display: (path: string) => string;
  /**
   * By directory path. A directory deleted and created again needs a new watch: `ino` tells them apart unless the
   * file system reuses the inode number at once (it does), so a watch that reported its own deletion is `gone`.
   */
  readonly #watching = new Map<string, { ino: number; watcher: FSWatcher; gone: boolean }>();
  /** Directories that could not be watched, warned about once each (e.g. the inotify watch limit). */
  readonly #warned = new Set<string>();
  #closed = false;

  constructor(options: { onEvent: () => void; logger: Logger; display: (path: string) => string }) {
    this.#onEvent = options.onEvent;
    this.#logger = options.logger;
    this.#display = options.display;
  }

  /**
   * Watches exactly `dirs`. Resolves true when a watch was added: what changed in that directory between its
   * listing and now was not seen, so the caller rescans once more.
   */
  async update(dirs: readonly string[]): Promise<boolean> {
    if (this.#closed) return false;
    const wanted = new Set(dirs);
    for (const [dir, w] of this.#watching) {
      if (!wanted.has(dir)) this.#unwatch(dir, w.watcher);
    }
    let added = false;
    for (const dir of wanted) {
      const ino = (await stat(dir).catch(() => undefined))?.ino;
      if (this.#closed || ino === undefined) continue; // gone since the listing: its parent's watch reports it
      const current = this.#watching.get(dir);
      if (current?.ino === ino && !current.gone) continue;
      if (current) this.#unwatch(dir, current.watcher);
      if (this.#watch(dir, ino)) added = true;
    }
    return added;
  }

  close(): void {
    this.#closed = true;
    for (const [dir, w] of this.#watching) this.#unwatch(dir, w.watcher);
  }

  #watch(dir: string, ino: number): boolean {
    try {
      const self = basename(dir);
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        // Linux names the directory itself when it is deleted or moved away; the watch is then dead. (An entry
        // of the same name inside it reads the same: the cost is one watch re-created for nothing.)
        if (name === self) {
          const w = this.#watching.get(dir);
          if (w?.watcher === watcher) w.gone = true;
        }
        this.#onEvent();
      });
      watcher.on('error', (err) => {
        // E.g. the directory was deleted: the next rescan decides what to watch.
        this.#logger.debug({ dir: this.#display(dir), error: err.message }, 'a config directory watch ended');
        this.#unwatch(dir, watcher);
        this.#onEvent();
      });
      this.#watching.set(dir, { ino, watcher, gone: false });
      this.#warned.delete(dir);
      return true;
    } catch (err) {
      if (!this.#warned.has(dir)) {
        this.#warned.add(dir);
        this.#logger.warn(
          { dir: this.#display(dir), error: (err as Error).message },
          'cannot watch a config directory; its changes wait for the periodic rescan',
        );
      }
      return false;
    }
  }

  #unwatch(dir: string, watcher: FSWatcher): void {
    watcher.close();
    if (this.#watching.get(dir)?.watcher === watcher) this.#watching.delete(dir);
  }
}
