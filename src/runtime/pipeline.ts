// Source snapshots → pure compile → atomic table swap. The one place where config takes effect: it counts table
// versions, logs every object that is not Ready (reason, message, file:line), records how long compiles take,
// and tells listeners (e.g. the Kubernetes status writer) what each compile decided.
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { compile, type CompileOptions, type CompileResult } from '../compile/compile.js';
import { isReady, readinessCause, type ObjectStatus } from '../compile/conditions.js';
import { pipelineMetrics, type PipelineMetrics } from './pipeline-metrics.js';
import type { ConfigSnapshot } from '../sources/source.js';
import type { RoutingTable, TableHolder } from '../model/routing-table.js';

export interface ConfigPipelineOptions {
  readonly tables: TableHolder;
  readonly logger: Logger;
  /** Where compile durations and object counts are recorded; optional for unit tests. */
  readonly metrics?: Metrics;
  /** Where `demo://` backends point (the built-in demo upstream's loopback URL). */
  readonly demoBaseURL?: string;
  /** Clock for token expiry in statuses (tests inject one). */
  readonly now?: () => number;
}

export type CompileListener = (result: CompileResult, snapshot: ConfigSnapshot) => void;

export class ConfigPipeline {
  readonly #tables: TableHolder;
  readonly #logger: Logger;
  readonly #metrics: PipelineMetrics | undefined;
  #compileOptions: Omit<CompileOptions, 'version' | 'now'>;
  readonly #now: () => number;
  readonly #listeners = new Set<CompileListener>();
  #version = 0;
  #last: CompileResult | undefined;
  #snapshot: ConfigSnapshot | undefined;
  #expiry: NodeJS.Timeout | undefined;

  constructor(options: ConfigPipelineOptions) {
    this.#tables = options.tables;
    this.#logger = options.logger.child({ component: 'config' });
    this.#metrics = options.metrics ? pipelineMetrics(options.metrics.registry) : undefined;
    this.#compileOptions = options.demoBaseURL === undefined ? {} : { demoBaseURL: options.demoBaseURL };
    this.#now = options.now ?? Date.now;
  }

  /** Where `demo://` backends point from the next compile on (the demo backend starts when a route first uses it). */
  setDemoBaseURL(url: string): void {
    this.#compileOptions = { ...this.#compileOptions, demoBaseURL: url };
  }

  /** True once a snapshot has been compiled and its table is serving. */
  get loaded(): boolean {
    return this.#last !== undefined;
  }

  /** The latest compile result, if any. */
  get last(): CompileResult | undefined {
    return this.#last;
  }

  /** Subscribes to every compile (called synchronously after the table swap); returns an unsubscribe function. */
  onCompiled(listener: CompileListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Compiles a snapshot and swaps the table. Bind-free: pass `pipeline.apply` straight to a source. */
  readonly apply = (snapshot: ConfigSnapshot): CompileResult => {
    const started = performance.now();
    const now = this.#now();
    const result = compile(snapshot.objects, { ...this.#compileOptions, version: ++this.#version, now });
    const seconds = (performance.now() - started) / 1000;
    this.#tables.set(result.table);
    this.#last = result;
    this.#snapshot = snapshot;
    this.#metrics?.record(seconds, result);
    this.#log(result, seconds);
    for (const listener of this.#listeners) {
      try {
        listener(result, snapshot);
      } catch (err) {
        this.#logger.error({ error: (err as Error).message }, 'a config listener failed');
      }
    }
    this.#scheduleExpiry(result.table, now);
    return result;
  };

  /** Stops the recompile at the next token expiry. */
  stop(): void {
    clearTimeout(this.#expiry);
    this.#expiry = undefined;
    this.#snapshot = undefined;
  }

  /**
   * A token's status says Expired only from a compile after its expiresAt, and nothing else may change then: so the
   * same snapshot is compiled again at the next expiry (requests check expiry themselves; this is for the status).
   */
  #scheduleExpiry(table: RoutingTable, now: number): void {
    clearTimeout(this.#expiry);
    this.#expiry = undefined;
    const next = nextExpiry(table, now);
    if (next === undefined) return;
    // Node fires a delay past 2^31-1 ms (about 24.8 days) at once: wait at most that long, then look again.
    this.#expiry = setTimeout(() => this.#snapshot && this.apply(this.#snapshot), Math.min(next - now, MAX_TIMER_MS));
    this.#expiry.unref();
  }

  #log(result: CompileResult, seconds: number): void {
    const { table, statuses } = result;
    const notReady = statuses.filter((s) => !isReady(s));
    for (const s of notReady) this.#logger.warn(describe(s), `${s.kind} ${s.namespace}/${s.name} is not ready: ${readyReason(s)}`);
    for (const s of statuses) {
      for (const w of s.warnings) this.#logger.warn({ ...describe(s), warning: w }, `${s.kind} ${s.namespace}/${s.name}: ${w}`);
    }
    this.#logger.info(
      {
        version: table.version,
        routes: table.routes.size,
        groups: table.groups.size,
        tokens: table.tokensByDigest.size,
        notReady: notReady.length,
        compileMs: Math.round(seconds * 1e4) / 10,
      },
      `config version ${table.version} serving: ${table.routes.size} model(s), ${table.groups.size} group(s), ${table.tokensByDigest.size} token(s), ${notReady.length} object(s) not ready`,
    );
  }
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** The earliest expiresAt of a served token still in the future, or undefined. */
function nextExpiry(table: RoutingTable, now: number): number | undefined {
  let next: number | undefined;
  for (const t of table.tokensByDigest.values()) {
    if (t.expiresAtMs !== undefined && t.expiresAtMs > now && (next === undefined || t.expiresAtMs < next)) next = t.expiresAtMs;
  }
  return next;
}

/** The cause, as `check` and the status's failing condition name it (SecretKeyNotFound, not RefsNotResolved). */
function readyReason(s: ObjectStatus): string {
  const cause = readinessCause(s);
  return cause ? `${cause.reason}: ${cause.message}` : 'no Ready condition';
}

/** Log fields of one object: never its spec or data, only identity, reason and where it was read from. */
function describe(s: ObjectStatus): Record<string, unknown> {
  const cause = readinessCause(s);
  const at = s.source?.file ? `${s.source.file}:${s.source.line ?? 1}` : undefined;
  return {
    object: s.ref,
    reason: cause?.reason,
    message: cause?.message,
    ...(at ? { at } : {}),
  };
}
