// What `model-gateway check` found, as plain data: compile's statuses plus the input errors, in input order, with
// the verdict. Pure; rendering lives in check-render.ts. The JSON output is this object, so its shape is an API:
// add fields, never rename or remove them.
import { isReady, readinessCause, type Condition, type ObjectStatus } from '../compile/conditions.js';
import { LIMITS_MARK } from '../compile/limits.js';

/** A path that could not be read, or a YAML document that could not be parsed. `line` is null for a whole path. */
export interface CheckInputError {
  readonly file: string;
  readonly line: number | null;
  readonly message: string;
}

interface CheckedObject {
  /** kind/namespace/name */
  readonly key: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly file: string | null;
  readonly line: number | null;
  readonly ready: boolean;
  /** The first failing condition's reason (the cause, e.g. GroupNotFound), or Ready's when all hold. */
  readonly reason: string;
  readonly message: string;
  readonly conditions: readonly Condition[];
  readonly warnings: readonly string[];
}

interface CheckSummary {
  readonly objects: number;
  readonly ready: number;
  readonly notReady: number;
  /** Warnings over all objects. */
  readonly warnings: number;
  /** Input errors (unreadable paths, YAML errors). */
  readonly errors: number;
  /** Objects of other kinds (not ModelRoute, Group, GatewayToken or Secret), which check does not judge. */
  readonly ignored: number;
  /** Whether warnings were allowed (--allow-warnings) when deciding `ok`. */
  readonly warningsAllowed: boolean;
}

export interface CheckReport {
  /** Version of this JSON shape. */
  readonly version: 1;
  /** True exactly when the exit status is 0. */
  readonly ok: boolean;
  readonly summary: CheckSummary;
  readonly objects: readonly CheckedObject[];
  readonly errors: readonly CheckInputError[];
}

export interface ReportInput {
  readonly statuses: readonly ObjectStatus[];
  readonly errors: readonly CheckInputError[];
  /** Files in the order they were read, to list objects in input order. */
  readonly files: readonly string[];
  readonly ignored: number;
  readonly allowWarnings: boolean;
}

export function buildReport(input: ReportInput): CheckReport {
  const order = new Map(input.files.map((f, i) => [f, i]));
  const objects = input.statuses
    .map(checkedObject)
    .sort(
      (a, b) => (order.get(a.file ?? '') ?? Infinity) - (order.get(b.file ?? '') ?? Infinity) || (a.line ?? 0) - (b.line ?? 0) || a.key.localeCompare(b.key),
    );
  const ready = objects.filter((o) => o.ready).length;
  const warnings = objects.reduce((n, o) => n + o.warnings.length, 0);
  const summary: CheckSummary = {
    objects: objects.length,
    ready,
    notReady: objects.length - ready,
    warnings,
    errors: input.errors.length,
    ignored: input.ignored,
    warningsAllowed: input.allowWarnings,
  };
  const ok = summary.notReady === 0 && summary.errors === 0 && (input.allowWarnings || warnings === 0);
  return { version: 1, ok, summary, objects, errors: input.errors };
}

function checkedObject(s: ObjectStatus): CheckedObject {
  const cause = readinessCause(s);
  // A ready Group or token shows its limits beside "serving" (compile puts them in its ResolvedRefs message).
  const refs = s.conditions.find((c) => c.type === 'ResolvedRefs')?.message ?? '';
  const limits = cause?.status === 'True' && refs.includes(LIMITS_MARK) ? refs.slice(refs.indexOf(LIMITS_MARK)) : '';
  return {
    key: s.ref,
    kind: s.kind,
    namespace: s.namespace,
    name: s.name,
    file: s.source?.file ?? null,
    line: s.source?.line ?? null,
    ready: isReady(s),
    reason: cause?.reason ?? 'Unknown',
    message: (cause?.message ?? '') + limits,
    conditions: s.conditions,
    warnings: s.warnings,
  };
}
