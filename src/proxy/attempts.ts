// The attempt loop: tries an ordered list of backends (from planAttempts) until one answers. Kept small and
// separate so failover policy (status-based retries, budgets, health) can grow here without touching the
// streaming code. Today: move on only after a connection-level failure, before anything reached the client.
import type { CompiledBackend } from '../config/table.js';
import { classifyFailure, isFailoverable, type FailureKind } from './upstream-errors.js';
import type { UpstreamResponse } from './upstream-client.js';

export interface AttemptSuccess {
  readonly ok: true;
  readonly response: UpstreamResponse;
  readonly backend: CompiledBackend;
  readonly attempts: number;
}

export interface AttemptFailure {
  readonly ok: false;
  readonly kind: FailureKind;
  /** The backend tried last (undefined only when there was none). */
  readonly backend: CompiledBackend | undefined;
  readonly attempts: number;
}

export interface AttemptHooks {
  /** Sends one request to one backend. */
  send(backend: CompiledBackend, attempt: number): Promise<UpstreamResponse>;
  /** Called after every attempt with its outcome: the response, or the failure kind. */
  onAttempt?(backend: CompiledBackend, outcome: UpstreamResponse | FailureKind): void;
  /** True once the client has gone away; stops the loop. */
  isAborted(): boolean;
}

export async function runAttempts(backends: readonly CompiledBackend[], hooks: AttemptHooks): Promise<AttemptSuccess | AttemptFailure> {
  let last: CompiledBackend | undefined;
  let kind: FailureKind = 'connect_error';
  let attempts = 0;
  for (const backend of backends) {
    last = backend;
    attempts++;
    try {
      const response = await hooks.send(backend, attempts);
      hooks.onAttempt?.(backend, response);
      return { ok: true, response, backend, attempts };
    } catch (err) {
      kind = classifyFailure(err, hooks.isAborted());
      hooks.onAttempt?.(backend, kind);
      if (!isFailoverable(kind)) break;
    }
  }
  return { ok: false, kind, backend: last, attempts };
}
