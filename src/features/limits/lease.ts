// The lease arithmetic every store applies, pure so it is tested once and the Redis script mirrors it line by
// line (redis-scripts.ts). A replica asks for `need` units (what the request in hand still lacks) plus `extra`
// (a lease it may spend on later requests without asking again). The store grants all of `need` or nothing,
// and of `extra` at most half of what would be left after `need`: near the limit leases shrink to nothing, so
// the last units of a window go one request at a time and the store's count never passes the limit through a
// grant. What one replica holds unspent, others cannot use until it returns it (idle leases go back at the next
// sync), which can only under-admit, never over-admit.

/** Units granted (need + part of extra), or 0 when `need` does not fit under `limit` given `used`. */
export function grant(used: number, need: number, extra: number, limit: number): number {
  const free = limit - used;
  if (need > free) return 0;
  return need + Math.min(extra, Math.floor((free - need) / 2));
}

/**
 * The extra a replica asks for on top of what it needs: a twentieth of the limit, so a busy replica asks the
 * store about once per 5% of a window's budget. 0 for the in-process store, and below 20 units (where a lease
 * would be 0 anyway), so small limits are exact.
 */
export function leaseExtra(limit: number, leases: boolean): number {
  return leases ? Math.floor(limit / 20) : 0;
}
