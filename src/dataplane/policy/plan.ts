// Attempt planning (pure; the random source is injected): the order in which a request tries a route's
// backends. Lower priority tiers first; inside a tier a weighted random order, so the first attempt follows
// the weights and later attempts move on to backends not yet tried. Ejected backends go after every healthy
// one but are still planned, so a route whose backends are all ejected still gets served.
import type { CompiledBackend } from '../../model/routing-table.js';

export type Random = () => number;

/** Read-only view of passive health; undefined means "all healthy". */
export interface HealthView {
  isEjected(backendId: string): boolean;
}

export function planAttempts(backends: readonly CompiledBackend[], random: Random, health?: HealthView): CompiledBackend[] {
  // Most routes have one backend: whatever its weight or health, it is the whole plan (no maps, no sorting).
  if (backends.length === 1) return [backends[0]!];
  const healthy: CompiledBackend[] = [];
  const ejected: CompiledBackend[] = [];
  for (const b of backends) (health?.isEjected(b.id) ? ejected : healthy).push(b);
  return [...orderTiers(healthy, random), ...orderTiers(ejected, random)];
}

function orderTiers(backends: readonly CompiledBackend[], random: Random): CompiledBackend[] {
  // compile() sorts a route's backends by priority, so tiers are contiguous runs and need no map or sort per
  // request (both would be garbage on every request). A stable sort keeps
  // the given order within each tier for a list that arrives unsorted.
  let list = backends;
  for (let k = 1; k < list.length; k++) {
    if (list[k]!.priority < list[k - 1]!.priority) {
      list = [...backends].sort((a, b) => a.priority - b.priority);
      break;
    }
  }
  const out: CompiledBackend[] = [];
  for (let i = 0; i < list.length; ) {
    let j = i + 1;
    while (j < list.length && list[j]!.priority === list[i]!.priority) j++;
    if (j === i + 1) out.push(list[i]!);
    else out.push(...weightedOrder(list.slice(i, j), random));
    i = j;
  }
  return out;
}

/** Weighted random order without replacement; weight-0 backends come last (a fallback of last resort). */
function weightedOrder(tier: readonly CompiledBackend[], random: Random): CompiledBackend[] {
  const pool = tier.filter((b) => b.weight > 0);
  const zero = tier.filter((b) => b.weight === 0);
  const out: CompiledBackend[] = [];
  let total = pool.reduce((s, b) => s + b.weight, 0);
  while (pool.length > 0) {
    let r = random() * total;
    let i = 0;
    while (i < pool.length - 1 && r >= pool[i]!.weight) r -= pool[i++]!.weight;
    const [picked] = pool.splice(i, 1);
    total -= picked!.weight;
    out.push(picked!);
  }
  return [...out, ...zero];
}
