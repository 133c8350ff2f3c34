// The Lua scripts of the Redis store: each runs atomically on the server, so replicas never see a half-applied
// take. `take` mirrors lease.ts's grant() line by line. Window counters are plain integers with an expiry;
// in-flight counters are a hash per counter with one field per replica (its held slots) and a heartbeat field
// `<replica>:t`, so slots of a replica that died stop counting once its heartbeat is older than `stale` ms.

/** Sum of the live replicas' slots in an in-flight hash (stale replicas' fields deleted on the way). */
const LIVE_SUM = `
local function live_sum(key, replica, now, stale)
  local all = redis.call('HGETALL', key)
  local held, beat = {}, {}
  for j = 1, #all, 2 do
    local f, v = all[j], tonumber(all[j + 1])
    if string.sub(f, -2) == ':t' then beat[string.sub(f, 1, -3)] = v else held[f] = v end
  end
  local sum = 0
  for r, h in pairs(held) do
    local b = beat[r]
    if r ~= replica and (b == nil or now - b > stale) then
      redis.call('HDEL', key, r, r .. ':t')
    else
      sum = sum + h
    end
  end
  return sum
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * KEYS: counters. ARGV: replica, stale ms, then per key: kind (w|c), need, extra, limit, ttl ms.
 * Returns {1, grant1, used1, grant2, used2, ...} or {0, index (0-based) of the first refusal, its count}.
 */
export const TAKE = `${LIVE_SUM}
local replica, stale = ARGV[1], tonumber(ARGV[2])
local grants, used = {}, {}
for i = 1, #KEYS do
  local b = 2 + (i - 1) * 5
  local kind, need, extra, limit = ARGV[b + 1], tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4])
  local u
  if kind == 'w' then u = tonumber(redis.call('GET', KEYS[i]) or '0') else u = live_sum(KEYS[i], replica, now, stale) end
  local free = limit - u
  if need > free then return {0, i - 1, u} end
  grants[i] = need + math.min(extra, math.floor((free - need) / 2))
  used[i] = u + grants[i]
end
local out = {1}
for i = 1, #KEYS do
  local b = 2 + (i - 1) * 5
  local kind, ttl = ARGV[b + 1], tonumber(ARGV[b + 5])
  if kind == 'w' then
    redis.call('INCRBY', KEYS[i], grants[i])
  else
    redis.call('HINCRBY', KEYS[i], replica, grants[i])
    redis.call('HSET', KEYS[i], replica .. ':t', now)
  end
  redis.call('PEXPIRE', KEYS[i], ttl)
  out[#out + 1] = grants[i]
  out[#out + 1] = used[i]
end
return out
`;

/**
 * KEYS: counters. ARGV: replica, then per key: kind (w|c), delta, ttl ms. Window counters: a positive delta adds
 * (a settlement debt), a negative one gives back, never below 0 nor into a window that has expired already.
 * In-flight counters: the replica's field moves by delta (0 is a heartbeat). Returns each counter's count after
 * (a window counter's; the replica's field): a delta of 0 on a window counter only reads it.
 */
export const ADJUST = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local replica = ARGV[1]
local out = {}
for i = 1, #KEYS do
  local b = 1 + (i - 1) * 3
  local kind, delta, ttl = ARGV[b + 1], tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  local v = 0
  if kind == 'w' then
    if delta > 0 then
      v = redis.call('INCRBY', KEYS[i], delta)
      redis.call('PEXPIRE', KEYS[i], ttl)
    elseif redis.call('EXISTS', KEYS[i]) == 1 then
      v = redis.call('INCRBY', KEYS[i], delta)
      if v < 0 then
        v = 0
        redis.call('SET', KEYS[i], 0, 'KEEPTTL')
      end
    end
  else
    v = redis.call('HINCRBY', KEYS[i], replica, delta)
    if v < 0 then
      v = 0
      redis.call('HSET', KEYS[i], replica, 0)
    end
    redis.call('HSET', KEYS[i], replica .. ':t', now)
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
  out[i] = v
end
return out
`;

/** KEYS: counters. ARGV: stale ms, then per key: kind (w|c). Returns each counter's value (all live replicas'). */
export const READ = `${LIVE_SUM}
local stale = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS do
  if ARGV[1 + i] == 'w' then out[i] = tonumber(redis.call('GET', KEYS[i]) or '0') else out[i] = live_sum(KEYS[i], '', now, stale) end
end
return out
`;
