package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
)

// timing is one row of the in-process table.
type timing struct {
	name string
	d    []time.Duration
}

// sharedOps times what the retry budget, route target health and budgets
// cost per attempt and per call: the in-process budget against the redis
// store's (Begin and its end, per attempt; Retry, per retry decision), the
// redis store's target health (the read each routed call makes, the
// success and the failure it records), and a call's spend: its
// reservation and settlement under a key's and a team's budgets, and the
// settlement of a call under none (its usage record, queued).
func sharedOps(ctx context.Context, addr string, n int) ([]timing, error) {
	cfg := state.DefaultConfig().Redis
	cfg.Address, cfg.KeyPrefix = addr, "bench-shared:"
	rs, err := redisstore.New(cfg, redisstore.Options{})
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	limit := state.BudgetLimit{Percent: 20, MinRetryConcurrency: 3}
	local, shared := retry.NewBudget(limit), rs.RetryBudget("bench", limit)
	rows := []timing{
		{name: "memory budget Begin + end"},
		{name: "redis budget Begin + end (local)"},
		{name: "redis budget Retry (one round trip)"},
		{name: "redis TargetStatus (from the view)"},
		{name: "redis RecordTarget success"},
		{name: "redis RecordTarget failure (round trip)"},
		{name: "redis Reserve, key + team (round trip)"},
		{name: "redis Settle, budgeted (round trip)"},
		{name: "redis Settle, no budget (queued)"},
	}
	// A key's and its team's day budgets, too large to refuse anything.
	counters := []state.Counter{
		{ID: "k:bench/day/bench", Max: state.Amount{Cost: 1 << 50}, Expires: time.Now().Add(time.Hour)},
		{ID: "t:bench/day/bench", Max: state.Amount{Tokens: 1 << 50}, Expires: time.Now().Add(time.Hour)},
	}
	usage := []state.UsageDelta{{Day: "2025-01-01", Subject: "k:bench", Counts: map[string]int64{"calls": 1, "input": 10, "output": 20, "cost_nanos": 3000}}}
	policy := state.OutlierPolicy{Failures: 1 << 30, BaseEjection: time.Second, MaxEjection: time.Second}
	keys := []string{"bench/a", "bench/b"}
	for i := range n + n/4 {
		warm := i < n/4
		var d [9]time.Duration
		start := time.Now()
		local.Begin(ctx)()
		d[0] = time.Since(start)
		start = time.Now()
		shared.Begin(ctx)()
		d[1] = time.Since(start)
		start = time.Now()
		release, ok := shared.Retry(ctx)
		d[2] = time.Since(start)
		if !ok {
			return nil, fmt.Errorf("redis budget: retry denied with nothing in flight")
		}
		release()
		now := time.Now()
		start = time.Now()
		if _, err := rs.TargetStatus(ctx, keys, now); err != nil {
			return nil, err
		}
		d[3] = time.Since(start)
		start = time.Now()
		if _, err := rs.RecordTarget(ctx, keys[0], true, now, policy); err != nil {
			return nil, err
		}
		d[4] = time.Since(start)
		start = time.Now()
		if _, err := rs.RecordTarget(ctx, keys[1], false, now, policy); err != nil {
			return nil, err
		}
		d[5] = time.Since(start)
		id, amount := "bench-"+strconv.Itoa(i), state.Amount{Cost: 4000, Tokens: 40}
		start = time.Now()
		res, err := rs.Reserve(ctx, state.Reservation{ID: id, Counters: counters, Amount: amount, Now: now, Lapse: now.Add(time.Minute)})
		d[6] = time.Since(start)
		if err != nil || !res.Allowed {
			return nil, fmt.Errorf("redis Reserve: %+v, %v", res, err)
		}
		start = time.Now()
		if err := rs.Settle(ctx, state.Settlement{ID: id, Counters: counters, Reserved: amount, Spent: state.Amount{Cost: 3000, Tokens: 30}, Usage: usage, Now: now}); err != nil {
			return nil, err
		}
		d[7] = time.Since(start)
		start = time.Now()
		if err := rs.Settle(ctx, state.Settlement{ID: id + "-free", Usage: usage, Now: now}); err != nil {
			return nil, err
		}
		d[8] = time.Since(start)
		if !warm {
			for j := range rows {
				rows[j].d = append(rows[j].d, d[j])
			}
		}
	}
	return rows, nil
}

// beginLoops is how many Begin + end pairs beginMeans averages.
const beginLoops = 200_000

// beginMeans returns the mean time of a Begin and its end, in ns, on the
// in-process budget and on the redis store's (whose publication happens
// off the caller's path, in the store's publisher).
func beginMeans(ctx context.Context, addr string) (memory, redis float64) {
	cfg := state.DefaultConfig().Redis
	cfg.Address, cfg.KeyPrefix = addr, "bench-begin:"
	rs, err := redisstore.New(cfg, redisstore.Options{})
	if err != nil {
		return 0, 0
	}
	defer rs.Close()
	limit := state.BudgetLimit{Percent: 20, MinRetryConcurrency: 3}
	mean := func(b retry.Throttle) float64 {
		start := time.Now()
		for range beginLoops {
			b.Begin(ctx)()
		}
		return float64(time.Since(start).Nanoseconds()) / beginLoops
	}
	return mean(retry.NewBudget(limit)), mean(rs.RetryBudget("bench", limit))
}

// concurrentRetries has callers goroutines ask the redis store's budget
// for retries (and release those allowed) for d, and returns the
// decisions made and the scripts Redis ran for them: retries asked for
// while a replica's decision is on its way are decided together.
func concurrentRetries(ctx context.Context, addr string, callers int, d time.Duration) (decisions, scripts int64, err error) {
	cfg := state.DefaultConfig().Redis
	cfg.Address, cfg.KeyPrefix = addr, "bench-batch:"
	rs, err := redisstore.New(cfg, redisstore.Options{})
	if err != nil {
		return 0, 0, err
	}
	defer rs.Close()
	rdb := goredis.NewClient(&goredis.Options{Addr: addr})
	defer rdb.Close()
	b := rs.RetryBudget("bench", state.BudgetLimit{Percent: 20, MinRetryConcurrency: 8})
	before, err := evalCalls(ctx, rdb)
	if err != nil {
		return 0, 0, err
	}
	var n atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if release, ok := b.Retry(ctx); ok {
					release()
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	after, err := evalCalls(ctx, rdb)
	return n.Load(), after - before, err
}

var evalStat = regexp.MustCompile(`cmdstat_eval(?:sha)?:calls=(\d+)`)

// evalCalls returns how many scripts Redis has run (EVAL and EVALSHA).
func evalCalls(ctx context.Context, rdb *goredis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range evalStat.FindAllStringSubmatch(info, -1) {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		total += v
	}
	return total, nil
}
