// Per-object conditions produced by compile. The Kubernetes status writer turns these into status.conditions;
// the file source logs them; `model-gateway check` prints them.

/** CredentialsAvailable is not compile's: the controller adds it from the data plane (controller/credential-conditions.ts). */
type ConditionType = 'Accepted' | 'ResolvedRefs' | 'Ready' | 'CredentialsAvailable';

export type ConditionReason =
  | 'Accepted'
  | 'InvalidSpec'
  | 'Conflict'
  | 'ResolvedRefs'
  | 'SecretNotFound'
  | 'SecretKeyNotFound'
  | 'GroupNotFound'
  | 'Ready'
  | 'Expired'
  | 'Disabled'
  | 'NotAccepted'
  | 'RefsNotResolved'
  | 'CredentialsUnavailable';

export interface Condition {
  readonly type: ConditionType;
  readonly status: 'True' | 'False';
  readonly reason: ConditionReason;
  /** Human-readable; never contains a Secret value or a client key. */
  readonly message: string;
}

export interface ObjectStatus {
  /** kind/namespace/name. */
  readonly ref: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** metadata.generation of the object the conditions were computed from (status.observedGeneration). */
  readonly generation: number | undefined;
  readonly conditions: readonly Condition[];
  /** Things that do not stop the object from working but are probably mistakes (e.g. a glob matching no model). */
  readonly warnings: readonly string[];
  readonly source?: { file?: string; line?: number };
}

export function isReady(status: ObjectStatus): boolean {
  return status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * Why an object is (not) ready, as the log, `check` and the docs name it: the first failing condition (Ready=False
 * only summarises NotAccepted / RefsNotResolved unless it is the cause itself: Expired, Disabled), else Ready.
 */
export function readinessCause(status: ObjectStatus): Condition | undefined {
  return status.conditions.find((c) => c.status === 'False') ?? status.conditions.find((c) => c.type === 'Ready');
}
