// Spend: what settled requests were charged on money limits (their exact cost; the reservation kept when it is
// unknown), per scope (a token, a group, a group's per-model entry) in the current UTC day and calendar month, in
// micro-units. The one figure shown as spend: status.usage, the budget Event, the warnAt header and
// model_gateway_budget_warnings_total. It is counted apart from the money limits' own counters because those must
// also hold the reservations of requests in flight and the budget leased to replicas (how a budget holds under
// concurrency, across replicas), so they run ahead of spend by exactly what is reserved and not yet settled.
// Bookkeeping only: the limiter pushes the deltas with its sync and hands back what the store then holds.
import { MONEY_FIELDS, type MoneyLimitRule } from '../../model/money-limits.js';
import { pastWarnAt } from './budget-warnings.js';
import type { Adjustment } from './counter-store.js';
import { windowAt } from './windows.js';

type SpendWindow = MoneyLimitRule['window'];
const WINDOWS = Object.values(MONEY_FIELDS);
/** Past its window's end a spend counter is kept this long, as the limit counters are. */
const TTL_MARGIN_MS = 60_000;

interface Entry {
  readonly key: string;
  readonly start: number;
  readonly end: number;
  /** The store's count as of the last sync that carried this key (every replica's pushed spend). */
  total: number;
  /** Settled here and not pushed yet; pushed and not answered yet. */
  delta: number;
  sending: number;
  /** Spent on, or asked about, since the last sync: the next sync carries it (a delta of 0 only reads it). */
  touched: boolean;
  /** The warnAt rule of this key, and the group of the request that last spent on it (metric labels). */
  warn?: { readonly rule: MoneyLimitRule; readonly group: string };
}

/** A sync's share of spend: its adjustments, and what to do with the store's counts after them. */
export interface SpendSync {
  readonly adjustments: readonly Adjustment[];
  /** The counts after the adjustments, in their order; undefined when the store failed (the deltas are lost). */
  learn(counts: readonly number[] | undefined): void;
  /** The store never got the adjustments (StoreNotReached): their deltas go out with the next sync instead. */
  unsent(): void;
}

export class Spend {
  readonly #prefix: string;
  readonly #onCrossed: (rule: MoneyLimitRule, group: string) => void;
  /** Every counter this replica knows, by key, until its window ends. */
  readonly #entries = new Map<string, Entry>();
  /** By scope, the counter of each window holding now: a request finds its own without building keys. */
  readonly #current = new Map<string, { day?: Entry; month?: Entry }>();

  /** `onCrossed`: a push of this replica's took a rule's spend past its warnAt (once in all replicas: counts are atomic). */
  constructor(prefix: string, onCrossed: (rule: MoneyLimitRule, group: string) => void) {
    this.#prefix = prefix;
    this.#onCrossed = onCrossed;
  }

  /** The key of a scope's spend in the window holding `now`. */
  keyOf(scope: string, window: SpendWindow, now: number): string {
    return `${this.#prefix}${scope}:spend:${window}:${windowAt(window, now).start}`;
  }

  /** What this replica knows a rule's window has spent: the store's count at its last sync, plus its own since. */
  spent(rule: MoneyLimitRule, now: number): number {
    const e = this.#current.get(rule.scope)?.[rule.window];
    return e && e.start <= now && now < e.end ? e.total + e.sending + e.delta : 0;
  }

  /** Has the next sync read a warnAt rule's spend, which the header of the requests spending on it tells. */
  watch(rule: MoneyLimitRule, now: number): void {
    this.#entry(rule.scope, rule.window, now).touched = true;
  }

  /** Adds a settled request's charge to the day and the month of each scope it was charged on. */
  add(rules: readonly MoneyLimitRule[], micros: number, group: string, now: number): void {
    rules.forEach((rule, i) => {
      if (rules.findIndex((r) => r.scope === rule.scope) < i) return; // a scope counts once
      for (const w of WINDOWS) {
        const e = this.#entry(rule.scope, w, now);
        e.delta += micros;
        e.touched = true;
      }
    });
    for (const rule of rules) if (rule.warnAt !== undefined) this.#entry(rule.scope, rule.window, now).warn = { rule, group };
  }

  /**
   * Takes the touched keys' deltas for a sync; drops the keys of ended windows, after pushing what was settled in
   * their last moments (since the sync before), so a day's or month's final figure misses nothing.
   */
  sync(now: number): SpendSync {
    const sent: { e: Entry; delta: number }[] = [];
    const adjustments: Adjustment[] = [];
    for (const [key, e] of this.#entries) {
      const ended = e.end <= now;
      if (ended) this.#forget(e);
      if (!e.touched || (ended && e.delta === 0)) continue;
      adjustments.push({ key, kind: 'window', delta: e.delta, ttlMs: Math.max(e.end - now, 0) + TTL_MARGIN_MS });
      sent.push({ e, delta: e.delta });
      e.sending += e.delta;
      e.delta = 0;
      e.touched = false;
    }
    return {
      adjustments,
      learn: (counts) => {
        sent.forEach(({ e, delta }, i) => {
          e.sending -= delta;
          const after = counts?.[i];
          if (after === undefined) return;
          e.total = after;
          // The increments of all replicas apply one at a time: exactly one of them takes the count across.
          if (delta > 0 && e.warn && !pastWarnAt(e.warn.rule, after - delta) && pastWarnAt(e.warn.rule, after)) this.#onCrossed(e.warn.rule, e.warn.group);
        });
      },
      unsent: () => {
        for (const { e, delta } of sent) {
          e.sending -= delta;
          e.delta += delta;
          e.touched = true;
          if (!this.#entries.has(e.key)) this.#entries.set(e.key, e); // an ended window's last spend: pushed when the store is back
        }
      },
    };
  }

  #entry(scope: string, window: SpendWindow, now: number): Entry {
    let current = this.#current.get(scope);
    if (!current) this.#current.set(scope, (current = {}));
    let e = current[window];
    if (!e || now < e.start || now >= e.end) {
      const key = this.keyOf(scope, window, now);
      e = this.#entries.get(key);
      if (!e) {
        const { start, end } = windowAt(window, now);
        e = { key, start, end, total: 0, delta: 0, sending: 0, touched: false };
        this.#entries.set(key, e);
      }
      current[window] = e;
    }
    return e;
  }

  #forget(e: Entry): void {
    this.#entries.delete(e.key);
    const scope = e.key.slice(this.#prefix.length, e.key.lastIndexOf(':spend:'));
    const current = this.#current.get(scope);
    if (current?.day === e) delete current.day;
    if (current?.month === e) delete current.month;
    if (current && !current.day && !current.month) this.#current.delete(scope);
  }
}
