package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/logtest"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

// aclRules are the least privileges of llmrelay's Redis user, as
// docs/scale-out.md lists them: its keys, and the commands it and its
// scripts run.
var aclRules = []any{"~llmrelay:*", "resetchannels", "&llmrelay:*", "+@connection",
	"+eval", "+evalsha", "+time", "+get", "+set", "+zadd", "+zrem", "+zremrangebyscore", "+zcard", "+pexpire",
	"+hgetall", "+hmget", "+hset", "+hdel", "+del",
	// event logs of resumable calls
	"+multi", "+exec", "+hget", "+hexists", "+xadd", "+xrange", "+xread", "+exists", "+pttl",
	// the replicas' presence, which tells a crashed writer of a log
	"+ssubscribe", "+pubsub|shardnumsub",
	// the server's run_id, which tells a restart
	"+info",
	// stored keys, budgets and usage (the admin API)
	"+hincrby", "+sadd", "+smembers", "+zrangebyscore", "+zrangebylex"}

// TestLeastPrivilegeACLUser runs every operation (admission, leases,
// renewal, release flushing, counting, retry budgets and their
// publication, route target health, its refresh and restoration, close) as a Redis ACL user with only
// the documented rules: none of them fails.
func TestLeastPrivilegeACLUser(t *testing.T) {
	srv := redistest.Start(t)
	args := append([]any{"ACL", "SETUSER", "llmrelay", "on", ">s3cret"}, aclRules...)
	if err := srv.Client(t).Do(context.Background(), args...).Err(); err != nil {
		t.Fatal(err)
	}
	cfg := config(srv)
	cfg.KeyPrefix, cfg.Username, cfg.PasswordEnv = "llmrelay:", "llmrelay", "TEST_REDIS_PASSWORD"
	cfg.LeaseTTL = time.Second
	m := metrics.New()
	var logs logtest.Buffer
	s := open(t, cfg, redisstore.Options{Metrics: m, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Getenv: func(string) string { return "s3cret" }})
	ctx := context.Background()
	adm, err := s.Admit(ctx, "k", state.Quota{Rate: 10, Burst: 5, MaxConcurrent: 3})
	if err != nil || !adm.Allowed {
		t.Fatalf("Admit: %+v, %v", adm, err)
	}
	l, ok, err := s.Acquire(ctx, "set", 2)
	if err != nil || !ok {
		t.Fatalf("Acquire: %v, %v", ok, err)
	}
	time.Sleep(cfg.LeaseTTL) // renewals run
	if n, err := s.Count(ctx, "set"); err != nil || n != 1 {
		t.Fatalf("Count = %d, %v", n, err)
	}
	// Event logs: create, append, read (blocking too), keep, delete.
	if _, err := s.CreateLog(ctx, "call", state.LogInfo{Token: "t", MaxRecords: 100}); err != nil {
		t.Fatalf("CreateLog: %v", err)
	}
	if err := s.AppendLog(ctx, "call", "t", []state.LogRecord{{Seq: 1, Data: []byte("e")}}); err != nil {
		t.Fatalf("AppendLog: %v", err)
	}
	if _, recs, err := s.ReadLog(ctx, "call", 0, 10, 0); err != nil || len(recs) != 1 {
		t.Fatalf("ReadLog: %v, %v", recs, err)
	}
	if _, _, err := s.ReadLog(ctx, "call", 1, 10, 10*time.Millisecond); err != nil {
		t.Fatalf("ReadLog, blocking: %v", err)
	}
	// Another replica reading the log sees its writer alive.
	other := open(t, cfg, redisstore.Options{Metrics: m, Getenv: func(string) string { return "s3cret" }})
	if in, _, err := other.ReadLog(ctx, "call", 1, 10, 0); err != nil || in.WriterGone {
		t.Fatalf("ReadLog on another replica: %+v, %v; want the writer alive", in, err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeepLog(ctx, "call", time.Second); err != nil {
		t.Fatalf("KeepLog: %v", err)
	}
	time.Sleep(cfg.LeaseTTL) // the log's renewal runs
	if err := s.DeleteLog(ctx, "call", "t"); err != nil {
		t.Fatalf("DeleteLog: %v", err)
	}
	adm.Lease.Release()
	l.Release()
	if n, err := s.Count(ctx, "set"); err != nil || n != 0 {
		t.Fatalf("Count after release = %d, %v", n, err)
	}
	budget := s.RetryBudget("p", state.BudgetLimit{MinRetryConcurrency: 1})
	end := budget.Begin(ctx)
	release, ok := budget.Retry(ctx)
	if !ok {
		t.Fatal("Retry denied")
	}
	release()
	end()
	now := time.Now()
	policy := state.OutlierPolicy{Failures: 1, BaseEjection: time.Minute, MaxEjection: time.Minute}
	if st, err := s.RecordTarget(ctx, "p/m", false, now, policy); err != nil || !st.JustEjected {
		t.Fatalf("RecordTarget: %+v, %v", st, err)
	}
	if st, err := s.TargetStatus(ctx, []string{"p/m", "p/other"}, now); err != nil || !st[0].Ejected {
		t.Fatalf("TargetStatus: %+v, %v", st, err)
	}
	time.Sleep(2 * cfg.HealthCheckInterval) // the view is refreshed
	if _, err := s.RecordTarget(ctx, "p/m", true, now, policy); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the flushers run
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warnings with the documented rules:\n%s", logs.String())
	}
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == metrics.NameStateStoreErrors {
			for _, mm := range mf.GetMetric() {
				t.Errorf("%s %v = %v: an operation was refused to the ACL user", mf.GetName(), mm.GetLabel(), mm.GetCounter().GetValue())
			}
		}
	}
}

// TestLeastPrivilegeACLUserGovernance runs the stored keys' and the
// budgets' conformance suites (create, list, revoke; reserve, settle,
// usage) as the documented least-privilege ACL user: a command they need
// that the rules leave out fails them (NOPERM).
func TestLeastPrivilegeACLUserGovernance(t *testing.T) {
	srv := redistest.Start(t)
	args := append([]any{"ACL", "SETUSER", "llmrelay", "on", ">s3cret"}, aclRules...)
	if err := srv.Client(t).Do(context.Background(), args...).Err(); err != nil {
		t.Fatal(err)
	}
	var n int
	store := func(t *testing.T) *redisstore.Store {
		cfg := config(srv)
		n++
		cfg.KeyPrefix = fmt.Sprintf("llmrelay:%d:", n)
		cfg.Username, cfg.PasswordEnv = "llmrelay", "TEST_REDIS_PASSWORD"
		s := open(t, cfg, redisstore.Options{FailClosed: true, Getenv: func(string) string { return "s3cret" }})
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("keys", func(t *testing.T) {
		statetest.RunKeyStore(t, func(t *testing.T) state.KeyStore { return store(t) })
	})
	t.Run("spending", func(t *testing.T) {
		statetest.RunSpending(t, func(t *testing.T) state.Spending { return store(t) })
	})
}
