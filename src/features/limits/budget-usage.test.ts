import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { compile } from '../../compile/compile.js';
import { parseManifests } from '../../compile/manifests.js';
import { createLogger } from '../../observability/logger.js';
import { budgetUsage } from './budget-usage.js';
import { Admission } from './limiter.js';
import { Limits } from './limits.js';
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

describe('budgetUsage', () => {
  it("reads each money limit with a warnAt: the group's own and per-model ones, not a token's without one", async () => {
    const table = compile(parseManifests(YAML, 'x.yaml').objects, { version: 1 }).table;
    limits = new Limits({}, createLogger({ level: 'silent' }), new Registry());
    const group = table.groups.get('ai/team')!;
    const perModel = group.modelMoneyLimits.get('chat')!;
    // Spend 0.40 on the group's day (and month) and on its per-model day.
    const a = limits.limiter.admit([], 0, { rules: [...group.moneyLimits, ...perModel], micros: 400_000 });
    expect(a).toBeInstanceOf(Admission);
    limits.limiter.settle(a as Admission, 0, 400_000);
    // The limiter counts in the current windows, so the read is of now.
    const now = Date.now();
    const got = await budgetUsage(limits, table, now);
    const day = windowAt('day', now).start;
    const month = windowAt('month', now).start;
    const who = { kind: 'Group', namespace: 'ai', name: 'team' };
    expect(got).toEqual([
      { ...who, model: undefined, field: 'costPerDay', window: 'day', windowStart: day, spent: 400_000, limit: 1_000_000, warnAt: 80 },
      { ...who, model: undefined, field: 'costPerMonth', window: 'month', windowStart: month, spent: 400_000, limit: 10_000_000, warnAt: 80 },
      { ...who, model: 'chat', field: 'costPerDay', window: 'day', windowStart: day, spent: 400_000, limit: 500_000, warnAt: 50 },
    ]);
  });
});
