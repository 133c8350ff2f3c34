// A store call's deadline that counts the store's time, not this process's. A timer that fires after the event
// loop was busy (a cold process taking its first burst of requests) runs before the loop reads the sockets, so a
// reply that arrived well within the deadline would be declared late: ioredis's own commandTimeout does exactly
// that. Here an expired timer first lets the loop read what has arrived (setImmediate runs after the poll phase),
// and only a call still unanswered then is late.

export class DeadlineExceeded extends Error {}

/** `call`, or a DeadlineExceeded rejection once `ms` have passed without an answer that had arrived by then. */
export function withDeadline<T>(call: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new DeadlineExceeded(`the limits store did not answer within ${ms} ms`));
      });
    }, ms);
    call.then(
      (v) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        reject(err);
      },
    );
  });
}
