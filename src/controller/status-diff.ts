// Pure: compile's ObjectStatus + the object's current status → the status to write, or nothing when it would
// not change. lastTransitionTime moves only when a condition's status flips, as metav1.Condition specifies.
import type { ObjectStatus } from '../compile/conditions.js';
import type { ResourceCondition, ResourceStatus } from '../compile/resource-status.js';

const MAX_MESSAGE = 32768;
const MAX_WARNING = 1024;
const MAX_WARNINGS = 16;

export function desiredStatus(s: ObjectStatus, current: unknown, now: Date): ResourceStatus {
  const previous = conditionsOf(current);
  const conditions: ResourceCondition[] = s.conditions.map((c) => {
    const prev = previous.find((p) => p.type === c.type);
    return {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: truncate(c.message, MAX_MESSAGE),
      ...(s.generation !== undefined ? { observedGeneration: s.generation } : {}),
      lastTransitionTime: prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339(now),
    };
  });
  return {
    ...(s.generation !== undefined ? { observedGeneration: s.generation } : {}),
    conditions,
    ...(s.warnings.length > 0 ? { warnings: s.warnings.slice(0, MAX_WARNINGS).map((w) => truncate(w, MAX_WARNING)) } : {}),
  };
}

/** Whether writing `desired` would change what is stored (only the fields the gateway owns are compared). */
export function statusDiffers(current: unknown, desired: ResourceStatus): boolean {
  const c = (current ?? {}) as Partial<ResourceStatus>;
  if (c.observedGeneration !== desired.observedGeneration) return true;
  if (JSON.stringify(c.warnings ?? []) !== JSON.stringify(desired.warnings ?? [])) return true;
  const have = conditionsOf(current);
  const want = desired.conditions ?? [];
  if (have.length !== want.length) return true;
  return want.some((w) => {
    const h = have.find((x) => x.type === w.type);
    return (
      !h ||
      h.status !== w.status ||
      h.reason !== w.reason ||
      h.message !== w.message ||
      h.observedGeneration !== w.observedGeneration ||
      h.lastTransitionTime !== w.lastTransitionTime
    );
  });
}

/** The merge patch body: the whole owned status, with `warnings: null` to clear stale warnings. */
export function statusPatch(desired: ResourceStatus, resourceVersion: string | undefined): Record<string, unknown> {
  return {
    ...(resourceVersion ? { metadata: { resourceVersion } } : {}),
    status: { ...desired, warnings: desired.warnings ?? null },
  };
}

function conditionsOf(status: unknown): Partial<ResourceCondition>[] {
  const c = (status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(c) ? (c as Partial<ResourceCondition>[]) : [];
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** RFC 3339 without fractional seconds, as metav1.Time serialises. */
function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
