package redisstore_test

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/logtest"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

var prefixes atomic.Int64

// config returns a redis config for srv with a key prefix of its own, so
// tests sharing one redis-server never see each other's keys.
func config(srv *redistest.Server) state.RedisConfig {
	c := state.DefaultConfig().Redis
	c.Address = srv.Addr
	c.KeyPrefix = "test" + strconv.FormatInt(prefixes.Add(1), 10) + ":"
	// Wide timeouts: a loaded test machine must not look like an outage.
	c.ReadTimeout, c.WriteTimeout = 5*time.Second, 5*time.Second
	c.HealthCheckInterval = 100 * time.Millisecond
	return c
}

func open(t *testing.T, cfg state.RedisConfig, opts redisstore.Options) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	srv := redistest.Start(t)
	// fail_closed, so that a failing command fails the test instead of
	// being decided on local limits.
	statetest.RunAll(t, func(t *testing.T) state.Store { return open(t, config(srv), redisstore.Options{FailClosed: true}) })
}

// poll calls cond until it is true or the deadline passes; the deadline is
// a guard against hangs, far beyond what any step needs.
func poll(t *testing.T, what string, deadline time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > deadline {
			t.Fatalf("%s: not within %v", what, deadline)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

func count(t *testing.T, s state.Leases, set string) int {
	t.Helper()
	n, err := s.Count(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLeasesSharedAndRenewed: two stores (two replicas) see each other's
// leases, and a live replica keeps its leases past the TTL by renewing them.
func TestLeasesSharedAndRenewed(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	cfg.LeaseTTL = 3 * time.Second
	a, b := open(t, cfg, redisstore.Options{}), open(t, cfg, redisstore.Options{})
	defer a.Close()
	defer b.Close()
	q := state.Quota{MaxConcurrent: 3}
	var held []state.Lease
	for _, s := range []state.Store{a, b, a} {
		adm, err := s.Admit(context.Background(), "k", q)
		if err != nil || !adm.Allowed {
			t.Fatalf("stream %d: %+v, %v", len(held)+1, adm, err)
		}
		held = append(held, adm.Lease)
	}
	if adm, err := b.Admit(context.Background(), "k", q); err != nil || adm.Refused != state.LimitConcurrency {
		t.Fatalf("a fourth stream on either replica: %+v, %v, want refused by concurrency", adm, err)
	}
	// Two TTLs later the leases are still held: they were renewed.
	time.Sleep(2 * cfg.LeaseTTL)
	if adm, err := b.Admit(context.Background(), "k", q); err != nil || adm.Refused != state.LimitConcurrency {
		t.Fatalf("after two lease TTLs: %+v, %v, want refused: live leases must be renewed", adm, err)
	}
	// A release reaches Redis just after the call ends, off its path: the
	// other replica sees the slot free a round trip later.
	held[0].Release()
	admitSoon(t, b, "k", q, "a stream after a release on the other replica").Lease.Release()
}

// admitSoon admits a call of key on s, retrying while a release made on
// another replica is still on its way to Redis.
func admitSoon(t *testing.T, s state.Store, key string, q state.Quota, what string) state.Admission {
	t.Helper()
	var adm state.Admission
	poll(t, what, 10*time.Second, func() bool {
		var err error
		if adm, err = s.Admit(context.Background(), key, q); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return adm.Allowed
	})
	return adm
}

// TestCrashedReplicaLeasesLapse: a replica that stops without releasing
// (its process died) loses its leases within the lease TTL.
func TestCrashedReplicaLeasesLapse(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	cfg.LeaseTTL = 2 * time.Second
	crashing, live := open(t, cfg, redisstore.Options{}), open(t, cfg, redisstore.Options{})
	defer live.Close()
	for range 2 {
		if _, ok, err := crashing.Acquire(context.Background(), "p/active", 0); err != nil || !ok {
			t.Fatalf("Acquire: %v, %v", ok, err)
		}
	}
	if n := count(t, live, "p/active"); n != 2 {
		t.Fatalf("the other replica counts %d leases, want 2", n)
	}
	redisstore.Crash(crashing)
	took := poll(t, "the crashed replica's leases lapse", time.Minute, func() bool { return count(t, live, "p/active") == 0 })
	t.Logf("leases lapsed %v after the crash (lease TTL %v)", took.Round(10*time.Millisecond), cfg.LeaseTTL)
	// Measured from the last renewal, so never later than the TTL plus
	// the polling; a generous bound, since the machine is loaded.
	if took > cfg.LeaseTTL+5*time.Second {
		t.Errorf("leases lapsed %v after the crash, want within the lease TTL (%v)", took, cfg.LeaseTTL)
	}
}

// TestOutageFailOpen: with Redis stopped, calls are decided on local
// limits (counted as fallbacks); when Redis is back, the shared limits
// come back, leases of streams still open included, without a restart.
func TestOutageFailOpen(t *testing.T) {
	srv := redistest.Start(t)
	m := metrics.New()
	cfg := config(srv)
	s := open(t, cfg, redisstore.Options{Metrics: m})
	defer s.Close()
	condc := make(chan state.Condition, 16)
	stop := s.Watch(func(c state.Condition) { condc <- c })
	defer stop()
	if c := <-condc; c != (state.Condition{Reachable: true, Admitting: true}) {
		t.Fatalf("first condition %+v, want reachable and admitting", c)
	}
	q := state.Quota{MaxConcurrent: 2}
	open1, err := s.Admit(context.Background(), "k", q)
	if err != nil || !open1.Allowed {
		t.Fatalf("first stream: %+v, %v", open1, err)
	}

	srv.Stop()
	c := <-condc
	if c != (state.Condition{Reachable: false, Admitting: true}) {
		t.Fatalf("condition with Redis stopped %+v, want unreachable and admitting (fail_open)", c)
	}
	// Local limits: the open stream counts; one more fits, then no more.
	open2, err := s.Admit(context.Background(), "k", q)
	if err != nil || !open2.Allowed {
		t.Fatalf("second stream during the outage: %+v, %v", open2, err)
	}
	if adm, err := s.Admit(context.Background(), "k", q); err != nil || adm.Refused != state.LimitConcurrency {
		t.Fatalf("third stream during the outage: %+v, %v, want refused by the local limit", adm, err)
	}
	rate := state.Quota{Rate: 0.1, Burst: 1}
	if adm, _ := s.Admit(context.Background(), "r", rate); !adm.Allowed {
		t.Fatalf("rate during the outage: %+v, want the local burst", adm)
	}
	if adm, _ := s.Admit(context.Background(), "r", rate); adm.Refused != state.LimitRate {
		t.Fatalf("rate during the outage: %+v, want refused by the local rate", adm)
	}
	if got := counter(t, m, metrics.NameStateStoreFallbacks, "decision", "local"); got < 4 {
		t.Errorf("%s{decision=local} = %v, want at least 4", metrics.NameStateStoreFallbacks, got)
	}
	if got := gauge(t, m, metrics.NameStateStoreUp); got != 0 {
		t.Errorf("%s = %v during the outage, want 0", metrics.NameStateStoreUp, got)
	}

	srv.Restart(t) // empty: Redis lost every key
	if c := <-condc; c != (state.Condition{Reachable: true, Admitting: true}) {
		t.Fatalf("condition after the restart %+v, want reachable", c)
	}
	// Both open streams, the one admitted during the outage included,
	// are shared again: another replica sees them.
	other := open(t, cfg, redisstore.Options{})
	defer other.Close()
	poll(t, "the open streams' leases restored in Redis", 30*time.Second, func() bool {
		adm, err := other.Admit(context.Background(), "k", q)
		if err != nil {
			t.Fatal(err)
		}
		if adm.Allowed {
			adm.Lease.Release()
		}
		return adm.Refused == state.LimitConcurrency
	})
	open1.Lease.Release()
	open2.Lease.Release()
	admitSoon(t, other, "k", q, "a stream after both streams ended").Lease.Release()
	if got := gauge(t, m, metrics.NameStateStoreUp); got != 1 {
		t.Errorf("%s = %v after the restart, want 1", metrics.NameStateStoreUp, got)
	}
}

// TestOutageFailClosed: with Redis stopped, every decision is refused with
// ErrUnavailable and the condition says not admitting; both recover.
func TestOutageFailClosed(t *testing.T) {
	srv := redistest.Start(t)
	m := metrics.New()
	s := open(t, config(srv), redisstore.Options{FailClosed: true, Metrics: m})
	defer s.Close()
	condc := make(chan state.Condition, 16)
	stop := s.Watch(func(c state.Condition) { condc <- c })
	defer stop()
	<-condc
	srv.Stop()
	if c := <-condc; c != (state.Condition{}) {
		t.Fatalf("condition with Redis stopped %+v, want neither reachable nor admitting", c)
	}
	_, err := s.Admit(context.Background(), "k", state.Quota{Rate: 1, Burst: 1})
	if !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Admit during the outage: %v, want ErrUnavailable", err)
	}
	if _, _, err := s.Acquire(context.Background(), "set", 1); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Acquire during the outage: %v, want ErrUnavailable", err)
	}
	if got := counter(t, m, metrics.NameStateStoreFallbacks, "decision", "refused"); got != 2 {
		t.Errorf("%s{decision=refused} = %v, want 2", metrics.NameStateStoreFallbacks, got)
	}
	srv.Restart(t)
	if c := <-condc; c != (state.Condition{Reachable: true, Admitting: true}) {
		t.Fatalf("condition after the restart %+v", c)
	}
	if adm, err := s.Admit(context.Background(), "k", state.Quota{Rate: 1, Burst: 1}); err != nil || !adm.Allowed {
		t.Fatalf("Admit after the restart: %+v, %v", adm, err)
	}
}

// TestStartsWithRedisDown: a store whose Redis is not up yet starts
// unreachable and recovers by itself.
func TestStartsWithRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	srv.Stop()
	s := open(t, config(srv), redisstore.Options{FailClosed: true})
	defer s.Close()
	condc := make(chan state.Condition, 16)
	stop := s.Watch(func(c state.Condition) { condc <- c })
	defer stop()
	if c := <-condc; c.Reachable || c.Admitting {
		t.Fatalf("condition %+v with Redis down, want unreachable, not admitting", c)
	}
	srv.Restart(t)
	for c := range condc {
		if c.Reachable && c.Admitting {
			break
		}
	}
}

// TestOutageLogLines: an outage logs one warning when it starts, one more
// every 30 s it lasts and one line when it ends, however long the replica
// ran before it. A replica up for more than 30 s used to log its first
// failed ping twice, the second time as "still unreachable ... down_for=0s".
func TestOutageLogLines(t *testing.T) {
	srv := redistest.Start(t)
	var logs logtest.Buffer
	m := metrics.New()
	clock := &fakeClock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	s := open(t, config(srv), redisstore.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Metrics: m, Now: clock.Now})
	defer s.Close()
	// The monitor writes what a failed ping calls for before it pings
	// again: once n more pings failed, the lines of the earlier ones are
	// all in the log.
	pingsFail := func(n float64, what string) {
		t.Helper()
		from := counter(t, m, metrics.NameStateStoreErrors, "op", "ping")
		poll(t, what, time.Minute, func() bool { return counter(t, m, metrics.NameStateStoreErrors, "op", "ping") >= from+n })
	}
	lines := func(text string) []string {
		var found []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, text) {
				found = append(found, l)
			}
		}
		return found
	}

	// The replica has run an hour, its health check pinging Redis (New
	// pings once, then the health check every 100 ms), before the outage.
	rdb := srv.Client(t)
	poll(t, "the health check pinging", time.Minute, func() bool { return pingsServed(t, rdb) >= 3 })
	clock.Advance(time.Hour)
	srv.Stop()
	waitDown(t, s)
	pingsFail(2, "pings failing after the outage started")
	if got := lines("state store unreachable;"); len(got) != 1 {
		t.Fatalf("the outage's start logged %d warnings, want 1:\n%s", len(got), logs.String())
	}
	if got := lines("still unreachable"); len(got) != 0 {
		t.Fatalf("an outage not 30 s old logged it is still on:\n%s", logs.String())
	}

	clock.Advance(30 * time.Second)
	pingsFail(2, "pings failing 30 s into the outage")
	if got := lines("still unreachable"); len(got) != 1 || !strings.Contains(got[0], "down_for=30s") {
		t.Fatalf("30 s into the outage, the lines saying it goes on: %q, want one with down_for=30s", got)
	}

	srv.Restart(t)
	waitUp(t, s)
	if got := lines("reachable again"); len(got) != 1 || !strings.Contains(got[0], "down_for=30s") {
		t.Fatalf("the outage's end: %q, want one line with down_for=30s", got)
	}
}

var pingStat = regexp.MustCompile(`(?m)^cmdstat_ping:calls=(\d+)`)

// pingsServed returns how many PINGs the Redis of rdb has answered.
func pingsServed(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := pingStat.FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// fakeClock is a clock that moves only when a test advances it. It is
// safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestPasswordFromEnvironment(t *testing.T) {
	cfg := state.DefaultConfig().Redis
	cfg.Address, cfg.PasswordEnv = "127.0.0.1:1", "TEST_REDIS_PASSWORD"
	_, err := redisstore.New(cfg, redisstore.Options{Getenv: func(string) string { return "" }})
	if err == nil || err.Error() != "state.redis.password_env: $TEST_REDIS_PASSWORD is empty or unset" {
		t.Fatalf("New with an empty password variable: %v", err)
	}
	o, err := redisstore.ClientOptions(cfg, func(k string) string { return map[string]string{"TEST_REDIS_PASSWORD": "s3cret"}[k] })
	if err != nil || o.Password != "s3cret" || o.MaxRetries != -1 {
		t.Fatalf("ClientOptions: %+v, %v", o, err)
	}
}

// counter returns the value of the counter name with label=value in m.
func counter(t *testing.T, m *metrics.Metrics, name, label, value string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, mm := range mf.GetMetric() {
			for _, l := range mm.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return mm.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// gauge returns the value of the gauge name in m, or -1 when it is not
// exported.
func gauge(t *testing.T, m *metrics.Metrics, name string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

// TestReleaseThenAdmitOnOneReplica: releases reach Redis off the call's
// path, yet a stream opened on the same replica right after the last one
// ended is never refused for it, even while the release's own round trip
// is in flight.
func TestReleaseThenAdmitOnOneReplica(t *testing.T) {
	srv := redistest.Start(t)
	s := open(t, config(srv), redisstore.Options{})
	defer s.Close()
	q := state.Quota{MaxConcurrent: 1}
	for i := range 500 {
		adm, err := s.Admit(context.Background(), "k", q)
		if err != nil || !adm.Allowed {
			t.Fatalf("stream %d, opened after the previous one ended: %+v, %v", i, adm, err)
		}
		adm.Lease.Release()
	}
	if n, err := s.Count(context.Background(), "k"); err != nil || n != 0 {
		t.Fatalf("Count = %d, %v", n, err)
	}
}

// TestConformanceOnCluster runs the conformance suite on a three-node Redis
// Cluster: a key's rate and leases share a hash tag, so each script finds
// all its keys on one node.
func TestConformanceOnCluster(t *testing.T) {
	addrs := redistest.StartCluster(t, 3)
	cfg := func() state.RedisConfig { return clusterConfig(addrs) }
	statetest.RunAll(t, func(t *testing.T) state.Store { return open(t, cfg(), redisstore.Options{FailClosed: true}) })
	// A budget's hash and a target's record are one key each: any node.
	t.Run("RetryBudget", func(t *testing.T) {
		statetest.RunRetryBudget(t, func(t *testing.T, limit state.BudgetLimit) state.RetryBudget {
			s := open(t, cfg(), redisstore.Options{FailClosed: true})
			t.Cleanup(func() { s.Close() })
			return s.RetryBudget("p", limit)
		})
	})
	t.Run("TargetHealth", func(t *testing.T) {
		statetest.RunTargetHealth(t, func(t *testing.T) state.TargetHealth {
			s := open(t, cfg(), redisstore.Options{FailClosed: true})
			t.Cleanup(func() { s.Close() })
			return s
		})
	})

	t.Run("LeasesRenewedAcrossNodes", func(t *testing.T) {
		c := cfg()
		c.LeaseTTL = time.Second
		s := open(t, c, redisstore.Options{FailClosed: true})
		defer s.Close()
		var held []state.Lease
		for i := range 20 { // sets spread over the nodes, renewed in one pipeline
			l, ok, err := s.Acquire(context.Background(), "set"+strconv.Itoa(i), 1)
			if err != nil || !ok {
				t.Fatalf("Acquire: %v, %v", ok, err)
			}
			held = append(held, l)
		}
		time.Sleep(3 * c.LeaseTTL)
		for i := range 20 {
			if n := count(t, s, "set"+strconv.Itoa(i)); n != 1 {
				t.Fatalf("set%d: Count = %d after 3 lease TTLs, want 1: renewals failed", i, n)
			}
		}
		for _, l := range held {
			l.Release()
		}
	})
}

// clusterConfig is a config for the cluster of addrs, with a key prefix
// of its own.
func clusterConfig(addrs []string) state.RedisConfig {
	c := state.DefaultConfig().Redis
	c.Mode, c.Addresses = state.RedisCluster, addrs
	c.KeyPrefix = "cluster" + strconv.FormatInt(prefixes.Add(1), 10) + ":"
	c.ReadTimeout, c.WriteTimeout = 5*time.Second, 5*time.Second
	c.HealthCheckInterval = 100 * time.Millisecond
	return c
}

// TestConformanceThroughSentinel runs the conformance suite against a
// primary found through Redis Sentinel (mode sentinel).
func TestConformanceThroughSentinel(t *testing.T) {
	primary := redistest.Start(t)
	sentinel := redistest.StartSentinel(t, primary, "llmrelay-primary")
	statetest.RunAll(t, func(t *testing.T) state.Store {
		c := config(primary)
		c.Mode, c.Address, c.Addresses, c.SentinelMaster = state.RedisSentinel, "", []string{sentinel}, "llmrelay-primary"
		return open(t, c, redisstore.Options{FailClosed: true})
	})
}

// TestMisconfiguredRedisFailsAtStart: a Redis that answers that the
// configuration is wrong fails New with what to change, instead of a
// replica that runs on local limits for good, taking it for an outage.
func TestMisconfiguredRedisFailsAtStart(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	if err := rdb.Do(ctx, "ACL", "SETUSER", "llmrelay", "on", ">s3cret", "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	password := func(string) string { return "wrong" }
	tests := []struct {
		name   string
		change func(*state.RedisConfig)
		prep   func()
		want   string
	}{
		{name: "db", change: func(c *state.RedisConfig) { c.DB = 40 }, want: "db 40 is past the databases"},
		{name: "password", change: func(c *state.RedisConfig) { c.Username, c.PasswordEnv = "llmrelay", "PW" }, want: "refused username and password_env"},
		{name: "cluster", change: func(c *state.RedisConfig) { c.Mode, c.Addresses = state.RedisCluster, []string{srv.Addr} }, want: "not part of a Redis Cluster"},
		{name: "no password", prep: func() {
			if err := rdb.ConfigSet(ctx, "requirepass", "x").Err(); err != nil {
				t.Fatal(err)
			}
		}, want: "Redis needs a password: set password_env"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.prep != nil {
				tc.prep()
			}
			cfg := config(srv)
			if tc.change != nil {
				tc.change(&cfg)
			}
			s, err := redisstore.New(cfg, redisstore.Options{Getenv: password})
			if err == nil {
				s.Close()
				t.Fatalf("New: a store, want an error saying %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want it to say %q", err, tc.want)
			}
		})
	}
}
