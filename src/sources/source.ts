// The one contract both config sources (manifest directory, Kubernetes API) implement. A source delivers
// complete snapshots; the pipeline compiles each snapshot and swaps the table. Sources never compile.
import type { SourcedObject } from '../compile/resources.js';

export interface ConfigSnapshot {
  /** Every object the source currently knows: the three kinds and the Secrets they may reference. */
  readonly objects: readonly SourcedObject[];
}

export interface ConfigSource {
  /**
   * Starts reading. `onSnapshot` is called with the first complete snapshot (which is what makes the pod
   * ready) and again after every change, debounced by the source. Resolves once the first snapshot has
   * been delivered, or rejects if it cannot be produced at all.
   */
  start(onSnapshot: (snapshot: ConfigSnapshot) => void): Promise<void>;
  /** Stops watching; no snapshot is delivered after it resolves. */
  stop(): Promise<void>;
}
