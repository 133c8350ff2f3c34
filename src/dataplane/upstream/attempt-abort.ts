// One attempt's abort: fired by the attempt's headers deadline or by the client leaving, heard by the upstream
// request (one listener), which settles the attempt's send at once, even while the request still waits in the pool
// (undici itself honours an abort only once a request is dispatched). Not an AbortController: its signal is an
// EventTarget with a map of listeners: heap and time per attempt spent on a single listener.

/** What the upstream request is told when its attempt aborts. */
export interface AbortListener {
  attemptAborted(reason: unknown): void;
}

/** An attempt's abort as the upstream request sees it. */
export interface AttemptSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** Sets the one listener, told once when the attempt aborts; undefined removes it. */
  listen(listener: AbortListener | undefined): void;
}

/** Fired by the attempt's deadline or the client leaving (failover.ts); the upstream request listens. */
export class AttemptAbort implements AttemptSignal {
  #aborted = false;
  #reason: unknown;
  #listener: AbortListener | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  listen(listener: AbortListener | undefined): void {
    this.#listener = listener;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.attemptAborted(reason);
  }
}

/**
 * The send p, or a rejection with the abort's reason as soon as the attempt aborts first, for a send that cannot
 * hear the abort while it waits for something else (an identity's token before the request); a late answer's body
 * is dropped. It listens until p settles or a listener of p's own (the upstream request's) takes over.
 */
export function untilAborted<R extends { readonly body: { destroy(): void } }>(signal: AttemptSignal, p: Promise<R>): Promise<R> {
  if (signal.aborted) {
    void p.then(
      (r) => r.body.destroy(),
      () => undefined,
    );
    return Promise.reject(signal.reason);
  }
  return new Promise<R>((resolve, reject) => {
    let settled = false;
    signal.listen({
      attemptAborted(reason) {
        if (settled) return;
        settled = true;
        reject(reason);
      },
    });
    p.then(
      (r) => {
        if (settled) r.body.destroy();
        else {
          settled = true;
          resolve(r);
        }
      },
      (e: unknown) => {
        if (settled) return;
        settled = true;
        reject(e);
      },
    );
  });
}
