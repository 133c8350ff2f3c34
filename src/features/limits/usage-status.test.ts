import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { compile } from '../../compile/compile.js';
import { parseManifests } from '../../compile/manifests.js';
import { createLogger } from '../../observability/logger.js';
import { Admission } from './admission.js';
import { Limits } from './limits.js';
import { usageSnapshot } from './usage-status.js';
import { windowAt } from './windows.js';

const YAML = `
apiVersion: v1
kind: Secret
metadata: {name: keys, namespace: ai}
stringData: {alice: sk-budget-usage-alice-0123456789}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: chat, namespace: ai}
spec:
  backends: [{name: b, baseURL: "http://127.0.0.1:1/v1", pricing: {inputPerMTok: "1", outputPerMTok: "1"}}]
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: team, namespace: ai}
spec:
  models: ["chat"]
  limits:
    costPerDay: "1.00"
    costPerMonth: "10.00"
    warnAt: 80
    models: [{model: "chat", costPerDay: "0.50", warnAt: 50}]
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice, namespace: ai}
spec:
  group: team
  secretRef: {name: keys, key: alice}
  limits: {costPerMonth: "2.00"}
`;

let limits: Limits | undefined;
afterEach(() => limits?.close());

describe('usageSnapshot', () => {
  it("reads spend once for status.usage and the budget Events: settled money only, a group's per-model entries included", async () => {
    const table = compile(parseManifests(YAML, 'x.yaml').objects, { version: 1 }).table;
    limits = new Limits({}, createLogger({ level: 'silent' }), new Registry());
    const { limiter } = limits;
    const alice = [...table.tokensByDigest.values()].find((t) => t.name === 'alice')!;
    // Alice's own month, the group's day and month, and the group's day for the model.
    const rules = [...alice.moneyLimits, ...table.groups.get('ai/team')!.modelMoneyLimits.get('chat')!];
    // One request reserved 0.40 and settled to 0.30; another holds a reservation of 0.10, still in flight.
    const a = limiter.admit([], 0, { rules, micros: 400_000, group: 'ai/team' });
    expect(a).toBeInstanceOf(Admission);
    limiter.settle(a as Admission, 0, 300_000);
    expect(limiter.admit([], 0, { rules, micros: 100_000, group: 'ai/team' })).toBeInstanceOf(Admission);
    await limiter.sync();
    // The limiter counts in the current windows, so the read is of now.
    const now = Date.now();
    const got = await usageSnapshot(limits, table, now);
    const spent = { used: '0.30' };
    expect(got.objects).toEqual([
      { kind: 'Group', namespace: 'ai', name: 'team', usage: { costPerDay: { ...spent, limit: '1.00' }, costPerMonth: { ...spent, limit: '10.00' } } },
      { kind: 'GatewayToken', namespace: 'ai', name: 'alice', usage: { costPerDay: spent, costPerMonth: { ...spent, limit: '2.00' } } },
    ]);
    const day = windowAt('day', now).start;
    const month = windowAt('month', now).start;
    const who = { kind: 'Group', namespace: 'ai', name: 'team' };
    // The Event's figure is status.usage's: 0.30, not the 0.40 the money limits' own counters hold with the reservation.
    expect(got.budgets).toEqual([
      { ...who, model: undefined, field: 'costPerDay', window: 'day', windowStart: day, spent: 300_000, limit: 1_000_000, warnAt: 80 },
      { ...who, model: undefined, field: 'costPerMonth', window: 'month', windowStart: month, spent: 300_000, limit: 10_000_000, warnAt: 80 },
      { ...who, model: 'chat', field: 'costPerDay', window: 'day', windowStart: day, spent: 300_000, limit: 500_000, warnAt: 50 },
    ]);
    const [groupDay] = table.groups.get('ai/team')!.moneyLimits;
    expect(await limits.read([{ key: limiter.keyOf(groupDay!, now), kind: 'window' }])).toEqual([400_000]);
  });
});

describe('usageSnapshot in a currency whose minor unit is not two digits', () => {
  // Spend today of 3.00 on the group, and its costPerDay limit of 1.00, as each currency writes them.
  it.each([
    ['JPY', { used: '3', limit: '1' }],
    ['BHD', { used: '3.000', limit: '1.000' }],
    ['USD', { used: '3.00', limit: '1.00' }],
  ])('writes %s amounts with its own decimals', async (currency, day) => {
    const table = compile(parseManifests(YAML, 'x.yaml').objects, { version: 1 }).table;
    limits = new Limits({ currency }, createLogger({ level: 'silent' }), new Registry());
    const rules = table.groups.get('ai/team')!.moneyLimits;
    // Reserved nothing, settled past the limit: a settlement charges in full.
    const a = limits.limiter.admit([], 0, { rules, micros: 0, group: 'ai/team' });
    expect(a).toBeInstanceOf(Admission);
    limits.limiter.settle(a as Admission, 0, 3_000_000);
    await limits.limiter.sync();
    const group = (await usageSnapshot(limits, table)).objects.find((o) => o.kind === 'Group');
    expect(group?.usage.costPerDay).toEqual(day);
  });
});
