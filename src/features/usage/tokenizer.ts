// The tokenizer behind usage estimates, in a worker thread: o200k_base (the GPT-4o / GPT-4.1 / GPT-5 encoding)
// from gpt-tokenizer. Loading its tables is a long parse and counting a large text takes milliseconds (far more for
// text built to be slow); on the thread that relays every request, the first would stall all of them once and the
// second at will. The worker starts with the first estimate, not at start-up, and stops after 20 s without one: its
// tables are a large share of the process's memory, and most gateways rarely estimate (upstreams report usage;
// estimates are for streams cut short and providers that omit it). Other model
// families tokenize differently, so counts for them are approximate; they are marked estimated either way.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// The worker's code. BPE time grows with the square of a word's length (a long run without spaces takes seconds),
// so text is counted in pieces of at most 1,024 characters, cut after a space where there is one: linear time, and
// close to the whole count for ordinary text. Text that spells a special token (<|endoftext|>) is counted as
// text, as upstreams do with user content.
const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const { countTokens } = require(workerData.module);
const options = { disallowedSpecial: new Set() };
const PIECE = 1024;
function count(text) {
  let n = 0;
  for (let i = 0; i < text.length; ) {
    let end = Math.min(text.length, i + PIECE);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > i) end = space + 1;
    }
    n += countTokens(text.slice(i, end), options);
    i = end;
  }
  return n;
}
parentPort.on('message', ({ id, texts }) => {
  try {
    parentPort.postMessage({ id, counts: texts.map(count) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message) });
  }
});
`;

interface Pending {
  readonly resolve: (counts: number[]) => void;
  readonly reject: (err: Error) => void;
}

/**
 * Idle this long, the worker exits and its memory (the tables) goes back; the next count restarts it, off the serving
 * thread. Short enough that a burst's estimates do not keep the tables for the minute after it.
 */
const IDLE_MS = 20_000;

/** One tokenizer worker, started on demand and stopped when idle. */
export class TokenizerWorker {
  readonly #idleMs: number;
  #worker: Worker | undefined;
  #nextId = 0;
  readonly #pending = new Map<number, Pending>();
  #idle: NodeJS.Timeout | undefined;

  constructor(idleMs = IDLE_MS) {
    this.#idleMs = idleMs;
  }

  /** True while a worker thread exists. */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  /** Tokens in each text. */
  count(texts: readonly string[]): Promise<number[]> {
    if (texts.length === 0) return Promise.resolve([]);
    clearTimeout(this.#idle);
    const w = this.#worker ?? this.#start();
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // While a count is awaited the worker keeps the process alive; idle, it does not.
      if (this.#pending.size === 1) w.ref();
      w.postMessage({ id, texts });
    });
  }

  #start(): Worker {
    const module = createRequire(import.meta.url).resolve('gpt-tokenizer/encoding/o200k_base');
    const w = new Worker(WORKER_CODE, { eval: true, workerData: { module } });
    w.on('message', (m: { id: number; counts?: number[]; error?: string }) => {
      const p = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (this.#pending.size === 0) this.#rest(w);
      if (m.counts) p?.resolve(m.counts);
      else p?.reject(new Error(m.error ?? 'tokenizer failed'));
    });
    // A worker that dies (or is stopped when idle) fails what it had; the next count starts a new one.
    const fail = (err: Error) => {
      if (this.#worker === w) this.#worker = undefined;
      for (const p of this.#pending.values()) p.reject(err);
      this.#pending.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`tokenizer worker exited with code ${code}`)));
    w.unref();
    this.#worker = w;
    return w;
  }

  /** Nothing awaited: let the process exit without it, and stop it if nothing comes for a while. */
  #rest(w: Worker): void {
    w.unref();
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      if (this.#worker === w && this.#pending.size === 0) {
        this.#worker = undefined;
        // Stopped on purpose, with nothing pending: its exit must not fail the counts of a worker started since.
        w.removeAllListeners('exit');
        w.removeAllListeners('error');
        void w.terminate();
      }
    }, this.#idleMs);
    this.#idle.unref();
  }
}

const shared = new TokenizerWorker();

/** Tokens in each text, counted in the process's tokenizer worker. */
export function countTokens(texts: readonly string[]): Promise<number[]> {
  return shared.count(texts);
}
