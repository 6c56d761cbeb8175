package redisstore

import "github.com/redis/go-redis/v9"

// Every script reads the time from Redis (TIME), so the replicas, whose
// clocks may disagree, all measure rates and lease expiries on one clock.
// Times are microseconds since the Unix epoch, which a Lua number (a
// double) holds exactly. Scripts write only the keys they are given, so
// they run on Redis Cluster too: a key's rate and its leases share a hash
// tag (see keys).

// admitScript takes a lease and a rate token atomically, in one round trip.
//
//	KEYS[1]  the lease set: a sorted set of lease member → expiry
//	KEYS[2]  the rate key: the GCRA's theoretical arrival time (only read
//	         when ARGV[1] > 0)
//	ARGV[1]  the emission interval (µs between tokens); 0: no rate limit
//	ARGV[2]  the burst
//	ARGV[3]  the lease limit; 0: take no lease
//	ARGV[4]  the lease member
//	ARGV[5]  the lease TTL (µs)
//	ARGV[6…] members of the lease set released by this replica and not yet
//	         removed: removed first
//
// It returns {0, 0} when admitted, {1, µs until a token is due} when the
// rate refused, {2, the leases held} when the lease limit refused. A
// refused call takes nothing. Expired leases (of replicas that stopped
// renewing them) are dropped before counting.
var admitScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local limit = tonumber(ARGV[3])
local ttl = tonumber(ARGV[5])
for i = 6, #ARGV do
  redis.call('ZREM', KEYS[1], ARGV[i])
end
if limit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  local open = redis.call('ZCARD', KEYS[1])
  if open >= limit then
    return {2, open}
  end
end
if interval > 0 then
  local tat = tonumber(redis.call('GET', KEYS[2])) or now
  if tat < now then tat = now end
  local nexttat = tat + interval
  local allow_at = nexttat - interval * tonumber(ARGV[2])
  if allow_at > now then
    return {1, math.ceil(allow_at - now)}
  end
  redis.call('SET', KEYS[2], string.format('%.0f', nexttat), 'PX', math.max(1, math.ceil((nexttat - now) / 1000)))
end
if limit > 0 then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], math.ceil(2 * ttl / 1000))
end
return {0, 0}
`)

// renewScript extends this replica's leases of one set.
//
//	KEYS[1]  the lease set
//	ARGV[1]  the lease TTL (µs)
//	ARGV[2…] the members this replica holds
//
// It adds members that are missing, so the leases of streams still open
// come back after Redis lost its data (a restart without persistence).
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ttl = tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], math.ceil(2 * ttl / 1000))
return #ARGV - 1
`)

// countScript drops expired and released leases of a set and counts the
// rest.
//
//	KEYS[1]  the lease set
//	ARGV[…]  members released by this replica and not yet removed
var countScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
for i = 1, #ARGV do
  redis.call('ZREM', KEYS[1], ARGV[i])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
`)
