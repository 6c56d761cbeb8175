package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmrelay/llmrelay/internal/state"
)

// Route target health shared by the replicas (state.TargetHealth).
//
// Each target that failed since its last success has one Redis hash,
// <prefix>{t:<provider>/<model>}:health, with its failures in a row, its
// ejections in a row and its latest ejection's start and end (µs, on the
// callers' clocks, as the interface says). A failure is recorded by one
// script, one round trip, which makes OutlierPolicy.Next's transition
// atomically, so that of many replicas failing at once exactly one ejects
// the target (and logs and counts it).
//
// Reads cost no round trip: every replica keeps a view of the targets it
// was asked about, which the answers of its own scripts update at once and
// a refresh reads from Redis every HealthCheckInterval (one pipelined
// round trip for all of them), so another replica's ejection reaches it
// within that interval. A target's first read waits for Redis once. A
// success restores the target in the view at once and in Redis off the
// call's path (or first thing in the target's next failure script), and
// only when the view knew of failures: a healthy target's successes cost
// nothing. While Redis is unreachable each replica goes on from its view
// by itself (in both failure modes: a target's health is no limit to fail
// closed on), and the refresh brings the shared health back when Redis
// answers.

// healthRetention is how long a target's record outlives its latest
// ejection (or its latest failure): a target that fails now and then, but
// never in a row, and is not called for a day, starts afresh.
const healthRetention = 24 * time.Hour

// healthBook is this replica's view of the targets' health.
type healthBook struct {
	mu sync.Mutex
	// view is every target asked about or recorded, by key.
	view map[string]healthEntry
	// resets are targets restored here whose record Redis still holds.
	resets map[string]bool
	flush  chan struct{}
	// pushing is held by pushResets from reading resets until its deletes
	// are done, and by a failure while it takes its target's reset: a
	// push's delete must never land after a failure counted from the
	// restored record, or the failure is lost.
	pushing sync.Mutex
}

// healthEntry is one target's status in the view; gen counts the changes
// this replica made to it, so that a refresh read before one of them does
// not undo it.
type healthEntry struct {
	st  state.TargetStatus
	gen uint64
}

func newHealthBook() healthBook {
	return healthBook{view: map[string]healthEntry{}, resets: map[string]bool{}, flush: make(chan struct{}, 1)}
}

var _ state.TargetHealth = (*Store)(nil)

func (s *Store) healthKey(target string) string { return s.prefix + "{t:" + target + "}:health" }

// set records a status this replica learned for key (its own script's, or
// its own transition), over any refresh in flight.
func (h *healthBook) set(key string, st state.TargetStatus) {
	st.Ejected, st.JustEjected = false, false
	h.mu.Lock()
	e := h.view[key]
	e.st, e.gen = st, e.gen+1
	h.view[key] = e
	h.mu.Unlock()
}

// RecordTarget implements state.TargetHealth. A failure is one script
// while Redis answers; a success costs no round trip on the caller's path.
func (s *Store) RecordTarget(ctx context.Context, key string, ok bool, now time.Time, p state.OutlierPolicy) (state.TargetStatus, error) {
	if err := ctx.Err(); err != nil {
		return state.TargetStatus{}, err
	}
	h := &s.health
	if ok {
		h.mu.Lock()
		e := h.view[key]
		known := e.st != (state.TargetStatus{})
		e.st, e.gen = state.TargetStatus{}, e.gen+1
		h.view[key] = e
		if known {
			h.resets[key] = true
		}
		h.mu.Unlock()
		if known {
			select {
			case h.flush <- struct{}{}:
			default:
			}
		}
		return state.TargetStatus{}, nil
	}
	if s.up.Load() {
		h.pushing.Lock()
		h.mu.Lock()
		reset := h.resets[key]
		delete(h.resets, key)
		h.mu.Unlock()
		h.pushing.Unlock()
		res, err := recordScript.Run(ctx, s.rdb, []string{s.healthKey(key)},
			now.UnixMicro(), p.Failures, micros(p.BaseEjection), micros(p.MaxEjection), healthRetention.Milliseconds(), flag(reset)).Int64Slice()
		if err == nil && len(res) != 5 {
			err = fmt.Errorf("record script returned %v", res)
		}
		if err == nil {
			st := targetStatus(res[0], res[1], res[2], res[3], now)
			st.JustEjected = res[4] == 1
			h.set(key, st)
			return st, nil
		}
		if err := s.failed(ctx, "target_health", err); err != nil {
			return state.TargetStatus{}, err
		}
	}
	// Unreachable: this replica's own outlier detection, from its view.
	h.mu.Lock()
	e := h.view[key]
	st := p.Next(e.st, now)
	e.st, e.gen = st, e.gen+1
	e.st.Ejected, e.st.JustEjected = false, false
	h.view[key] = e
	h.mu.Unlock()
	return st, nil
}

// TargetStatus implements state.TargetHealth, from this replica's view; a
// target never asked about before is read from Redis first.
func (s *Store) TargetStatus(ctx context.Context, keys []string, now time.Time) ([]state.TargetStatus, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h := &s.health
	var missing []string
	h.mu.Lock()
	for _, k := range keys {
		if _, ok := h.view[k]; !ok {
			missing = append(missing, k)
		}
	}
	h.mu.Unlock()
	if len(missing) > 0 {
		if err := s.readHealth(ctx, missing); err != nil {
			return nil, err
		}
	}
	out := make([]state.TargetStatus, len(keys))
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, k := range keys {
		st := h.view[k].st
		st.Ejected = now.Before(st.Until)
		out[i] = st
	}
	return out, nil
}

// readHealth reads the targets keys from Redis into the view, in one
// pipelined round trip, and adds them to what the refresh reads. Targets
// this replica changed meanwhile, or restored without telling Redis yet,
// keep their view. A Redis that does not answer leaves them as the view
// has them (healthy when new); only the caller's own end is an error.
func (s *Store) readHealth(ctx context.Context, keys []string) error {
	h := &s.health
	gens := make([]uint64, len(keys))
	h.mu.Lock()
	for i, k := range keys {
		e, ok := h.view[k]
		if !ok {
			h.view[k] = e
		}
		gens[i] = e.gen
	}
	h.mu.Unlock()
	if !s.up.Load() {
		return nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.HMGet(ctx, s.healthKey(k), "failures", "ejections", "ejected_at", "until")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return s.failed(ctx, "target_health", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, k := range keys {
		e := h.view[k]
		if e.gen != gens[i] || h.resets[k] {
			continue
		}
		st, err := parseHealth(cmds[i].Val())
		if err != nil {
			continue // not ours to fix; the next failure script rewrites it
		}
		e.st = st
		h.view[k] = e
	}
	return nil
}

// healthLoop refreshes the view every HealthCheckInterval and pushes
// restorations to Redis whenever a success signals one.
func (s *Store) healthLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.interval)
	defer t.Stop()
	h := &s.health
	for {
		select {
		case <-s.stop:
			return
		case <-h.flush:
			s.pushResets()
			continue
		case <-t.C:
		}
		h.mu.Lock()
		keys := make([]string, 0, len(h.view))
		for k := range h.view {
			keys = append(keys, k)
		}
		h.mu.Unlock()
		if len(keys) == 0 || !s.up.Load() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.interval)
		_ = s.readHealth(ctx, keys)
		cancel()
	}
}

// pushResets removes the records of the targets restored on this replica
// from Redis, in one round trip. Those that fail stay queued: the target's
// next failure script restores it first, or a later success pushes again.
func (s *Store) pushResets() {
	if !s.up.Load() {
		return
	}
	h := &s.health
	h.pushing.Lock()
	defer h.pushing.Unlock()
	h.mu.Lock()
	targets := make([]string, 0, len(h.resets))
	for k := range h.resets {
		targets = append(targets, k)
	}
	h.mu.Unlock()
	if len(targets) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.ttl/3)
	defer cancel()
	pipe := s.rdb.Pipeline()
	for _, k := range targets {
		pipe.Del(ctx, s.healthKey(k))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.metrics.StateStoreError("target_health")
		s.markDown(err)
		return
	}
	h.mu.Lock()
	for _, k := range targets {
		delete(h.resets, k)
	}
	h.mu.Unlock()
}

// flag is a script's boolean argument.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// targetStatus builds a status from a record's fields (times in µs; 0:
// none).
func targetStatus(failures, ejections, ejectedAt, until int64, now time.Time) state.TargetStatus {
	st := state.TargetStatus{Failures: int(failures), Ejections: int(ejections)}
	if ejectedAt != 0 {
		st.EjectedAt = time.UnixMicro(ejectedAt)
	}
	if until != 0 {
		st.Until = time.UnixMicro(until)
	}
	st.Ejected = now.Before(st.Until)
	return st
}

// parseHealth reads an HMGET of a record: all nil when there is none (a
// healthy target).
func parseHealth(vals []any) (state.TargetStatus, error) {
	var n [4]int64
	for i, v := range vals {
		if v == nil {
			continue
		}
		str, ok := v.(string)
		if !ok {
			return state.TargetStatus{}, fmt.Errorf("target health field %d: %T", i, v)
		}
		x, err := strconv.ParseInt(str, 10, 64)
		if err != nil {
			return state.TargetStatus{}, fmt.Errorf("target health field %d: %w", i, err)
		}
		n[i] = x
	}
	st := targetStatus(n[0], n[1], n[2], n[3], time.Time{})
	st.Ejected = false
	return st, nil
}

// recordScript records a failed attempt to a target: OutlierPolicy.Next,
// atomically.
//
//	KEYS[1]  the target's record: a hash of failures, ejections,
//	         ejected_at and until (µs)
//	ARGV[1]  now (µs, the caller's clock)
//	ARGV[2]  the failures in a row that eject
//	ARGV[3]  the base ejection (µs)
//	ARGV[4]  the longest ejection (µs)
//	ARGV[5]  how long the record outlives its ejection (ms)
//	ARGV[6]  1: the target succeeded on this replica since; restore it
//	         first
//
// A target ejected now is left as it is. Otherwise the failure ejects it
// when it is on probation (ejected before) or the last allowed in a row,
// for base × ejections, at most the longest; else it is counted. It
// returns {failures, ejections, ejected_at, until, 1 if this failure
// ejected the target}.
var recordScript = redis.NewScript(`
if ARGV[6] == '1' then
  redis.call('DEL', KEYS[1])
end
local h = redis.call('HMGET', KEYS[1], 'failures', 'ejections', 'ejected_at', 'until')
local f, n = tonumber(h[1]) or 0, tonumber(h[2]) or 0
local at, u = tonumber(h[3]) or 0, tonumber(h[4]) or 0
local now = tonumber(ARGV[1])
if now < u then
  return {f, n, at, u, 0}
end
local just = 0
if n > 0 or f + 1 >= tonumber(ARGV[2]) then
  n = n + 1
  f = 0
  at = now
  u = now + math.min(tonumber(ARGV[3]) * n, tonumber(ARGV[4]))
  just = 1
else
  f = f + 1
end
redis.call('HSET', KEYS[1], 'failures', string.format('%.0f', f), 'ejections', string.format('%.0f', n),
  'ejected_at', string.format('%.0f', at), 'until', string.format('%.0f', u))
redis.call('PEXPIRE', KEYS[1], math.ceil(math.max(u - now, 0) / 1000) + tonumber(ARGV[5]))
return {f, n, at, u, just}
`)
