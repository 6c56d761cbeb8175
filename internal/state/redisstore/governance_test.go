package redisstore_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/logtest"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

// closedStore opens a fail_closed store on cfg, closed by t's cleanup:
// a failing command fails the test instead of being decided locally.
func closedStore(t *testing.T, cfg state.RedisConfig) *redisstore.Store {
	s := open(t, cfg, redisstore.Options{FailClosed: true})
	t.Cleanup(func() { s.Close() })
	return s
}

func TestKeyStoreConformance(t *testing.T) {
	srv := redistest.Start(t)
	statetest.RunKeyStore(t, func(t *testing.T) state.KeyStore { return closedStore(t, config(srv)) })
}

func TestSpendingConformance(t *testing.T) {
	srv := redistest.Start(t)
	statetest.RunSpending(t, func(t *testing.T) state.Spending { return closedStore(t, config(srv)) })
}

// TestGovernanceOutageFailOpen: with Redis stopped and fail_open, a known
// key still authenticates from the replica's last read (an unknown one is
// ErrUnavailable), reservations are decided on the replica's own
// counters, and what was settled meanwhile reaches Redis once it is back
// (a restart that lost every key), usage records included.
func TestGovernanceOutageFailOpen(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	s := open(t, cfg, redisstore.Options{})
	defer s.Close()
	condc := make(chan state.Condition, 16)
	stop := s.Watch(func(c state.Condition) { condc <- c })
	defer stop()
	<-condc
	ctx := t.Context()
	known := state.StoredKey{Name: "alice", Hash: strings.Repeat("a", 64), Record: []byte("{}")}
	if _, err := s.CreateKey(ctx, known); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	c := state.Counter{ID: "k:alice/day/2025-06-01", Max: state.Amount{Cost: 100}, Expires: now.Add(48 * time.Hour)}
	reserve := func(id string, cost int64) state.Reserved {
		t.Helper()
		r, err := s.Reserve(ctx, state.Reservation{ID: id, Counters: []state.Counter{c}, Amount: state.Amount{Cost: cost}, Now: now, Lapse: now.Add(time.Hour)})
		if err != nil {
			t.Fatalf("Reserve(%s): %v", id, err)
		}
		return r
	}
	if r := reserve("before", 40); !r.Allowed {
		t.Fatal("reservation before the outage refused")
	}

	srv.Stop()
	if c := <-condc; c.Reachable {
		t.Fatalf("condition with Redis stopped: %+v", c)
	}
	if k, err := s.KeyByHash(ctx, known.Hash); err != nil || k.Name != "alice" {
		t.Fatalf("KeyByHash of a key read before the outage: %+v, %v, want it from the last read", k, err)
	}
	if _, err := s.KeyByHash(ctx, strings.Repeat("b", 64)); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("KeyByHash of a key never read, during the outage: %v, want ErrUnavailable", err)
	}
	if _, err := s.CreateKey(ctx, state.StoredKey{Name: "bob", Hash: strings.Repeat("c", 64)}); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("CreateKey during the outage: %v, want ErrUnavailable", err)
	}
	// The replica's own counters know nothing of the 40 reserved in Redis.
	if r := reserve("during", 90); !r.Allowed {
		t.Fatal("reservation of 90 during the outage refused by the local counter")
	}
	if r := reserve("refused", 20); r.Allowed {
		t.Fatal("20 more on 90 reserved locally: allowed")
	}
	usage := []state.UsageDelta{{Day: "2025-06-01", Subject: "k:alice", Counts: map[string]int64{"calls": 1, "cost_nanos": 50}}}
	for _, st := range []state.Settlement{
		{ID: "before", Counters: []state.Counter{c}, Reserved: state.Amount{Cost: 40}, Spent: state.Amount{Cost: 30}, Now: now, Usage: usage},
		{ID: "during", Counters: []state.Counter{c}, Reserved: state.Amount{Cost: 90}, Spent: state.Amount{Cost: 50}, Now: now, Usage: usage},
	} {
		if err := s.Settle(ctx, st); err != nil {
			t.Fatalf("Settle(%s) during the outage: %v", st.ID, err)
		}
	}

	srv.Restart(t) // empty: Redis lost every key
	if c := <-condc; !c.Reachable {
		t.Fatalf("condition after the restart: %+v", c)
	}
	other := open(t, cfg, redisstore.Options{FailClosed: true})
	defer other.Close()
	poll(t, "the spend settled during the outage in Redis", 30*time.Second, func() bool {
		b, err := other.Balances(ctx, []string{c.ID}, now)
		return err == nil && b[0] == state.Balance{Used: state.Amount{Cost: 80}}
	})
	recs, err := other.Usage(ctx, state.UsageQuery{From: "2025-06-01", To: "2025-06-01"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Counts["calls"] != 2 || recs[0].Counts["cost_nanos"] != 100 {
		t.Fatalf("usage records after the outage: %+v, want alice's 2 calls and 100 nano-dollars", recs)
	}
}

// TestGovernanceOutageKeepsSpentBudgets: with fail_open, a budget spent
// before Redis became unreachable stays spent on the replica's own
// counters: what Redis last reported of it (and what this replica settled
// since) counts. They started from nothing, so that every replica admitted
// a whole budget again, a spent one included, on every outage.
func TestGovernanceOutageKeepsSpentBudgets(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	s := open(t, cfg, redisstore.Options{})
	defer s.Close()
	other := closedStore(t, cfg)
	condc := make(chan state.Condition, 16)
	stop := s.Watch(func(c state.Condition) { condc <- c })
	defer stop()
	<-condc
	ctx := t.Context()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	day := state.Counter{ID: "k:alice/day/2025-06-01", Max: state.Amount{Cost: 100}, Expires: now.Add(48 * time.Hour)}
	total := state.Counter{ID: "t:research/total", Max: state.Amount{Tokens: 50}}
	reserve := func(s *redisstore.Store, id string, c state.Counter, a state.Amount) state.Reserved {
		t.Helper()
		r, err := s.Reserve(ctx, state.Reservation{ID: id, Counters: []state.Counter{c}, Amount: a, Now: now, Lapse: now.Add(time.Hour)})
		if err != nil {
			t.Fatalf("Reserve(%s): %v", id, err)
		}
		return r
	}
	// This replica spends 90 of the day's 100; another spends the whole
	// total, which this one learns when Redis refuses it.
	if r := reserve(s, "mine", day, state.Amount{Cost: 10}); !r.Allowed {
		t.Fatal("the first reservation refused")
	}
	if err := s.Settle(ctx, state.Settlement{ID: "mine", Counters: []state.Counter{day}, Reserved: state.Amount{Cost: 10}, Spent: state.Amount{Cost: 90}, Now: now}); err != nil {
		t.Fatal(err)
	}
	if r := reserve(other, "theirs", total, state.Amount{Tokens: 50}); !r.Allowed {
		t.Fatal("the other replica's reservation refused")
	}
	if err := other.Settle(ctx, state.Settlement{ID: "theirs", Counters: []state.Counter{total}, Reserved: state.Amount{Tokens: 50}, Spent: state.Amount{Tokens: 50}, Now: now}); err != nil {
		t.Fatal(err)
	}
	if r := reserve(s, "refused", total, state.Amount{Tokens: 1}); r.Allowed {
		t.Fatal("a token more on a spent total: allowed")
	}

	srv.Stop()
	if c := <-condc; c.Reachable {
		t.Fatalf("condition with Redis stopped: %+v", c)
	}
	if r := reserve(s, "past the day's 100", day, state.Amount{Cost: 20}); r.Allowed || r.Balance.Used.Cost != 90 {
		t.Fatalf("20 more on the 90 spent of 100, during the outage: %+v; want it refused, 90 used", r)
	}
	if r := reserve(s, "the day's last 10", day, state.Amount{Cost: 10}); !r.Allowed {
		t.Fatal("the last 10 of the day's 100, during the outage: refused")
	}
	if r := reserve(s, "past the total", total, state.Amount{Tokens: 1}); r.Allowed || r.Balance.Used.Tokens != 50 {
		t.Fatalf("a token more on a spent total, during the outage: %+v; want it refused, 50 used", r)
	}
}

// TestSettlementRunOnceWhenItsAnswerIsLate: a settlement whose script
// Redis ran, but answered after the read timeout, is sent again once
// Redis answers, and counts once: its spend and its usage record were
// added twice (a slow Redis doubled what calls cost).
func TestSettlementRunOnceWhenItsAnswerIsLate(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	cfg.ReadTimeout = time.Second // not so short that a loaded machine looks like a stall
	s := open(t, cfg, redisstore.Options{})
	defer s.Close()
	ctx := t.Context()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	c := state.Counter{ID: "k:alice/day/2025-06-01", Max: state.Amount{Cost: 100}, Expires: now.Add(48 * time.Hour)}
	// A first settlement loads the script into Redis, as on any replica
	// that has been running a while. Both give a reservation back, as a
	// budgeted call's does: one that gives none back is queued, never run
	// on the call's path.
	if err := s.Settle(ctx, state.Settlement{ID: "first", Counters: []state.Counter{{ID: "k:bob/total"}}, Reserved: state.Amount{Cost: 1}, Spent: state.Amount{Cost: 1}, Now: now}); err != nil {
		t.Fatal(err)
	}
	// Redis stalls: the settlement's script waits in its socket, and runs
	// once Redis goes on, long after its read timed out.
	srv.Pause(t)
	err := s.Settle(ctx, state.Settlement{ID: "late", Counters: []state.Counter{c}, Reserved: state.Amount{Cost: 1}, Spent: state.Amount{Cost: 7}, Now: now,
		Usage: []state.UsageDelta{{Day: "2025-06-01", Subject: "k:alice", Counts: map[string]int64{"calls": 1, "cost_nanos": 7}}}})
	if err != nil {
		t.Fatalf("Settle while Redis is slow: %v, want it queued", err)
	}
	srv.Resume(t)
	// Usage sends what is queued first, once Redis answers.
	var recs []state.UsageRecord
	poll(t, "the usage read after the pause", 30*time.Second, func() bool {
		recs, err = s.Usage(ctx, state.UsageQuery{From: "2025-06-01", To: "2025-06-01"})
		return err == nil && len(recs) == 1
	})
	recs, err = s.Usage(ctx, state.UsageQuery{From: "2025-06-01", To: "2025-06-01"})
	if err != nil || len(recs) != 1 || recs[0].Counts["calls"] != 1 {
		t.Fatalf("usage after a settlement answered late: %+v, %v; want 1 call", recs, err)
	}
	b, err := s.Balances(ctx, []string{c.ID}, now)
	if err != nil || b[0].Used.Cost != 7 {
		t.Fatalf("balance after a settlement answered late: %+v, %v; want 7 used", b, err)
	}
}

// TestReservationAnsweredLateIsGivenBack: with fail_open, a reservation
// whose answer came too late (Redis stalled, then ran the script) is
// decided locally, and its settlement gives it back in Redis too: it was
// held there until it lapsed, five minutes past the call's deadline,
// refusing the budget's other calls meanwhile.
func TestReservationAnsweredLateIsGivenBack(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	other := closedStore(t, cfg)
	cfg.ReadTimeout = time.Second // not so short that a loaded machine looks like a stall
	s := open(t, cfg, redisstore.Options{})
	defer s.Close()
	ctx := t.Context()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	c := state.Counter{ID: "k:alice/day/2025-06-01", Max: state.Amount{Cost: 100}, Expires: now.Add(48 * time.Hour)}
	reserve := func(id string) state.Reserved {
		t.Helper()
		r, err := s.Reserve(ctx, state.Reservation{ID: id, Counters: []state.Counter{c}, Amount: state.Amount{Cost: 60}, Now: now, Lapse: now.Add(time.Hour)})
		if err != nil {
			t.Fatalf("Reserve(%s): %v", id, err)
		}
		return r
	}
	// A first call loads the script into Redis and settles.
	if r := reserve("first"); !r.Allowed {
		t.Fatal("the first reservation refused")
	}
	if err := s.Settle(ctx, state.Settlement{ID: "first", Counters: []state.Counter{c}, Reserved: state.Amount{Cost: 60}, Now: now}); err != nil {
		t.Fatal(err)
	}
	srv.Pause(t)
	if r := reserve("late"); !r.Allowed {
		t.Fatal("the reservation decided locally refused")
	}
	srv.Resume(t)
	// The call ends; its settlement reaches Redis once it answers.
	if err := s.Settle(ctx, state.Settlement{ID: "late", Counters: []state.Counter{c}, Reserved: state.Amount{Cost: 60}, Spent: state.Amount{Cost: 5}, Now: now}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the settlement in Redis", 30*time.Second, func() bool {
		_, err := s.Usage(ctx, state.UsageQuery{From: "2025-06-01", To: "2025-06-01"}) // sends what is queued
		b, berr := other.Balances(ctx, []string{c.ID}, now)
		return err == nil && berr == nil && b[0].Used.Cost == 5
	})
	if b, err := other.Balances(ctx, []string{c.ID}, now); err != nil || b[0] != (state.Balance{Used: state.Amount{Cost: 5}}) {
		t.Fatalf("the budget in Redis after the call answered late ended: %+v, %v; want 5 used, nothing held", b, err)
	}
}

// TestRefusedReservationAnsweredLateIsGivenBack: with fail_closed, a
// reservation whose answer came too late (Redis stalled, then ran the
// script) is refused as unavailable, and given back in Redis once it
// answers: no settlement follows a refused call, and it was held until it
// lapsed, five minutes past the call's deadline, refusing the budget's
// other calls meanwhile.
func TestRefusedReservationAnsweredLateIsGivenBack(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	other := closedStore(t, cfg)
	cfg.ReadTimeout = time.Second // not so short that a loaded machine looks like a stall
	s := closedStore(t, cfg)
	ctx := t.Context()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	c := state.Counter{ID: "k:alice/day/2025-06-01", Max: state.Amount{Cost: 100}, Expires: now.Add(48 * time.Hour)}
	reserve := func(id string) (state.Reserved, error) {
		return s.Reserve(ctx, state.Reservation{ID: id, Counters: []state.Counter{c}, Amount: state.Amount{Cost: 60}, Now: now, Lapse: now.Add(time.Hour)})
	}
	// A first call loads the script into Redis and settles.
	if r, err := reserve("first"); err != nil || !r.Allowed {
		t.Fatalf("the first reservation: %+v, %v", r, err)
	}
	if err := s.Settle(ctx, state.Settlement{ID: "first", Counters: []state.Counter{c}, Reserved: state.Amount{Cost: 60}, Now: now}); err != nil {
		t.Fatal(err)
	}
	srv.Pause(t)
	if _, err := reserve("late"); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("a reservation Redis answers too late, with fail_closed: %v, want ErrUnavailable", err)
	}
	srv.Resume(t)
	poll(t, "the late reservation given back in Redis", 30*time.Second, func() bool {
		b, err := other.Balances(ctx, []string{c.ID}, now)
		return err == nil && b[0] == state.Balance{}
	})
}

// TestGovernanceOutageFailClosed: with Redis stopped and fail_closed, keys
// and reservations are ErrUnavailable, even a key read before; the calls
// admitted before the outage still settle once Redis is back.
func TestGovernanceOutageFailClosed(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	s := open(t, cfg, redisstore.Options{FailClosed: true})
	defer s.Close()
	condc := make(chan state.Condition, 16)
	stop := s.Watch(func(c state.Condition) { condc <- c })
	defer stop()
	<-condc
	ctx := t.Context()
	known := state.StoredKey{Name: "alice", Hash: strings.Repeat("a", 64), Record: []byte("{}")}
	if _, err := s.CreateKey(ctx, known); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	c := state.Counter{ID: "k:alice/total", Max: state.Amount{Cost: 100}}
	srv.Stop()
	<-condc
	if _, err := s.KeyByHash(ctx, known.Hash); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("KeyByHash during the outage: %v, want ErrUnavailable", err)
	}
	if _, err := s.Reserve(ctx, state.Reservation{ID: "r", Counters: []state.Counter{c}, Amount: state.Amount{Cost: 1}, Now: now, Lapse: now.Add(time.Hour)}); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Reserve during the outage: %v, want ErrUnavailable", err)
	}
	if err := s.Settle(ctx, state.Settlement{ID: "admitted before", Counters: []state.Counter{c}, Spent: state.Amount{Cost: 7}, Now: now}); err != nil {
		t.Fatalf("Settle during the outage: %v, want it queued", err)
	}
	srv.Restart(t)
	<-condc
	poll(t, "the settlement queued during the outage in Redis", 30*time.Second, func() bool {
		b, err := s.Balances(ctx, []string{c.ID}, now)
		return err == nil && b[0] == state.Balance{Used: state.Amount{Cost: 7}}
	})
}

// TestGovernanceOnCluster: the keys share the hash tag {keys} and the
// budgets' counters and usage records {gov}, so each script finds all its
// keys on one node.
func TestGovernanceOnCluster(t *testing.T) {
	addrs := redistest.StartCluster(t, 3)
	t.Run("KeyStore", func(t *testing.T) {
		statetest.RunKeyStore(t, func(t *testing.T) state.KeyStore { return closedStore(t, clusterConfig(addrs)) })
	})
	t.Run("Spending", func(t *testing.T) {
		statetest.RunSpending(t, func(t *testing.T) state.Spending { return closedStore(t, clusterConfig(addrs)) })
	})
}

// TestUsageOnlySettlementsOffThePath: the settlements of calls under no
// budget are written by the flusher, in batches: a thousand of them at
// once all reach Redis, which another replica reads; the replica that
// settled them reads them back at once.
func TestUsageOnlySettlementsOffThePath(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	a, b := closedStore(t, cfg), closedStore(t, cfg)
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for i := range 1000 {
		wg.Go(func() {
			err := a.Settle(t.Context(), state.Settlement{ID: strconv.Itoa(i), Now: now, UsageExpires: now.Add(time.Hour),
				Usage: []state.UsageDelta{{Day: "2025-06-01", Subject: "k:free", Counts: map[string]int64{"calls": 1, "input": 3}}}})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	calls := func(s *redisstore.Store) int64 {
		recs, err := s.Usage(t.Context(), state.UsageQuery{From: "2025-06-01", To: "2025-06-01"})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			return 0
		}
		return recs[0].Counts["calls"]
	}
	if got := calls(a); got != 1000 {
		t.Fatalf("the settling replica reads %d calls, want 1000 at once", got)
	}
	poll(t, "the other replica reading the thousand calls", 30*time.Second, func() bool { return calls(b) == 1000 })
}

// TestUnbudgetedSpendOnCountersOffThePath: a call under no budget spends
// on its windows' counters (for a budget set later) without waiting for
// Redis: its settlement is queued even while Redis stalls, and the
// replica's next reservation on those counters counts it.
func TestUnbudgetedSpendOnCountersOffThePath(t *testing.T) {
	srv := redistest.Start(t)
	s := closedStore(t, config(srv)) // 5 s read timeout
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	day := state.Counter{ID: "k:free/day/2025-06-01", Expires: now.Add(48 * time.Hour)}
	srv.Pause(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	err := s.Settle(ctx, state.Settlement{ID: "free", Counters: []state.Counter{day}, Spent: state.Amount{Cost: 7, Tokens: 3}, Now: now,
		Usage: []state.UsageDelta{{Day: "2025-06-01", Subject: "k:free", Counts: map[string]int64{"calls": 1}}}})
	cancel()
	srv.Resume(t)
	if err != nil {
		t.Fatalf("Settle of a call under no budget while Redis stalls: %v, want it queued", err)
	}
	day.Max = state.Amount{Tokens: 5}
	r, err := s.Reserve(t.Context(), state.Reservation{ID: "then", Counters: []state.Counter{day}, Amount: state.Amount{Tokens: 3}, Now: now, Lapse: now.Add(time.Hour)})
	if err != nil || r.Allowed || r.Balance.Used != (state.Amount{Cost: 7, Tokens: 3}) {
		t.Fatalf("a budget of 5 tokens set after 3 were spent, reserving 3: %+v, %v; want refused with 3 used", r, err)
	}
}

// TestClosingDuringAnOutageSaysWhatIsLost: a replica that stops while
// Redis is unreachable cannot send the settlements it queued: it says so,
// with how many, instead of dropping them without a word.
func TestClosingDuringAnOutageSaysWhatIsLost(t *testing.T) {
	srv := redistest.Start(t)
	var logs logtest.Buffer
	s := open(t, config(srv), redisstore.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	srv.Stop()
	poll(t, "the store noticed the outage", 30*time.Second, func() bool {
		_, err := s.KeyByHash(t.Context(), strings.Repeat("b", 64))
		return errors.Is(err, state.ErrUnavailable)
	})
	for _, id := range []string{"one", "two"} {
		if err := s.Settle(t.Context(), state.Settlement{ID: id, Counters: []state.Counter{{ID: "k:alice/total"}}, Spent: state.Amount{Cost: 1}, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "settled meanwhile are lost") || !strings.Contains(logs.String(), "settlements=2") {
		t.Fatalf("the log of a store closed with two settlements unsent:\n%s", logs.String())
	}
}
