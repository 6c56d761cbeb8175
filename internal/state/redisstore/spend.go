package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmrelay/llmrelay/internal/state"
)

// Budgets' counters and usage records (state.Spending). Every key shares
// the hash tag {gov}, so that one script reserves on a key's counters and
// its team's, and one settles both and writes the usage records, on Redis
// Cluster too (which puts them all on one node).
//
//	{gov}:c:<counter>            hash: uc, ut (used cost, tokens), rc, rt (reserved)
//	{gov}:r:<counter>            sorted set: "<reservation> <cost> <tokens>" → lapse (ms)
//	{gov}:u:<day>:<subject>      hash: counts by name
//	{gov}:d:<day>                set: the day's subjects
//	{gov}:s:<reservation>        string: the settlement ran (settleMarkTTL)
//
// Lapses and expiries are on the caller's clock (a reservation's lapse is
// compared with the caller's now; expiries are set as a TTL, Expires −
// Now), so that an injected clock moves them in tests and replicas whose
// clocks disagree by seconds disagree by no more.
//
// A settlement of a call under no budget gives no reservation back: it
// only adds to the usage records and to its windows' counters (which a
// budget set later starts from). It is queued and written by the flusher
// (settleLoop), woken at once, in pipelined batches, so that a call's end
// waits for no round trip; Usage flushes the queue first, and Reserve and
// Balances when it spends on their counters, so a replica reads its own
// calls back at once. A replica that crashes loses what it had not
// flushed.
//
// While Redis is unreachable, with fail_open, reservations are made on
// this replica's own counters (the local memory store), within what each
// budget had left when Redis last answered a reservation on it (known:
// its settled spend then), and every settlement is queued and added to
// Redis when it answers again: local reservations settle locally too, and
// reach Redis as spend (a reservation Redis took after all, its answer too
// late, is given back there). (A later outage counts the local spend of an
// earlier one twice, once in Redis's spend: stricter, never looser.) With
// fail_closed, Reserve and Balances fail
// state.ErrUnavailable; settlements are queued all the same (the calls
// they end were admitted before the outage).

func (s *Store) counterKey(id string) string { return s.prefix + "{gov}:c:" + id }
func (s *Store) resvKey(id string) string    { return s.prefix + "{gov}:r:" + id }
func (s *Store) usageKey(day, subject string) string {
	return s.prefix + "{gov}:u:" + day + ":" + subject
}
func (s *Store) usageDayKey(day string) string { return s.prefix + "{gov}:d:" + day }
func (s *Store) settledKey(id string) string   { return s.prefix + "{gov}:s:" + id }

// settleMarkTTL is how long Redis remembers that a settlement ran, so that
// one sent again runs once: a settlement whose answer came too late (a
// Redis that stalled ran it after the read timed out) is queued and sent
// again when Redis answers, seconds later, and would add its spend and
// usage twice. About 100 bytes of Redis per call for this long: the
// second send follows the first within seconds of Redis answering again.
const settleMarkTTL = 2 * time.Minute

var _ state.Spending = (*Store)(nil)

// maxQueuedSettlements bounds the settlements kept while Redis is
// unreachable; past it the oldest are dropped (and counted).
const maxQueuedSettlements = 100_000

// spendQueue is the settlements waiting for Redis, and the reservations
// made locally while it was unreachable.
type spendQueue struct {
	mu      sync.Mutex
	pending []state.Settlement
	local   map[string]struct{} // reservation IDs reserved on local counters
	known   map[string]knownSpend
	// queued counts the pending settlements spending on each counter, so
	// that a reservation or a balance of a counter flushes them first.
	queued map[string]int
	wake   chan struct{}
	// flushMu lets one flush run at a time.
	flushMu sync.Mutex
}

// knownSpend is a counter's settled spend as Redis last reported it, kept
// until the counter expires (zero: never).
type knownSpend struct {
	used    state.Amount
	expires time.Time
}

// maxKnown bounds the counters' known spend: past it the expired are
// dropped, and all of them if that leaves more than half.
const maxKnown = 100_000

// Amounts are integers below 2^53 (nano-dollars: 9 million dollars), which
// a Lua number holds exactly; incr writes them as integers (Lua would
// write -0 or 1e+15).
//
// purgeLua gives back and drops a counter's lapsed reservations: KEYS[c]
// is the counter, KEYS[c+1] its reservations, now the caller's time (ms).
const purgeLua = `
local function incr(c, f, n)
  redis.call('HINCRBY', c, f, string.format('%d', n))
end
local function purge(c, r, now)
  local lapsed = redis.call('ZRANGEBYSCORE', r, '-inf', now)
  if #lapsed == 0 then return end
  local cost, tokens = 0, 0
  for _, m in ipairs(lapsed) do
    local _, _, mc, mt = string.find(m, ' (%-?%d+) (%-?%d+)$')
    cost = cost + tonumber(mc)
    tokens = tokens + tonumber(mt)
  end
  incr(c, 'rc', 0 - cost)
  incr(c, 'rt', 0 - tokens)
  redis.call('ZREMRANGEBYSCORE', r, '-inf', now)
end
local function num(c, f)
  return tonumber(redis.call('HGET', c, f)) or 0
end
local function expire(k, ttl)
  if ttl > 0 then redis.call('PEXPIRE', k, ttl) end
end
`

// reserveScript reserves an amount on every counter, or on none.
//
//	KEYS     per counter: its hash, its reservations
//	ARGV[1]  now (ms), ARGV[2] the lapse (ms), ARGV[3] the reservation's
//	         member, ARGV[4] its cost, ARGV[5] its tokens
//	ARGV[6…] per counter: max cost, max tokens (0: no cap), TTL (ms; 0: none)
//
// It returns {0, then the used cost and tokens of each counter} when
// reserved, {i, used cost, used tokens, reserved cost, reserved tokens} of
// the first counter i (from 1) without room.
var reserveScript = redis.NewScript(purgeLua + `
local now = tonumber(ARGV[1])
local cost, tokens = tonumber(ARGV[4]), tonumber(ARGV[5])
local n = #KEYS / 2
local out = {0}
for i = 1, n do
  local c, r = KEYS[2*i-1], KEYS[2*i]
  purge(c, r, now)
  local uc, ut, rc, rt = num(c, 'uc'), num(c, 'ut'), num(c, 'rc'), num(c, 'rt')
  local maxc, maxt = tonumber(ARGV[3*i+3]), tonumber(ARGV[3*i+4])
  if (maxc > 0 and uc + rc + cost > maxc) or (maxt > 0 and ut + rt + tokens > maxt) then
    return {i, uc, ut, rc, rt}
  end
  table.insert(out, uc)
  table.insert(out, ut)
end
for i = 1, n do
  local c, r = KEYS[2*i-1], KEYS[2*i]
  incr(c, 'rc', cost)
  incr(c, 'rt', tokens)
  redis.call('ZADD', r, ARGV[2], ARGV[3])
  local ttl = tonumber(ARGV[3*i+5])
  expire(c, ttl)
  expire(r, ttl)
end
return out
`)

// settleScript ends a reservation and writes the usage records, once per
// settlement: a settlement sent again finds its mark and does nothing.
//
//	KEYS     per counter: its hash, its reservations; then per usage
//	         record: its hash, its day's set; last, the settlement's mark
//	ARGV[1]  the number of counters, ARGV[2] the reservation's member
//	         ("" for none), ARGV[3] spent cost, ARGV[4] spent tokens,
//	         ARGV[5] now (ms), ARGV[6] the usage records' TTL (ms; 0: none),
//	         ARGV[7] the mark's TTL (ms)
//	ARGV[8…] per counter: TTL (ms); then per usage record: its subject,
//	         its number of counts, then name and value of each
//
// It returns 1 when it settled, 0 when the settlement had run already.
var settleScript = redis.NewScript(purgeLua + `
if not redis.call('SET', KEYS[#KEYS], '1', 'NX', 'PX', ARGV[7]) then
  return 0
end
local n = tonumber(ARGV[1])
local member = ARGV[2]
local cost, tokens = tonumber(ARGV[3]), tonumber(ARGV[4])
local now = tonumber(ARGV[5])
local uttl = tonumber(ARGV[6])
for i = 1, n do
  local c, r = KEYS[2*i-1], KEYS[2*i]
  purge(c, r, now)
  if member ~= '' and redis.call('ZREM', r, member) == 1 then
    local _, _, mc, mt = string.find(member, ' (%-?%d+) (%-?%d+)$')
    incr(c, 'rc', 0 - tonumber(mc))
    incr(c, 'rt', 0 - tonumber(mt))
  end
  incr(c, 'uc', cost)
  incr(c, 'ut', tokens)
  local ttl = tonumber(ARGV[7+i])
  expire(c, ttl)
  expire(r, ttl)
end
local a = 8 + n
for k = 2*n + 1, #KEYS - 1, 2 do
  local u, d = KEYS[k], KEYS[k+1]
  local subject, m = ARGV[a], tonumber(ARGV[a+1])
  a = a + 2
  for j = 1, m do
    redis.call('HINCRBY', u, ARGV[a], ARGV[a+1])
    a = a + 2
  end
  redis.call('SADD', d, subject)
  expire(u, uttl)
  expire(d, uttl)
end
return 1
`)

// balancesScript returns counters' balances, lapsed reservations given
// back first.
//
//	KEYS     per counter: its hash, its reservations
//	ARGV[1]  now (ms)
var balancesScript = redis.NewScript(purgeLua + `
local now = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS / 2 do
  local c, r = KEYS[2*i-1], KEYS[2*i]
  purge(c, r, now)
  table.insert(out, {num(c, 'uc'), num(c, 'ut'), num(c, 'rc'), num(c, 'rt')})
end
return out
`)

func millis(t time.Time) int64 { return t.UnixMilli() }

// ttlMillis returns the TTL that makes a key expire at until on the
// caller's clock, now being that clock's time; 0 for none.
func ttlMillis(until, now time.Time) int64 {
	if until.IsZero() {
		return 0
	}
	return max(1, until.Sub(now).Milliseconds())
}

// member is a reservation's member in a counter's sorted set: it carries
// its amount, so that a script can give it back.
func resvMember(id string, a state.Amount) string {
	return id + " " + strconv.FormatInt(a.Cost, 10) + " " + strconv.FormatInt(a.Tokens, 10)
}

func (s *Store) counterKeys(counters []state.Counter) []string {
	keys := make([]string, 0, 2*len(counters))
	for _, c := range counters {
		keys = append(keys, s.counterKey(c.ID), s.resvKey(c.ID))
	}
	return keys
}

// Reserve implements state.Spending.
func (s *Store) Reserve(ctx context.Context, r state.Reservation) (state.Reserved, error) {
	if err := ctx.Err(); err != nil {
		return state.Reserved{}, err
	}
	if len(r.Counters) == 0 {
		return state.Reserved{Allowed: true}, nil
	}
	sent := false // the script went to Redis, and may have run there
	if s.up.Load() {
		s.flushFor(r.Counters)
		sent = true
		args := []any{millis(r.Now), millis(r.Lapse), resvMember(r.ID, r.Amount), r.Amount.Cost, r.Amount.Tokens}
		for _, c := range r.Counters {
			args = append(args, c.Max.Cost, c.Max.Tokens, ttlMillis(c.Expires, r.Now))
		}
		res, err := reserveScript.Run(ctx, s.rdb, s.counterKeys(r.Counters), args...).Int64Slice()
		if err == nil && (len(res) == 0 || res[0] == 0 && len(res) != 1+2*len(r.Counters) ||
			res[0] != 0 && len(res) != 5 || res[0] < 0 || res[0] > int64(len(r.Counters))) {
			err = fmt.Errorf("reserve script returned %v", res)
		}
		if err == nil {
			if res[0] == 0 {
				used := make([]state.Amount, len(r.Counters))
				for i := range used {
					used[i] = state.Amount{Cost: res[1+2*i], Tokens: res[2+2*i]}
				}
				s.remember(r.Now, r.Counters, used, false)
				return state.Reserved{Allowed: true}, nil
			}
			i := int(res[0] - 1)
			used := state.Amount{Cost: res[1], Tokens: res[2]}
			s.remember(r.Now, r.Counters[i:i+1], []state.Amount{used}, false)
			return state.Reserved{Refused: i, Balance: state.Balance{Used: used, Reserved: state.Amount{Cost: res[3], Tokens: res[4]}}}, nil
		}
		if err := s.failed(ctx, "reserve", err); err != nil {
			return state.Reserved{}, err // the call ended: its caller gives it back
		}
	}
	// The script may have run after all, its answer too late. A call
	// admitted here gives its reservation back in Redis as it settles; a
	// refused one never settles, so it is given back now (once Redis
	// answers), instead of being held there until it lapses.
	giveBack := func() {
		if sent {
			s.queueSettlement(state.Settlement{ID: r.ID, Counters: r.Counters, Reserved: r.Amount, Now: r.Now})
		}
	}
	if err := s.fallback(); err != nil {
		giveBack()
		return state.Reserved{}, err
	}
	res, err := s.reserveLocally(ctx, r)
	if err != nil || !res.Allowed {
		giveBack()
		return res, err
	}
	q := &s.spend
	q.mu.Lock()
	if q.local == nil {
		q.local = make(map[string]struct{})
	}
	q.local[r.ID] = struct{}{}
	q.mu.Unlock()
	return res, nil
}

// remember keeps the spend of counters, in order: what Redis reported, or
// (add) what this replica's settlement just added to it.
func (s *Store) remember(now time.Time, counters []state.Counter, used []state.Amount, add bool) {
	q := &s.spend
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.known == nil {
		q.known = make(map[string]knownSpend)
	}
	if len(q.known) >= maxKnown {
		for id, k := range q.known {
			if !k.expires.IsZero() && !now.Before(k.expires) {
				delete(q.known, id)
			}
		}
		if len(q.known) >= maxKnown/2 {
			clear(q.known) // so many live budgets: start again, rather than sweep on every call
		}
	}
	for i, c := range counters {
		u := used[i]
		if add {
			u = u.Add(q.known[c.ID].used)
		}
		q.known[c.ID] = knownSpend{used: u, expires: c.Expires}
	}
}

// reserveLocally decides r on this replica's own counters, each capped at
// what its budget had left by the spend Redis last reported: a budget
// spent before the outage stays spent.
func (s *Store) reserveLocally(ctx context.Context, r state.Reservation) (state.Reserved, error) {
	q := &s.spend
	known := make([]state.Amount, len(r.Counters))
	q.mu.Lock()
	for i, c := range r.Counters {
		known[i] = q.known[c.ID].used
	}
	q.mu.Unlock()
	lr := r
	lr.Counters = slices.Clone(r.Counters)
	for i := range lr.Counters {
		m := &lr.Counters[i].Max
		if m.Cost > 0 {
			m.Cost -= known[i].Cost
		}
		if m.Tokens > 0 {
			m.Tokens -= known[i].Tokens
		}
		// A cap at 0 or below is no room at all (0 would be no cap).
		if r.Counters[i].Max.Cost > 0 && m.Cost <= 0 || r.Counters[i].Max.Tokens > 0 && m.Tokens <= 0 {
			return state.Reserved{Refused: i, Balance: state.Balance{Used: known[i]}}, nil
		}
	}
	res, err := s.local.Reserve(ctx, lr)
	if err == nil && !res.Allowed {
		res.Balance.Used = res.Balance.Used.Add(known[res.Refused])
	}
	return res, err
}

// Settle implements state.Spending. A settlement Redis does not take is
// queued and retried once Redis answers again.
func (s *Store) Settle(ctx context.Context, st state.Settlement) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q := &s.spend
	q.mu.Lock()
	_, local := q.local[st.ID]
	delete(q.local, st.ID)
	q.mu.Unlock()
	if local {
		// Reserved on this replica's counters during an outage: settled
		// there, and its spend goes to Redis, with the reservation's
		// member all the same: a reservation whose answer came too late
		// (the script ran in Redis after the read timed out) is given back
		// there too, instead of being held until it lapses. One that never
		// reached Redis is not there to give back.
		if err := s.local.Settle(ctx, state.Settlement{ID: st.ID, Counters: st.Counters, Reserved: st.Reserved, Spent: st.Spent, Now: st.Now}); err != nil {
			return err
		}
	}
	if st.Reserved == (state.Amount{}) {
		// A call under no budget gives nothing back: it only adds to the
		// usage records and to its windows' counters, written off the
		// call's path, by the flusher, in batches (and at once before this
		// replica reads usage or balances).
		s.queueSettlement(st)
		return nil
	}
	if s.up.Load() {
		err := s.runSettle(ctx, st)
		if err == nil {
			// The budgets' spend, for a reservation decided locally; the
			// uncapped windows' is not needed until a budget reserves on
			// them, which reads it from Redis.
			var capped []state.Counter
			var spent []state.Amount
			for _, c := range st.Counters {
				if c.Max != (state.Amount{}) {
					capped = append(capped, c)
					spent = append(spent, st.Spent)
				}
			}
			s.remember(st.Now, capped, spent, true)
			return nil
		}
		if err := s.failed(ctx, "settle", err); err != nil {
			return err
		}
	}
	s.queueSettlement(st)
	return nil
}

// runSettle runs the settlement's script.
func (s *Store) runSettle(ctx context.Context, st state.Settlement) error {
	keys, args := s.settleArgs(st)
	return settleScript.Run(ctx, s.rdb, keys, args...).Err()
}

// settleArgs returns the keys and arguments of st's settlement script.
func (s *Store) settleArgs(st state.Settlement) ([]string, []any) {
	keys := s.counterKeys(st.Counters)
	member := ""
	if st.Reserved != (state.Amount{}) {
		member = resvMember(st.ID, st.Reserved)
	}
	args := []any{len(st.Counters), member, st.Spent.Cost, st.Spent.Tokens, millis(st.Now), ttlMillis(st.UsageExpires, st.Now), settleMarkTTL.Milliseconds()}
	for _, c := range st.Counters {
		args = append(args, ttlMillis(c.Expires, st.Now))
	}
	for _, u := range st.Usage {
		keys = append(keys, s.usageKey(u.Day, u.Subject), s.usageDayKey(u.Day))
		args = append(args, u.Subject, len(u.Counts))
		for name, n := range u.Counts {
			args = append(args, name, n)
		}
	}
	return append(keys, s.settledKey(st.ID)), args
}

// queueSettlement keeps st for the flusher, dropping the oldest past the
// bound, and wakes the flusher.
func (s *Store) queueSettlement(st state.Settlement) {
	q := &s.spend
	q.mu.Lock()
	if len(q.pending) >= maxQueuedSettlements {
		q.unqueue(q.pending[:1])
		q.pending = q.pending[1:]
		s.metrics.StateStoreError("settle_dropped")
	}
	q.pending = append(q.pending, st)
	if len(st.Counters) > 0 && q.queued == nil {
		q.queued = make(map[string]int)
	}
	for _, c := range st.Counters {
		q.queued[c.ID]++
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// unqueue takes sts, leaving the queue, out of q.queued; q.mu is held.
func (q *spendQueue) unqueue(sts []state.Settlement) {
	for _, st := range sts {
		for _, c := range st.Counters {
			if q.queued[c.ID]--; q.queued[c.ID] <= 0 {
				delete(q.queued, c.ID)
			}
		}
	}
}

// flushFor flushes the queued settlements if one of them spends on one of
// counters: a reservation or a balance counts this replica's last calls,
// those under no budget too (a budget just set counts them). Without such
// a settlement, as on almost every call, it costs a map lookup per
// counter.
func (s *Store) flushFor(counters []state.Counter) {
	q := &s.spend
	q.mu.Lock()
	queued := false
	for _, c := range counters {
		if q.queued[c.ID] > 0 {
			queued = true
			break
		}
	}
	q.mu.Unlock()
	if queued {
		s.flushSettlements()
	}
}

// settleBatch is the most settlements the flusher sends in one pipeline.
const settleBatch = 256

// settleLoop adds the queued settlements to Redis while it answers: at
// once when one is queued, and every health-check interval for those an
// outage kept.
func (s *Store) settleLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.spend.wake:
		}
		s.flushSettlements()
	}
}

// flushSettlements sends the queued settlements in pipelined batches (one
// round trip each) until none is left or Redis fails; a settlement whose
// script ran is never sent again. One flush runs at a time.
func (s *Store) flushSettlements() {
	q := &s.spend
	q.flushMu.Lock()
	defer q.flushMu.Unlock()
	for s.up.Load() {
		q.mu.Lock()
		batch := slices.Clone(q.pending[:min(len(q.pending), settleBatch)])
		q.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.ReadTimeout+s.opts.WriteTimeout)
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.Cmd, len(batch))
		for i, st := range batch {
			// EVAL, not EVALSHA: a pipeline cannot fall back on NOSCRIPT.
			keys, args := s.settleArgs(st)
			cmds[i] = settleScript.Eval(ctx, pipe, keys, args...)
		}
		_, err := pipe.Exec(ctx)
		cancel()
		done := 0
		for done < len(cmds) && cmds[done].Err() == nil {
			done++
		}
		q.mu.Lock()
		q.unqueue(q.pending[:done])
		q.pending = q.pending[done:] // only this flush takes from the head
		q.mu.Unlock()
		if err != nil {
			s.metrics.StateStoreError("settle")
			s.markDown(err)
			return
		}
	}
}

// Balances implements state.Spending.
func (s *Store) Balances(ctx context.Context, counters []string, now time.Time) ([]state.Balance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(counters) == 0 {
		return nil, nil
	}
	if s.up.Load() {
		cs := make([]state.Counter, len(counters))
		for i, id := range counters {
			cs[i].ID = id
		}
		s.flushFor(cs)
		res, err := balancesScript.Run(ctx, s.rdb, s.counterKeys(cs), millis(now)).Slice()
		if err == nil && len(res) != len(counters) {
			err = fmt.Errorf("balances script returned %d balances for %d counters", len(res), len(counters))
		}
		if err == nil {
			out := make([]state.Balance, len(counters))
			for i, r := range res {
				v, ok := r.([]any)
				if !ok || len(v) != 4 {
					return nil, fmt.Errorf("balances script returned %v", r)
				}
				n := make([]int64, 4)
				for j := range v {
					n[j], _ = v[j].(int64)
				}
				out[i] = state.Balance{Used: state.Amount{Cost: n[0], Tokens: n[1]}, Reserved: state.Amount{Cost: n[2], Tokens: n[3]}}
			}
			return out, nil
		}
		if err := s.failed(ctx, "balances", err); err != nil {
			return nil, err
		}
	}
	if err := s.fallback(); err != nil {
		return nil, err
	}
	return s.local.Balances(ctx, counters, now)
}

// Usage implements state.Spending: the days' subjects, then their
// records (up to q.Limit), in two pipelined round trips.
func (s *Store) Usage(ctx context.Context, q state.UsageQuery) ([]state.UsageRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	days, err := daysBetween(q.From, q.To)
	if err != nil {
		return nil, err
	}
	if !s.up.Load() {
		return nil, s.downError()
	}
	s.flushSettlements() // this replica's last calls, read back at once
	pipe := s.rdb.Pipeline()
	subjects := make([]*redis.StringSliceCmd, len(days))
	for i, d := range days {
		subjects[i] = pipe.SMembers(ctx, s.usageDayKey(d))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.logError(ctx, "usage", err)
	}
	var out []state.UsageRecord
	var cmds []*redis.MapStringStringCmd
	pipe = s.rdb.Pipeline()
days:
	for i, d := range days {
		subs := subjects[i].Val()
		slices.Sort(subs)
		for _, sub := range subs {
			if len(q.Subjects) > 0 && !slices.Contains(q.Subjects, sub) {
				continue
			}
			if q.Limit > 0 && len(out) == q.Limit {
				break days
			}
			out = append(out, state.UsageRecord{Day: d, Subject: sub})
			cmds = append(cmds, pipe.HGetAll(ctx, s.usageKey(d, sub)))
		}
	}
	if len(cmds) == 0 {
		return nil, nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.logError(ctx, "usage", err)
	}
	for i, c := range cmds {
		counts := make(map[string]int64, len(c.Val()))
		for name, v := range c.Val() {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("redisstore: usage record %s %s: %s is %q", out[i].Day, out[i].Subject, name, v)
			}
			counts[name] = n
		}
		out[i].Counts = counts
	}
	return out, nil
}

// daysBetween lists the days from from to to, both "YYYY-MM-DD".
func daysBetween(from, to string) ([]string, error) {
	f, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return nil, fmt.Errorf("redisstore: usage from %q: %w", from, err)
	}
	l, err := time.Parse(time.DateOnly, to)
	if err != nil {
		return nil, fmt.Errorf("redisstore: usage to %q: %w", to, err)
	}
	var days []string
	for d := f; !d.After(l); d = d.AddDate(0, 0, 1) {
		days = append(days, d.Format(time.DateOnly))
		if len(days) > 3660 {
			return nil, fmt.Errorf("redisstore: usage from %s to %s: more than ten years", from, to)
		}
	}
	return days, nil
}
