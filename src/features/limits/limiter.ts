// The replica's side of the counters: admits a request against its rules, settles token reservations to the real
// count, releases in-flight slots, and talks to the store only when the leases it holds do not cover a request.
// A request that its leases cover costs a few map reads and no I/O (the hot path with Redis on); a sync every
// `syncMs` pushes settlement debts to the store and gives back leases that sat idle through a whole interval.
// Money limits are window counters like token ones, in micro-units: reserved at the request's largest cost, settled
// to its exact cost. What settlements charge them is also counted as spend (spend.ts), the figure users see.
import type { MoneyLimitRule } from '../../model/money-limits.js';
import type { LimitRule } from '../../model/usage-limits.js';
import { type AnyRule, Admission, type Held, type Local, type MoneyCharge, type Refusal, type RuleState } from './admission.js';
import { type Adjustment, type CounterKind, type CounterStore, StoreNotReached, type TakeRequest } from './counter-store.js';
import { leaseExtra } from './lease.js';
import { Spend } from './spend.js';
import { windowAt } from './windows.js';

/** A rule's counter key in one window, and that window. */
interface Counter {
  readonly key: string;
  readonly start: number;
  readonly end: number;
}

export class StoreUnavailable extends Error {}

export interface LimiterOptions {
  readonly now?: () => number;
  /** Refuse (StoreUnavailable) instead of letting requests through uncounted when the store fails. */
  readonly failClosed?: boolean;
  /** Called for every failed store call (timeout, connection): the feature counts and logs it. */
  readonly onStoreError?: (err: unknown) => void;
  /** Key prefix in the store. */
  readonly prefix?: string;
  /** A push of this replica's spend took a money rule past its warnAt (spend.ts). */
  readonly onBudgetCrossed?: (rule: MoneyLimitRule, group: string) => void;
}

const TTL_MARGIN_MS = 60_000;
/** In-flight counters expire when no replica touched them for this long (heartbeats refresh them). */
const CONCURRENT_TTL_MS = 10 * 60_000;

export class Limiter {
  readonly #store: CounterStore;
  readonly #now: () => number;
  readonly #failClosed: boolean;
  readonly #onStoreError: (err: unknown) => void;
  readonly #prefix: string;
  readonly #locals = new Map<string, Local>();
  /** By rule (the table's objects), its counter in the current window. */
  readonly #counters = new WeakMap<object, Counter>();
  /** Units to give back or add at the next sync (leases dropped by a changed limit, late debts). */
  #pending: Adjustment[] = [];
  /** What settlements charged money rules, pushed with each sync. */
  readonly spend: Spend;

  constructor(store: CounterStore, options: LimiterOptions = {}) {
    this.#store = store;
    this.#now = options.now ?? Date.now;
    this.#failClosed = options.failClosed ?? false;
    this.#onStoreError = options.onStoreError ?? (() => {});
    this.#prefix = options.prefix ?? 'mg:';
    this.spend = new Spend(this.#prefix, options.onBudgetCrossed ?? (() => {}));
  }

  /** The counter key of a rule at `now` (window counters carry their window's start). */
  keyOf(rule: Pick<AnyRule, 'scope' | 'field' | 'window'>, now: number): string {
    return this.#counterOf(rule, now).key;
  }

  /** Ms until a rule's window resets (1000 for in-flight counts). */
  #resetMs(rule: AnyRule, now: number): number {
    return rule.window === 'none' ? 1000 : this.#counterOf(rule, now).end - now;
  }

  /** A rule's counter in the window holding `now`: kept per rule until that window ends, not built per request. */
  #counterOf(rule: Pick<AnyRule, 'scope' | 'field' | 'window'>, now: number): Counter {
    const known = this.#counters.get(rule);
    if (known && known.start <= now && now < known.end) return known;
    const { start, end } = windowAt(rule.window, now);
    const key = rule.window === 'none' ? `${this.#prefix}${rule.scope}:${rule.field}` : `${this.#prefix}${rule.scope}:${rule.field}:${start}`;
    const counter = { key, start, end };
    this.#counters.set(rule, counter);
    return counter;
  }

  /**
   * Admits a request costing one request, one in-flight slot and `tokens` tokens on each rule of its kind, and
   * `money.micros` on each money rule, or says which rule refused it. Synchronous when this replica's leases cover
   * it; a store round trip otherwise.
   */
  admit(rules: readonly LimitRule[], tokens: number, money?: MoneyCharge): Admission | Refusal | Promise<Admission | Refusal> {
    const now = this.#now();
    const held: Held[] = [];
    // A lacking rule claims what its lease holds (all of it, a debt included) and asks the store for the rest.
    const lacking: { h: Held; claimed: number; need: number }[] = [];
    const hold = (rule: AnyRule, cost: number, settles: Held['settles']): Refusal | undefined => {
      if (cost > rule.limit) return { rule, cost, used: undefined, resetMs: this.#resetMs(rule, now) };
      const key = this.keyOf(rule, now);
      const local = this.#local(key, rule, now);
      const h: Held = { key, rule, cost, local, settles };
      held.push(h);
      if (local.left < cost) lacking.push({ h, claimed: local.left, need: cost - local.left });
      return undefined;
    };
    for (const rule of rules) {
      const tokenRule = rule.metric === 'tokens';
      const refused = hold(rule, tokenRule ? tokens : 1, tokenRule ? 'tokens' : undefined);
      if (refused) return refused;
    }
    if (money) {
      for (const rule of money.rules) {
        const refused = hold(rule, money.micros, 'money');
        if (refused) return refused;
        if (rule.warnAt !== undefined) this.spend.watch(rule, now);
      }
    }
    // Spend now, before any await: a request arriving meanwhile must not count the same units.
    for (const h of held) {
      h.local.touched = true;
      if (h.local.kind === 'concurrent') h.local.inUse++;
    }
    if (lacking.length === 0) {
      for (const h of held) h.local.left -= h.cost;
      return new Admission(held, true, money);
    }
    const lacks = new Set(lacking.map((l) => l.h));
    for (const h of held) if (!lacks.has(h)) h.local.left -= h.cost;
    for (const l of lacking) l.h.local.left -= l.claimed;
    const requests: TakeRequest[] = lacking.map(({ h, need }) => ({
      key: h.key,
      kind: h.local.kind,
      need,
      extra: leaseExtra(h.rule.limit, this.#store.leases),
      limit: h.rule.limit,
      ttlMs: h.local.ttlMs,
    }));
    const undo = () => {
      for (const h of held) if (!lacks.has(h)) this.#giveBack(h, h.cost);
      for (const l of lacking) this.#giveBack(l.h, l.claimed);
      for (const h of held) if (h.local.kind === 'concurrent') h.local.inUse--;
    };
    const done = (result: Awaited<ReturnType<CounterStore['take']>>): Admission | Refusal => {
      if (!result.ok) {
        undo();
        const { h } = lacking[result.refused]!;
        h.local.seen = result.used;
        return { rule: h.rule, cost: h.cost, used: result.used, resetMs: this.#resetMs(h.rule, now) };
      }
      for (let i = 0; i < lacking.length; i++) {
        const { h, need } = lacking[i]!;
        // The grant covers what the request lacked; the rest is a lease for the requests after it.
        this.#giveBack(h, result.granted[i]! - need);
        h.local.seen = result.used[i]!;
      }
      return new Admission(held, true, money);
    };
    const failed = (err: unknown): Admission => {
      undo();
      this.#onStoreError(err);
      if (this.#failClosed) throw new StoreUnavailable('the limits store did not answer in time');
      return new Admission([], false, money);
    };
    let result: ReturnType<CounterStore['take']>;
    try {
      result = this.#store.take(requests);
    } catch (err) {
      return failed(err);
    }
    return result instanceof Promise ? result.then(done, failed) : done(result);
  }

  /**
   * Settles the token rules of an admission to the tokens actually consumed and its money rules to the exact cost
   * (micro-units; undefined keeps the money reserved), once; later calls do nothing. Counts the money charged as spend.
   */
  settle(admission: Admission, tokens: number, micros?: number): void {
    if (!admission.claimSettle()) return;
    const now = this.#now();
    const money = admission.money;
    if (money) this.spend.add(money.rules, micros ?? money.micros, money.group ?? '', now);
    for (const h of admission.held) {
      if (h.settles === undefined) continue;
      const used = h.settles === 'tokens' ? tokens : (micros ?? h.cost);
      if (h.local.windowEnd > now) {
        this.#giveBack(h, h.cost - used);
        continue;
      }
      // The window ended meanwhile: an overrun still counts against that window's key; money also counts against the
      // window holding now, where spend counts it, so no window's spend passes its limit's counter.
      if (used > h.cost) this.#pending.push({ key: h.key, kind: 'window', delta: used - h.cost, ttlMs: h.local.ttlMs });
      if (h.settles !== 'money') continue;
      const current = this.#counterOf(h.rule, now);
      this.#pending.push({ key: current.key, kind: 'window', delta: used, ttlMs: current.end - now + TTL_MARGIN_MS });
    }
  }

  /**
   * Charges usage no admission reserved (what a background response generated, learned at a later call) to the token
   * rules among `rules` and to `money`'s rules: settled as a reservation of nothing, so it reaches their counters (a
   * debt this replica pushes at its next sync, which its next admission already counts) and spend as every settlement's
   * charge does.
   */
  charge(rules: readonly LimitRule[], tokens: number, money?: MoneyCharge): void {
    const now = this.#now();
    const held: Held[] = [];
    const hold = (rule: AnyRule, settles: 'tokens' | 'money') => {
      const key = this.keyOf(rule, now);
      held.push({ key, rule, cost: 0, local: this.#local(key, rule, now), settles });
    };
    for (const rule of rules) if (rule.metric === 'tokens') hold(rule, 'tokens');
    for (const rule of money?.rules ?? []) hold(rule, 'money');
    this.settle(new Admission(held, true, money), tokens, money?.micros);
  }

  /** Gives back the admission's in-flight slots (once). */
  release(admission: Admission): void {
    if (!admission.claimRelease()) return;
    for (const h of admission.held) {
      if (h.local.kind !== 'concurrent') continue;
      h.local.inUse--;
      if (this.#locals.get(h.key) === h.local) h.local.left++;
      else this.#pending.push({ key: h.key, kind: 'concurrent', delta: -1, ttlMs: h.local.ttlMs });
    }
  }

  /** Gives back everything an admission holds, as if the request never came (refused further on: not started). */
  cancel(admission: Admission): void {
    const settle = admission.claimSettle();
    const release = admission.claimRelease();
    for (const h of admission.held) {
      if (h.local.kind === 'concurrent' ? !release : !settle) continue;
      if (h.local.kind === 'concurrent') h.local.inUse--;
      this.#giveBack(h, h.cost);
    }
  }

  /**
   * Units an admission held (or a grant brought) back to this replica's lease; to the store when the limit changed
   * meanwhile (a new table dropped that lease: these units were not in what it gave back), unless the window ended.
   */
  #giveBack(h: Held, units: number): void {
    if (this.#locals.get(h.key) === h.local) h.local.left += units;
    else if (units !== 0 && h.local.windowEnd > this.#now()) this.#pending.push({ key: h.key, kind: h.local.kind, delta: -units, ttlMs: h.local.ttlMs });
  }

  /** Where each rule stands as far as this replica knows, for the x-ratelimit-* headers. */
  state(rules: readonly LimitRule[]): RuleState[] {
    const now = this.#now();
    return rules.map((rule) => {
      const local = this.#locals.get(this.keyOf(rule, now));
      const remaining = local ? Math.max(0, rule.limit - local.seen + Math.max(0, local.left)) : rule.limit;
      return { rule, remaining, resetMs: this.#resetMs(rule, now) };
    });
  }

  /**
   * Pushes debts and spend, gives back leases idle for a whole interval and refreshes the heartbeats of in-flight
   * slots; drops what belongs to ended windows. Called every sync interval and at shutdown (`all`: give back every
   * lease).
   */
  async sync(all = false): Promise<void> {
    const now = this.#now();
    const out = this.#pending;
    this.#pending = [];
    for (const [key, local] of this.#locals) {
      if (local.windowEnd <= now) {
        this.#locals.delete(key);
        continue;
      }
      if (local.left < 0) {
        out.push({ key, kind: local.kind, delta: -local.left, ttlMs: local.ttlMs });
        local.left = 0;
      } else if (local.left > 0 && (all || !local.touched)) {
        out.push({ key, kind: local.kind, delta: -local.left, ttlMs: local.ttlMs });
        local.seen -= local.left;
        local.left = 0;
      } else if (local.kind === 'concurrent' && local.inUse > 0 && this.#store.leases) {
        out.push({ key, kind: local.kind, delta: 0, ttlMs: local.ttlMs }); // heartbeat
      }
      if (local.kind === 'concurrent' && local.inUse === 0 && local.left === 0) this.#locals.delete(key);
      local.touched = false;
    }
    const spend = this.spend.sync(now);
    const from = out.length;
    out.push(...spend.adjustments);
    if (out.length === 0) return;
    try {
      spend.learn((await this.#store.adjust(out)).slice(from));
    } catch (err) {
      // Never sent: the leases, debts and spend it carried go with the next sync instead of being lost.
      if (err instanceof StoreNotReached) {
        this.#pending = merged([...out.slice(0, from), ...this.#pending]);
        spend.unsent();
      } else spend.learn(undefined);
      this.#onStoreError(err);
    }
  }

  /**
   * The spend of each money rule of an admission, as this replica knows it when the request is let through
   * (Spend.spent): exact in process; with Redis, other replicas' settlements as of this replica's last sync.
   */
  spentBefore(admission: Admission): { rule: MoneyLimitRule; spent: number }[] {
    const now = this.#now();
    return admission.held
      .filter((h) => h.settles === 'money')
      .map((h) => ({ rule: h.rule as MoneyLimitRule, spent: this.spent(h.rule as MoneyLimitRule, now) }));
  }

  /** A money rule's spend in its current window, as this replica knows it. */
  spent(rule: MoneyLimitRule, now = this.#now()): number {
    return this.spend.spent(rule, now);
  }

  #local(key: string, rule: AnyRule, now: number): Local {
    let local = this.#locals.get(key);
    if (local && local.limit !== rule.limit) {
      // The limit changed (a new table): give back what was held under the old one and start afresh.
      if (local.left !== 0) this.#pending.push({ key, kind: local.kind, delta: -local.left, ttlMs: local.ttlMs });
      local = undefined;
    }
    if (!local) {
      const span = this.#counterOf(rule, now);
      const kind: CounterKind = rule.window === 'none' ? 'concurrent' : 'window';
      const ttlMs = kind === 'concurrent' ? CONCURRENT_TTL_MS : span.end - now + TTL_MARGIN_MS;
      local = { kind, limit: rule.limit, windowEnd: span.end, ttlMs, left: 0, seen: 0, inUse: 0, touched: true };
      this.#locals.set(key, local);
    }
    return local;
  }
}

/** Adjustments summed per counter (heartbeats dropped): what waits through an outage of any length stays one per counter. */
function merged(adjustments: readonly Adjustment[]): Adjustment[] {
  const byCounter = new Map<string, Adjustment>();
  for (const a of adjustments) {
    const id = `${a.kind} ${a.key}`;
    const before = byCounter.get(id);
    byCounter.set(id, before ? { ...a, delta: before.delta + a.delta, ttlMs: Math.max(before.ttlMs, a.ttlMs) } : a);
  }
  return [...byCounter.values()].filter((a) => a.delta !== 0);
}
