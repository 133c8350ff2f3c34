// A warning that may come many times a second (a store that is down fails every call) written at most once per
// interval, saying how many were left out since the last one.

/** Calls `write` at most once per `everyMs`, with the number of calls skipped since the last write. */
export function throttled(everyMs: number, now: () => number = Date.now): (write: (suppressed: number) => void) => void {
  let last = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  return (write) => {
    const t = now();
    if (t - last < everyMs) {
      suppressed++;
      return;
    }
    last = t;
    write(suppressed);
    suppressed = 0;
  };
}
