// The built-in demo backend, started only when a route uses `demo://`: a pod whose configuration never names it
// has no demo server (no loopback listener, none of its modules' memory). The first snapshot that needs it waits
// for it to listen, because compile points `demo://` backends at its URL; that snapshot and any that arrive
// meanwhile are then applied in order. Every other snapshot is applied at once, as before.
import type { Logger } from '../observability/logger.js';
import type { ConfigPipeline } from '../runtime/pipeline.js';
import type { ConfigSnapshot } from '../sources/source.js';

/** What the demo backend gives the gateway: its base URL and a way to close it. */
export interface StartedDemo {
  readonly baseURL: string;
  close(): Promise<void>;
}

/** True when a ModelRoute of the snapshot has a `demo://` backend (objects are unvalidated here: read defensively). */
export function usesDemo(snapshot: ConfigSnapshot): boolean {
  for (const { object } of snapshot.objects) {
    if (object.kind !== 'ModelRoute') continue;
    const backends = (object['spec'] as { backends?: unknown } | undefined)?.backends;
    if (Array.isArray(backends) && backends.some((b) => (b as { baseURL?: unknown } | null)?.baseURL === 'demo://')) return true;
  }
  return false;
}

export class DemoOnDemand {
  readonly #pipeline: ConfigPipeline;
  readonly #start: (() => Promise<StartedDemo>) | undefined;
  readonly #logger: Logger;
  #demo: StartedDemo | undefined;
  #attempted = false;
  /** Snapshots waiting behind the demo's start, applied in order; undefined when none is waiting. */
  #queue: Promise<void> | undefined;
  #queued = 0;

  /** `start` undefined: the demo backend is off (demo:// backends then point at an address that fails). */
  constructor(pipeline: ConfigPipeline, start: (() => Promise<StartedDemo>) | undefined, logger: Logger) {
    this.#pipeline = pipeline;
    this.#start = start;
    this.#logger = logger;
  }

  /** The source's snapshot callback. */
  readonly apply = (snapshot: ConfigSnapshot): void => {
    if (this.#start && !this.#attempted && usesDemo(snapshot)) {
      this.#attempted = true;
      this.#queue = this.#startDemo(this.#start);
    }
    if (!this.#queue) {
      this.#pipeline.apply(snapshot);
      return;
    }
    this.#queued++;
    this.#queue = this.#queue.then(() => {
      try {
        this.#pipeline.apply(snapshot);
      } catch (err) {
        this.#logger.error({ error: (err as Error).message }, 'applying a config snapshot failed');
      }
      if (--this.#queued === 0) this.#queue = undefined; // back to applying at once
    });
  };

  /** Resolves once every snapshot delivered so far has been applied. */
  settled(): Promise<void> {
    return this.#queue ?? Promise.resolve();
  }

  get baseURL(): string | undefined {
    return this.#demo?.baseURL;
  }

  async close(): Promise<void> {
    await this.#queue?.catch(() => undefined);
    await this.#demo?.close();
  }

  async #startDemo(start: () => Promise<StartedDemo>): Promise<void> {
    try {
      this.#demo = await start();
      this.#pipeline.setDemoBaseURL(this.#demo.baseURL);
      this.#logger.info({ demo: this.#demo.baseURL }, 'demo backend started: a route uses demo://');
    } catch (err) {
      this.#logger.error({ error: (err as Error).message }, 'the demo backend did not start; demo:// routes will fail');
    }
  }
}
