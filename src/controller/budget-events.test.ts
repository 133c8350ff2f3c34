import { describe, expect, it } from 'vitest';
import type { BudgetUse } from '../model/money-limits.js';
import { BUDGET_EVENT_REASON, BudgetEvents, budgetEventMessage, budgetEventName, type EventsApi } from './budget-events.js';
import { TokenBucket } from './token-bucket.js';

const NOV = Date.UTC(2026, 10, 1);
const use = (o: Partial<BudgetUse> = {}): BudgetUse => ({
  kind: 'Group',
  namespace: 'ai',
  name: 'team-a',
  field: 'costPerMonth',
  model: undefined,
  window: 'month',
  windowStart: NOV,
  spent: 2_050_000_000,
  limit: 2_500_000_000,
  warnAt: 80,
  ...o,
});

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('budget event names', () => {
  it('name the object, its kind, the limit and the window', () => {
    expect(budgetEventName(use())).toBe('team-a.budget-group-costpermonth-202611');
    expect(budgetEventName(use({ kind: 'GatewayToken', name: 'alice', field: 'costPerDay', window: 'day', windowStart: Date.UTC(2026, 10, 25) }))).toBe(
      'alice.budget-token-costperday-20261125',
    );
  });

  it('keep a Group and a GatewayToken of the same name apart, and each window apart', () => {
    const names = new Set([
      budgetEventName(use()),
      budgetEventName(use({ kind: 'GatewayToken' })),
      budgetEventName(use({ windowStart: Date.UTC(2026, 11, 1) })),
      budgetEventName(use({ field: 'costPerDay', window: 'day', windowStart: NOV })),
    ]);
    expect(names.size).toBe(4);
  });

  it('make a model DNS-safe and keep models that read alike apart', () => {
    const a = budgetEventName(use({ model: 'Meta/Llama_3.1' }));
    const b = budgetEventName(use({ model: 'meta-llama-3.1' }));
    expect(a).toMatch(DNS_SUBDOMAIN);
    expect(a).toMatch(/^team-a\.budget-group-costpermonth-meta-llama-3\.1-[0-9a-f]{8}-202611$/);
    expect(a).not.toBe(b);
  });

  it('stay within 253 characters and DNS-safe for the longest names, distinct when cut', () => {
    const long = 'x'.repeat(240);
    const a = budgetEventName(use({ name: long, model: 'm'.repeat(100) }));
    const b = budgetEventName(use({ name: long, model: 'n'.repeat(100) }));
    expect(a.length).toBeLessThanOrEqual(253);
    expect(a).toMatch(DNS_SUBDOMAIN);
    expect(a).not.toBe(b);
  });

  it('say the limit, the percentage and the window, and no amount', () => {
    expect(budgetEventMessage(use())).toBe('costPerMonth is 82% spent (warnAt 80%) in the UTC month 2026-11');
    expect(budgetEventMessage(use({ model: 'gpt-4o', field: 'costPerDay', window: 'day', windowStart: Date.UTC(2026, 10, 25), spent: 2_500_000_000 }))).toBe(
      'costPerDay for model gpt-4o is 100% spent (warnAt 80%) in the UTC day 2026-11-25',
    );
  });
});

/** The API server's part: Events by namespace/name, 409 for a name that exists. */
function fakeServer() {
  const events = new Map<string, Record<string, any>>();
  let posts = 0;
  const api: EventsApi = {
    async createEvent(namespace, body) {
      posts++;
      const key = `${namespace}/${(body.metadata as { name: string }).name}`;
      if (events.has(key)) throw Object.assign(new Error('exists'), { code: 409 });
      events.set(key, body);
      return body;
    },
  };
  return { api, events, posts: () => posts };
}

/** A replica whose rounds are each given `read()`, as the usage-status round hands over what it read. */
function replica(server: ReturnType<typeof fakeServer>, read: () => BudgetUse[], o: { leader?: () => boolean; missing?: () => boolean } = {}) {
  const events = new BudgetEvents({
    events: server.api,
    api: {
      get: async (kind, namespace, name) => {
        if (o.missing?.()) throw Object.assign(new Error('gone'), { code: 404 });
        return { apiVersion: 'modelgateway.io/v1alpha1', kind, metadata: { name, namespace, uid: `uid-${name}` } };
      },
    },
    isLeader: o.leader ?? (() => true),
    bucket: new TokenBucket(1000, 1000),
    identity: 'pod-0',
    now: () => new Date('2026-11-25T10:00:00.123Z'),
  });
  return { round: () => events.round(read()) };
}

describe('BudgetEvents', () => {
  it('creates one Warning Event on the object once its limit is past warnAt', async () => {
    const server = fakeServer();
    let spent = 1_000_000_000;
    const r = replica(server, () => [use({ spent })]);
    await r.round();
    expect(server.posts()).toBe(0);
    spent = 2_050_000_000;
    await r.round();
    expect([...server.events.values()]).toEqual([
      expect.objectContaining({
        metadata: { name: 'team-a.budget-group-costpermonth-202611', namespace: 'ai' },
        involvedObject: { apiVersion: 'modelgateway.io/v1alpha1', kind: 'Group', namespace: 'ai', name: 'team-a', uid: 'uid-team-a' },
        type: 'Warning',
        reason: BUDGET_EVENT_REASON,
        message: 'costPerMonth is 82% spent (warnAt 80%) in the UTC month 2026-11',
        firstTimestamp: '2026-11-25T10:00:00Z',
        count: 1,
      }),
    ]);
  });

  it('does not ask again in later rounds of the same window, and makes a new one in the next window', async () => {
    const server = fakeServer();
    let windowStart = NOV;
    const r = replica(server, () => [use({ windowStart })]);
    await r.round();
    await r.round();
    expect(server.posts()).toBe(1);
    windowStart = Date.UTC(2026, 11, 1);
    await r.round();
    expect([...server.events.keys()]).toEqual(['ai/team-a.budget-group-costpermonth-202611', 'ai/team-a.budget-group-costpermonth-202612']);
  });

  it('a second replica or a restarted leader gets 409 and counts it as done: still one Event', async () => {
    const server = fakeServer();
    const a = replica(server, () => [use()]);
    const b = replica(server, () => [use()]);
    await a.round();
    await b.round();
    await b.round();
    expect(server.events.size).toBe(1);
    expect(server.posts()).toBe(2); // b asked once, was told it exists, and stopped asking
  });

  it('writes nothing while not leader', async () => {
    const server = fakeServer();
    await replica(server, () => [use()], { leader: () => false }).round();
    expect(server.posts()).toBe(0);
  });

  it('tries again next round when the object could not be read', async () => {
    const server = fakeServer();
    let missing = true;
    const r = replica(server, () => [use()], { missing: () => missing });
    await r.round();
    expect(server.events.size).toBe(0);
    missing = false;
    await r.round();
    expect(server.events.size).toBe(1);
  });
});
