package statetest

import (
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
)

// NewSpending returns fresh, empty spending counters for one test, closed
// (if they need it) by the test's cleanup.
type NewSpending func(t *testing.T) state.Spending

// RunSpending runs the conformance suite of state.Spending against the
// implementations newSpending makes. Times are a fixed clock's, moved by
// the tests: a store measures lapses and expiries on the caller's time.
func RunSpending(t *testing.T, newSpending NewSpending) {
	tests := []struct {
		name string
		run  func(*testing.T, state.Spending)
	}{
		{"ReserveWhileThereIsRoom", testSpendRoom},
		{"TokensCap", testSpendTokens},
		{"RefusalTakesNothing", testSpendAllOrNothing},
		{"SettleReplacesTheReservation", testSpendSettle},
		{"SettleWithoutReservation", testSpendSettleUnreserved},
		{"LapsedReservationGivenBack", testSpendLapse},
		{"ConcurrentReservesAreAtomic", testSpendConcurrent},
		{"CountersAreIndependent", testSpendIndependent},
		{"CounterExpiresInTheCallersTime", testSpendExpiresRelative},
		{"UsageRecordsAddUp", testSpendUsage},
		{"UsageDaysAndSubjects", testSpendUsageQuery},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newSpending(t)) })
	}
}

// t0 is the suites' fixed time, a day in the past of any real clock.
var t0 = NewClock().Now()

var resvSeq atomic.Int64

func resvID() string { return "resv-" + strconv.FormatInt(resvSeq.Add(1), 10) }

func counterID(t *testing.T, name string) string { return t.Name() + "/" + name }

func reserve(t *testing.T, s state.Spending, r state.Reservation) state.Reserved {
	t.Helper()
	if r.ID == "" {
		r.ID = resvID()
	}
	if r.Now.IsZero() {
		r.Now = t0
	}
	if r.Lapse.IsZero() {
		r.Lapse = r.Now.Add(time.Hour)
	}
	got, err := s.Reserve(t.Context(), r)
	if err != nil {
		t.Fatalf("Reserve(%+v): %v", r, err)
	}
	return got
}

func settle(t *testing.T, s state.Spending, st state.Settlement) {
	t.Helper()
	if st.Now.IsZero() {
		st.Now = t0
	}
	if err := s.Settle(t.Context(), st); err != nil {
		t.Fatalf("Settle(%+v): %v", st, err)
	}
}

func balance(t *testing.T, s state.Spending, id string, now time.Time) state.Balance {
	t.Helper()
	b, err := s.Balances(t.Context(), []string{id}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 1 {
		t.Fatalf("Balances of 1 counter returned %d", len(b))
	}
	return b[0]
}

func cost(n int64) state.Amount { return state.Amount{Cost: n} }

func testSpendRoom(t *testing.T, s state.Spending) {
	c := state.Counter{ID: counterID(t, "day"), Max: cost(100)}
	for i, want := range []bool{true, true, false} {
		got := reserve(t, s, state.Reservation{Counters: []state.Counter{c}, Amount: cost(40)})
		if got.Allowed != want {
			t.Fatalf("reservation %d of 40 against 100: allowed %v, want %v", i+1, got.Allowed, want)
		}
	}
	got := reserve(t, s, state.Reservation{Counters: []state.Counter{c}, Amount: cost(20)})
	if !got.Allowed {
		t.Fatalf("20 more on 80 reserved of 100: refused, want allowed (the cap itself is room)")
	}
	got = reserve(t, s, state.Reservation{Counters: []state.Counter{c}, Amount: cost(1)})
	if got.Allowed || got.Refused != 0 || got.Balance != (state.Balance{Reserved: cost(100)}) {
		t.Fatalf("1 more on a full counter: %+v, want refused at 0 with 100 reserved", got)
	}
}

func testSpendTokens(t *testing.T, s state.Spending) {
	c := state.Counter{ID: counterID(t, "month"), Max: state.Amount{Tokens: 1000}}
	if got := reserve(t, s, state.Reservation{Counters: []state.Counter{c}, Amount: state.Amount{Cost: 1 << 40, Tokens: 600}}); !got.Allowed {
		t.Fatal("600 tokens of 1000 (cost uncapped): refused")
	}
	if got := reserve(t, s, state.Reservation{Counters: []state.Counter{c}, Amount: state.Amount{Tokens: 401}}); got.Allowed {
		t.Fatal("401 more tokens on 600 of 1000: allowed")
	}
	both := state.Counter{ID: counterID(t, "both"), Max: state.Amount{Cost: 10, Tokens: 10}}
	if got := reserve(t, s, state.Reservation{Counters: []state.Counter{both}, Amount: state.Amount{Cost: 11, Tokens: 1}}); got.Allowed {
		t.Fatal("a counter capping both measures allowed one over its cost cap")
	}
	if got := reserve(t, s, state.Reservation{Counters: []state.Counter{both}, Amount: state.Amount{Cost: 1, Tokens: 11}}); got.Allowed {
		t.Fatal("a counter capping both measures allowed one over its token cap")
	}
}

func testSpendAllOrNothing(t *testing.T, s state.Spending) {
	key := state.Counter{ID: counterID(t, "key"), Max: cost(100)}
	team := state.Counter{ID: counterID(t, "team"), Max: cost(50)}
	settle(t, s, state.Settlement{ID: resvID(), Counters: []state.Counter{team}, Spent: cost(30)})
	got := reserve(t, s, state.Reservation{Counters: []state.Counter{key, team}, Amount: cost(30)})
	if got.Allowed || got.Refused != 1 || got.Balance.Used != cost(30) {
		t.Fatalf("30 on a key with room and a team with 20 left: %+v, want refused at 1 with 30 used", got)
	}
	if b := balance(t, s, key.ID, t0); b != (state.Balance{}) {
		t.Fatalf("the key's counter after a refusal by its team's: %+v, want untouched", b)
	}
}

func testSpendSettle(t *testing.T, s state.Spending) {
	c := state.Counter{ID: counterID(t, "day"), Max: cost(100)}
	id := resvID()
	reserve(t, s, state.Reservation{ID: id, Counters: []state.Counter{c}, Amount: cost(40)})
	if b := balance(t, s, c.ID, t0); b != (state.Balance{Reserved: cost(40)}) {
		t.Fatalf("balance after reserving 40: %+v", b)
	}
	settle(t, s, state.Settlement{ID: id, Counters: []state.Counter{c}, Reserved: cost(40), Spent: cost(25)})
	if b := balance(t, s, c.ID, t0); b != (state.Balance{Used: cost(25)}) {
		t.Fatalf("balance after settling 25: %+v, want 25 used, nothing reserved", b)
	}
	if got := reserve(t, s, state.Reservation{Counters: []state.Counter{c}, Amount: cost(75)}); !got.Allowed {
		t.Fatal("75 on 25 used of 100: refused")
	}
	if got := reserve(t, s, state.Reservation{Counters: []state.Counter{c}, Amount: cost(1)}); got.Allowed {
		t.Fatal("1 more on 25 used and 75 reserved of 100: allowed")
	}
	// Settling the same reservation again gives back nothing more.
	settle(t, s, state.Settlement{ID: id, Counters: []state.Counter{c}, Reserved: cost(40)})
	if b := balance(t, s, c.ID, t0); b != (state.Balance{Used: cost(25), Reserved: cost(75)}) {
		t.Fatalf("balance after a second settlement of one reservation: %+v", b)
	}
}

func testSpendSettleUnreserved(t *testing.T, s state.Spending) {
	c := state.Counter{ID: counterID(t, "total"), Max: cost(100)}
	settle(t, s, state.Settlement{ID: resvID(), Counters: []state.Counter{c}, Spent: state.Amount{Cost: 120, Tokens: 7}})
	if b := balance(t, s, c.ID, t0); b != (state.Balance{Used: state.Amount{Cost: 120, Tokens: 7}}) {
		t.Fatalf("balance: %+v", b)
	}
	got := reserve(t, s, state.Reservation{Counters: []state.Counter{c}, Amount: cost(0)})
	if got.Allowed {
		t.Fatal("a reservation of nothing on an overspent counter: allowed")
	}
}

func testSpendLapse(t *testing.T, s state.Spending) {
	c := state.Counter{ID: counterID(t, "day"), Max: cost(100)}
	id := resvID()
	reserve(t, s, state.Reservation{ID: id, Counters: []state.Counter{c}, Amount: cost(90), Now: t0, Lapse: t0.Add(time.Minute)})
	if got := reserve(t, s, state.Reservation{Counters: []state.Counter{c}, Amount: cost(20), Now: t0.Add(59 * time.Second)}); got.Allowed {
		t.Fatal("20 on 90 reserved of 100, before the reservation lapses: allowed")
	}
	later := t0.Add(2 * time.Minute)
	if got := reserve(t, s, state.Reservation{Counters: []state.Counter{c}, Amount: cost(20), Now: later, Lapse: later.Add(time.Hour)}); !got.Allowed {
		t.Fatal("20 after the reservation of 90 lapsed: refused")
	}
	if b := balance(t, s, c.ID, later); b != (state.Balance{Reserved: cost(20)}) {
		t.Fatalf("balance after the lapse: %+v, want 20 reserved", b)
	}
	// The lapsed call settles late: its spend counts, and the reservation
	// it no longer holds is not given back twice.
	settle(t, s, state.Settlement{ID: id, Counters: []state.Counter{c}, Reserved: cost(90), Spent: cost(30), Now: later})
	if b := balance(t, s, c.ID, later); b != (state.Balance{Used: cost(30), Reserved: cost(20)}) {
		t.Fatalf("balance after the lapsed call settled: %+v, want 30 used, 20 reserved", b)
	}
}

func testSpendConcurrent(t *testing.T, s state.Spending) {
	c := state.Counter{ID: counterID(t, "day"), Max: cost(10 * 7)}
	const n = 32
	var wg sync.WaitGroup
	var allowed atomic.Int64
	for range n {
		wg.Go(func() {
			got, err := s.Reserve(t.Context(), state.Reservation{ID: resvID(), Counters: []state.Counter{c}, Amount: cost(7), Now: t0, Lapse: t0.Add(time.Hour)})
			if err != nil {
				t.Error(err)
				return
			}
			if got.Allowed {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if allowed.Load() != 10 {
		t.Fatalf("%d of %d concurrent reservations of 7 against 70 allowed, want 10", allowed.Load(), n)
	}
}

func testSpendIndependent(t *testing.T, s state.Spending) {
	a := state.Counter{ID: counterID(t, "a"), Max: cost(10)}
	b := state.Counter{ID: counterID(t, "b"), Max: cost(10)}
	reserve(t, s, state.Reservation{Counters: []state.Counter{a}, Amount: cost(10)})
	if got := reserve(t, s, state.Reservation{Counters: []state.Counter{b}, Amount: cost(10)}); !got.Allowed {
		t.Fatal("a full counter refused another's reservation")
	}
	if bal := balance(t, s, counterID(t, "never used"), t0); bal != (state.Balance{}) {
		t.Fatalf("balance of a counter never used: %+v", bal)
	}
}

// testSpendExpiresRelative: a counter's expiry is on the caller's clock,
// which may be far from the store's (an injected clock in the past): the
// counter lives for Expires − Now, not until Expires on the store's clock.
func testSpendExpiresRelative(t *testing.T, s state.Spending) {
	c := state.Counter{ID: counterID(t, "day"), Max: cost(10), Expires: t0.Add(24 * time.Hour)}
	settle(t, s, state.Settlement{ID: resvID(), Counters: []state.Counter{c}, Spent: cost(10), Now: t0,
		Usage: []state.UsageDelta{{Day: "2025-01-02", Subject: "k:alice", Counts: map[string]int64{"calls": 1}}}, UsageExpires: t0.Add(48 * time.Hour)})
	if got := reserve(t, s, state.Reservation{Counters: []state.Counter{c}, Amount: cost(1)}); got.Allowed {
		t.Fatal("a spent counter whose expiry is a day ahead of its caller's clock was forgotten")
	}
	recs, err := s.Usage(t.Context(), state.UsageQuery{From: "2025-01-02", To: "2025-01-02"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("usage records whose expiry is two days ahead of their caller's clock: %+v", recs)
	}
}

func testSpendUsage(t *testing.T, s state.Spending) {
	deltas := func(calls, input int64) []state.UsageDelta {
		return []state.UsageDelta{
			{Day: "2025-01-02", Subject: "k:alice", Counts: map[string]int64{"calls": calls, "input": input, "cost_nanos": 1500}},
			{Day: "2025-01-02", Subject: "t:research", Counts: map[string]int64{"calls": calls, "input": input, "cost_nanos": 1500}},
		}
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := s.Settle(t.Context(), state.Settlement{ID: resvID(), Now: t0, Usage: deltas(1, int64(i))}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.Usage(t.Context(), state.UsageQuery{From: "2025-01-02", To: "2025-01-02"})
	if err != nil {
		t.Fatal(err)
	}
	sum := map[string]int64{"calls": 20, "input": 190, "cost_nanos": 30000}
	want := []state.UsageRecord{{Day: "2025-01-02", Subject: "k:alice", Counts: sum}, {Day: "2025-01-02", Subject: "t:research", Counts: sum}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("usage after 20 concurrent settlements:\n got %+v\nwant %+v", got, want)
	}
}

func testSpendUsageQuery(t *testing.T, s state.Spending) {
	for i, day := range []string{"2025-01-01", "2025-01-02", "2025-01-03", "2025-02-01"} {
		for _, sub := range []string{"k:bob", "k:alice", "t:ops"} {
			settle(t, s, state.Settlement{ID: resvID(), Usage: []state.UsageDelta{{Day: day, Subject: sub, Counts: map[string]int64{"calls": int64(i + 1)}}}})
		}
	}
	query := func(q state.UsageQuery) string {
		t.Helper()
		recs, err := s.Usage(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, r := range recs {
			out += fmt.Sprintf("%s %s %d; ", r.Day, r.Subject, r.Counts["calls"])
		}
		return out
	}
	tests := []struct {
		name string
		q    state.UsageQuery
		want string
	}{
		{"one day", state.UsageQuery{From: "2025-01-02", To: "2025-01-02"},
			"2025-01-02 k:alice 2; 2025-01-02 k:bob 2; 2025-01-02 t:ops 2; "},
		{"a range across a month, by day then subject", state.UsageQuery{From: "2025-01-03", To: "2025-02-28"},
			"2025-01-03 k:alice 3; 2025-01-03 k:bob 3; 2025-01-03 t:ops 3; 2025-02-01 k:alice 4; 2025-02-01 k:bob 4; 2025-02-01 t:ops 4; "},
		{"subjects", state.UsageQuery{From: "2025-01-01", To: "2025-01-02", Subjects: []string{"t:ops", "k:bob"}},
			"2025-01-01 k:bob 1; 2025-01-01 t:ops 1; 2025-01-02 k:bob 2; 2025-01-02 t:ops 2; "},
		{"no records", state.UsageQuery{From: "2024-12-01", To: "2024-12-31"}, ""},
		{"the first records up to the limit", state.UsageQuery{From: "2025-01-01", To: "2025-02-28", Limit: 4},
			"2025-01-01 k:alice 1; 2025-01-01 k:bob 1; 2025-01-01 t:ops 1; 2025-01-02 k:alice 2; "},
		{"a limit past the records", state.UsageQuery{From: "2025-01-03", To: "2025-02-28", Subjects: []string{"t:ops"}, Limit: 3},
			"2025-01-03 t:ops 3; 2025-02-01 t:ops 4; "},
	}
	for _, tc := range tests {
		if got := query(tc.q); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
