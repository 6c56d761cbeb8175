package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmrelay/llmrelay/internal/state"
)

// Retry budgets shared by the replicas (state.RetryBudgets).
//
// Each budget is one Redis hash, <prefix>{b:<name>}:budget, with one field
// per replica: its attempts and retries in flight, a sequence number and
// the time the entry lapses. Every replica counts its own in memory:
// Begin and the funcs that end attempts and release retries only change
// those counts, never waiting for Redis, and a publisher writes changed
// counts to the hash off the call's path, at most every
// budgetPublishGap, and every LeaseTTL/3 while anything is in flight.
//
// Retries are decided by one script, one round trip: it publishes the
// asking replica's counts, sums every live replica's entry and allows as
// many of the retries asked for as fit within the limit of the attempts in
// flight, adding them to the replica's entry. The retries a replica is
// asked for while its script is on its way are asked for together, in the
// next one (a batch), so each decision waits for at most two round trips
// and a replica never has two decisions in flight for one budget. So the
// retries in flight are counted exactly where it matters (every retry is
// added by the script that allows it; a release reaches Redis a little
// later, which only makes the budget stricter meanwhile), and other
// replicas' attempts in flight are at most a publication old. A replica
// that dies stops publishing, and its entry lapses within LeaseTTL.

// budgetPublishGap is the least time between two publications of this
// replica's counts: changes within it go out together.
const budgetPublishGap = 10 * time.Millisecond

// budgetBook is this replica's side of the shared retry budgets.
type budgetBook struct {
	mu     sync.Mutex
	byName map[string]*budget
	flush  chan struct{}
}

// budget is this replica's counts of one shared budget.
type budget struct {
	s   *Store
	key string

	mu      sync.Mutex
	active  int   // attempts in flight on this replica
	retries int   // retries in flight on this replica
	seq     int64 // orders this replica's publications: Redis keeps the latest
	dirty   bool  // changed since the last publication
	// deciding says a decision's script is on its way (and the publisher
	// leaves the budget to it); queue holds the retries asked for
	// meanwhile, which the next decision takes together.
	deciding bool
	queue    []*retryAsk
}

// retryAsk is one Retry waiting for its decision.
type retryAsk struct {
	v      *budgetView
	answer chan answer
}

// answer is what a waiting Retry is told.
type answer uint8

const (
	denied  answer = iota
	allowed        // in flight: counted in Redis and here
	local          // Redis failed: decide on this replica's counts
	lead           // run the next decision, for the queue
)

// budgetView is a budget under one limit: what RetryBudget returns.
type budgetView struct {
	b       *budget
	limit   state.BudgetLimit
	percent string // limit.Percent as the script reads it
}

var _ state.RetryBudgets = (*Store)(nil)

func (s *Store) budgetKey(name string) string { return s.prefix + "{b:" + name + "}:budget" }

// RetryBudget implements state.RetryBudgets.
func (s *Store) RetryBudget(name string, limit state.BudgetLimit) state.RetryBudget {
	bb := &s.budgets
	bb.mu.Lock()
	b := bb.byName[name]
	if b == nil {
		b = &budget{s: s, key: s.budgetKey(name)}
		bb.byName[name] = b
	}
	bb.mu.Unlock()
	return &budgetView{b: b, limit: limit, percent: strconv.FormatFloat(limit.Percent, 'g', -1, 64)}
}

// Begin implements state.RetryBudget: a local count, published later.
func (v *budgetView) Begin(context.Context) (end func()) {
	b := v.b
	b.add(1, 0)
	return b.once(-1, 0)
}

// Retry implements state.RetryBudget: one script while Redis answers
// (shared with the retries asked for at the same time on this replica);
// this replica's own counts with fail_open, a denial with fail_closed,
// while it does not.
func (v *budgetView) Retry(ctx context.Context) (release func(), ok bool) {
	b := v.b
	if !b.s.up.Load() {
		return v.local()
	}
	ask := &retryAsk{v: v, answer: make(chan answer, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, ask)
	first := !b.deciding
	b.deciding = true
	b.mu.Unlock()
	if first {
		b.decide(ctx)
	}
	for {
		switch <-ask.answer {
		case allowed:
			return b.once(0, -1), true
		case denied:
			return nil, false
		case local:
			return v.local()
		case lead:
			b.decide(ctx)
		}
	}
}

// decide decides every queued retry in one script, answers each, and hands
// the next decision to the first retry queued meanwhile, if any. The
// limit is the first queued retry's (they differ only across a config
// reload). b.deciding is set.
func (b *budget) decide(ctx context.Context) {
	s := b.s
	b.mu.Lock()
	batch := b.queue
	b.queue = nil
	b.seq++
	active, retries, seq := b.active, b.retries, b.seq
	b.dirty = false // the script publishes these counts
	b.mu.Unlock()
	v := batch[0].v
	// Not the caller's cancellation: the decision is the batch's.
	res, err := budgetScript.Run(context.WithoutCancel(ctx), s.rdb, []string{b.key},
		s.replica, active, retries, seq, micros(s.ttl), v.percent, v.limit.MinRetryConcurrency, len(batch)).Int64Slice()
	if err == nil && (len(res) != 3 || res[0] < 0 || res[0] > int64(len(batch))) {
		err = fmt.Errorf("budget script returned %v", res)
	}
	granted := 0
	if err == nil {
		granted = int(res[0])
	}
	b.mu.Lock()
	b.retries += granted
	var next *retryAsk
	if len(b.queue) > 0 {
		next = b.queue[0]
	} else {
		b.deciding = false
	}
	dirty := b.dirty
	b.mu.Unlock()
	if err != nil {
		s.metrics.StateStoreError("retry_budget")
		s.markDown(err)
	}
	for i, a := range batch {
		switch {
		case err != nil:
			a.answer <- local
		case i < granted:
			a.answer <- allowed
		default:
			a.answer <- denied
		}
	}
	if next != nil {
		next.answer <- lead
	} else if dirty {
		s.signalBudgets()
	}
}

// local decides a retry on this replica's own counts while Redis is
// unreachable (fail_open), or denies it (fail_closed).
func (v *budgetView) local() (release func(), ok bool) {
	if v.b.s.fallback() != nil {
		return nil, false
	}
	b := v.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.retries >= v.limit.Limit(b.active) {
		return nil, false
	}
	b.retries++
	b.dirty = true
	return b.once(0, -1), true
}

func (s *Store) signalBudgets() {
	select {
	case s.budgets.flush <- struct{}{}:
	default:
	}
}

// add changes this replica's counts and has them published soon.
func (b *budget) add(active, retries int) {
	b.mu.Lock()
	b.active += active
	b.retries += retries
	b.dirty = true
	b.mu.Unlock()
	b.s.signalBudgets()
}

// once returns a func that calls add(active, retries) the first time only.
func (b *budget) once(active, retries int) func() {
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			b.add(active, retries)
		}
	}
}

// publishBudgets publishes this replica's changed counts whenever they
// change (at most every budgetPublishGap), and every LeaseTTL/3 the counts
// of budgets with anything in flight, so their entries do not lapse.
func (s *Store) publishBudgets() {
	defer s.wg.Done()
	refresh := time.NewTicker(s.ttl / 3)
	defer refresh.Stop()
	gap := time.NewTimer(0)
	defer gap.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.budgets.flush:
		case <-refresh.C:
			s.markBudgets(false)
		}
		s.publish()
		gap.Reset(budgetPublishGap)
		select {
		case <-s.stop:
			return
		case <-gap.C:
		}
	}
}

// markBudgets marks budgets to be published: all of them, or those with
// anything in flight.
func (s *Store) markBudgets(all bool) {
	s.budgets.mu.Lock()
	defer s.budgets.mu.Unlock()
	for _, b := range s.budgets.byName {
		b.mu.Lock()
		if all || b.active > 0 || b.retries > 0 {
			b.dirty = true
		}
		b.mu.Unlock()
	}
}

// republishBudgets publishes every budget's counts at once: after an
// outage, Redis may have lost them or let them lapse.
func (s *Store) republishBudgets() {
	s.markBudgets(true)
	s.signalBudgets()
}

// publish writes the counts of every changed budget, in one pipelined
// round trip; a budget whose decision is on its way is left to it (which
// has it published after, if it changed meanwhile). While Redis is
// unreachable they stay marked, and go out when it answers again.
func (s *Store) publish() {
	if !s.up.Load() {
		return
	}
	type entry struct {
		b                    *budget
		active, retries, seq int64
	}
	var out []entry
	s.budgets.mu.Lock()
	for _, b := range s.budgets.byName {
		b.mu.Lock()
		if b.dirty && !b.deciding {
			b.dirty = false
			b.seq++
			out = append(out, entry{b, int64(b.active), int64(b.retries), b.seq})
		}
		b.mu.Unlock()
	}
	s.budgets.mu.Unlock()
	if len(out) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.ttl/3)
	defer cancel()
	pipe := s.rdb.Pipeline()
	for _, e := range out {
		// EVAL, not EVALSHA: see renew.
		budgetScript.Eval(ctx, pipe, []string{e.b.key}, s.replica, e.active, e.retries, e.seq, micros(s.ttl), "0", 0, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.metrics.StateStoreError("retry_budget")
		s.markDown(err)
		for _, e := range out {
			e.b.mu.Lock()
			e.b.dirty = true
			e.b.mu.Unlock()
		}
	}
}

// forgetBudgets queues the removal of this replica's entries on pipe, as
// it closes, and returns how many.
func (s *Store) forgetBudgets(ctx context.Context, pipe redis.Pipeliner) int {
	s.budgets.mu.Lock()
	defer s.budgets.mu.Unlock()
	for _, b := range s.budgets.byName {
		pipe.HDel(ctx, b.key, s.replica)
	}
	return len(s.budgets.byName)
}

// budgetScript publishes a replica's counts of one budget and, when asked,
// decides a retry, atomically.
//
//	KEYS[1]  the budget: a hash of replica → "attempts retries seq lapse"
//	ARGV[1]  this replica
//	ARGV[2]  its attempts in flight
//	ARGV[3]  its retries in flight, the one asked for included
//	ARGV[4]  the sequence number of these counts
//	ARGV[5]  the lease TTL (µs): the entry lapses that long after now
//	ARGV[6]  the budget's percent
//	ARGV[7]  its min_retry_concurrency
//	ARGV[8]  how many retries this replica asks for (0: publish only)
//
// Entries of other replicas that lapsed are removed. If Redis holds a
// later publication of this replica, that one is used. Of the retries
// asked for, as many are allowed as keep the retries in flight of every
// replica, this one included, at most max(min, ⌊percent·attempts/100⌋);
// they are added to this replica's entry. It returns {allowed, attempts in
// flight, retries in flight}.
var budgetScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local me = ARGV[1]
local active, retries, seq = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local totala, totalr = 0, 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local a, r, s, lapse = string.match(all[i + 1], '^(%d+) (%d+) (%d+) (%d+)$')
  local live = lapse ~= nil and tonumber(lapse) > now
  if all[i] == me then
    if live and tonumber(s) > seq then
      active, retries, seq = tonumber(a), tonumber(r), tonumber(s)
    end
  elseif live then
    totala = totala + tonumber(a)
    totalr = totalr + tonumber(r)
  else
    redis.call('HDEL', KEYS[1], all[i])
  end
end
totala = totala + active
totalr = totalr + retries
local granted = 0
local asked = tonumber(ARGV[8])
if asked > 0 then
  local limit = math.max(tonumber(ARGV[7]), math.floor(tonumber(ARGV[6]) * totala / 100))
  granted = math.max(0, math.min(asked, limit - totalr))
end
redis.call('HSET', KEYS[1], me, string.format('%.0f %.0f %.0f %.0f', active, retries + granted, seq, now + ttl))
redis.call('PEXPIRE', KEYS[1], math.ceil(2 * ttl / 1000))
return {granted, totala, totalr + granted}
`)
