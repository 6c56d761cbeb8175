package spend_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// prices: mock/echo at $1 per million input tokens and $2 per million
// output tokens; mock/dear at ten times that.
func prices(t *testing.T) *usage.Prices {
	t.Helper()
	p, err := usage.NewPrices(map[string]usage.Price{
		"mock/echo": {"input": 1, "output": 2},
		"mock/dear": {"input": 10, "output": 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var echo = []spend.Target{{Provider: "mock", Model: "echo"}}

// call is a request of 3000 bytes (1000 input tokens reserved) and 1000
// output tokens: it reserves 2000 tokens and $0.003 at mock/echo's prices.
var call = spend.Request{InputBytes: 3000, MaxOutputTokens: 1000, Targets: echo}

// used is what such a call reports: 800 input and 500 output tokens,
// $0.0018.
var used = provider.Usage{InputTokens: 800, OutputTokens: 500}

const usedCost = 0.0008 + 0.001

type harness struct {
	clock *statetest.Clock
	b     *spend.Budgeter
	store *memory.Store
}

func newHarness(t *testing.T, teams ...spend.Team) *harness {
	c := statetest.NewClock() // 2025-01-02T03:04:05Z
	s := memory.New()
	return &harness{clock: c, store: s, b: spend.New(s, teams, prices(t), spend.DefaultConfig(), c.Now)}
}

// run admits one call of sub and settles it with used; it returns the
// refusal, if any.
func (h *harness) run(t *testing.T, sub spend.Subject) error {
	t.Helper()
	hold, err := h.b.Reserve(context.Background(), sub, call, h.clock.Now().Add(time.Minute))
	if err != nil {
		return err
	}
	if err := hold.Settle(context.Background(), spend.Spent{Usage: used, Cost: usedCost}); err != nil {
		t.Fatal(err)
	}
	return nil
}

func exhausted(t *testing.T, err error) *spend.ExhaustedError {
	t.Helper()
	var ee *spend.ExhaustedError
	if !errors.As(err, &ee) {
		t.Fatalf("error %v, want *spend.ExhaustedError", err)
	}
	return ee
}

func TestEstimate(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name string
		r    spend.Request
		want state.Amount
	}{
		{"input by bytes, output as asked, at the target's prices", call, state.Amount{Cost: 3_000_000, Tokens: 2000}},
		{"input rounded up", spend.Request{InputBytes: 1, MaxOutputTokens: 1, Targets: echo}, state.Amount{Cost: 3000, Tokens: 2}},
		{"no max_output_tokens: the default output", spend.Request{InputBytes: 3, Targets: echo}, state.Amount{Cost: 1000 + 4096*2000, Tokens: 1 + 4096}},
		{"the dearest target", spend.Request{InputBytes: 3000, MaxOutputTokens: 1000, Targets: append(echo, spend.Target{Provider: "mock", Model: "dear"})}, state.Amount{Cost: 30_000_000, Tokens: 2000}},
		{"an unpriced target costs nothing", spend.Request{InputBytes: 3000, MaxOutputTokens: 1000, Targets: []spend.Target{{Provider: "mock", Model: "lorem"}}}, state.Amount{Tokens: 2000}},
	}
	for _, tc := range tests {
		if got := h.b.Estimate(tc.r); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestDayBudgetSpentThenNextDay: calls are admitted while the day's
// budget has room for a reservation, then refused until midnight UTC,
// with the wait; on the next day the key is admitted again.
func TestDayBudgetSpentThenNextDay(t *testing.T) {
	h := newHarness(t)
	sub := spend.Subject{Key: "alice", Budgets: []spend.Budget{{Window: spend.Day, MaxCostUSD: 0.01}}}
	admitted := 0
	var err error
	for ; admitted < 100; admitted++ {
		if err = h.run(t, sub); err != nil {
			break
		}
	}
	// Each call spends $0.0018 and reserves $0.003: the fourth leaves
	// $0.0072 spent, without room for another reservation.
	if admitted != 4 {
		t.Fatalf("%d calls admitted on $0.01, want 4", admitted)
	}
	ee := exhausted(t, err)
	midnight := time.Date(2025, 1, 3, 0, 0, 0, 0, time.UTC)
	if ee.Resets != midnight || ee.RetryAfter() != midnight.Sub(h.clock.Now()) || ee.Budget.Window != spend.Day || ee.TeamBudget {
		t.Fatalf("refusal %+v (retry after %v), want the key's day budget resetting at %v", ee, ee.RetryAfter(), midnight)
	}
	for _, want := range []string{"API key alice's daily budget", "$0.0072 spent of $0.01", "resets at 2025-01-03T00:00:00Z"} {
		if !strings.Contains(ee.Error(), want) {
			t.Errorf("message %q does not say %q", ee.Error(), want)
		}
	}
	h.clock.Advance(midnight.Sub(h.clock.Now()) - time.Nanosecond)
	if err := h.run(t, sub); err == nil {
		t.Fatal("admitted a nanosecond before midnight")
	}
	h.clock.Advance(time.Nanosecond)
	if err := h.run(t, sub); err != nil {
		t.Fatalf("the next day: %v, want admitted", err)
	}
}

// TestReservationOverTheCap: a call that reserves more than a cap of its
// budget is refused in an empty window, and without a wait, since every
// window would refuse it; by tokens or by cost alike.
func TestReservationOverTheCap(t *testing.T) {
	for name, budget := range map[string]spend.Budget{
		"tokens": {Window: spend.Day, MaxTokens: 1999},     // the call reserves 2000
		"cost":   {Window: spend.Month, MaxCostUSD: 0.002}, // and $0.003
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			ee := exhausted(t, h.run(t, spend.Subject{Key: "alice", Budgets: []spend.Budget{budget}}))
			if !ee.OverCap() || ee.RetryAfter() != 0 {
				t.Errorf("refusal %v: over its cap %v, retry after %v; want over it, no wait", ee, ee.OverCap(), ee.RetryAfter())
			}
			if msg := ee.Error(); !strings.Contains(msg, "more than the budget allows") || strings.Contains(msg, "resets at") {
				t.Errorf("message %q, want it to say the reservation is over the cap, not when the window resets", msg)
			}
		})
	}
}

func TestWindows(t *testing.T) {
	tests := []struct {
		w          spend.Window
		at         time.Time
		period     string
		resets     time.Time
		adjective  string
		retryAfter bool
	}{
		{spend.Day, time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC), "2025-12-31", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "daily", true},
		{spend.Month, time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC), "2025-12", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "monthly", true},
		{spend.Month, time.Date(2024, 2, 29, 12, 0, 0, 0, time.FixedZone("UTC+14", 14*3600)), "2024-02", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), "monthly", true},
		{spend.Total, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), "total", time.Time{}, "total", false},
	}
	for _, tc := range tests {
		period, resets := tc.w.Period(tc.at)
		if period != tc.period || !resets.Equal(tc.resets) || tc.w.Adjective() != tc.adjective {
			t.Errorf("%s at %v: %s resetting %v, want %s resetting %v", tc.w, tc.at, period, resets, tc.period, tc.resets)
		}
	}
}

// TestMonthAndTotal: a month's token budget resets on the 1st; a total
// budget never does and its refusal has no wait.
func TestMonthAndTotal(t *testing.T) {
	h := newHarness(t)
	month := spend.Subject{Key: "m", Budgets: []spend.Budget{{Window: spend.Month, MaxTokens: 4000}}}
	total := spend.Subject{Key: "t", Budgets: []spend.Budget{{Window: spend.Total, MaxTokens: 4000}}}
	for _, sub := range []spend.Subject{month, total} {
		// 1300 tokens used per call, 2000 reserved: 2 calls, then 2600
		// used leave no room.
		for i := range 2 {
			if err := h.run(t, sub); err != nil {
				t.Fatalf("%s: call %d: %v", sub.Key, i+1, err)
			}
		}
		exhausted(t, h.run(t, sub))
	}
	h.clock.Advance(31 * 24 * time.Hour)
	if err := h.run(t, month); err != nil {
		t.Fatalf("next month: %v", err)
	}
	ee := exhausted(t, h.run(t, total))
	if ee.RetryAfter() != 0 || !strings.Contains(ee.Error(), "never resets") {
		t.Fatalf("total refusal: %v (retry after %v), want no wait", ee, ee.RetryAfter())
	}
}

// TestTeamBudgetStopsEveryKey: a team's budget is shared by its keys: once
// their calls spent it, both are refused, by the team's budget.
func TestTeamBudgetStopsEveryKey(t *testing.T) {
	h := newHarness(t, spend.Team{Name: "research", Budgets: []spend.Budget{{Window: spend.Day, MaxCostUSD: 0.01}}})
	a := spend.Subject{Key: "a", Team: "research"}
	b := spend.Subject{Key: "b", Team: "research"}
	other := spend.Subject{Key: "c"}
	for i, sub := range []spend.Subject{a, b, a, b} {
		if err := h.run(t, sub); err != nil {
			t.Fatalf("call %d (%s): %v", i+1, sub.Key, err)
		}
	}
	for _, sub := range []spend.Subject{a, b} {
		ee := exhausted(t, h.run(t, sub))
		if !ee.TeamBudget || ee.Team != "research" || !strings.Contains(ee.Error(), "team research's daily budget") {
			t.Fatalf("%s refused by %+v, want the team's budget", sub.Key, ee)
		}
	}
	if err := h.run(t, other); err != nil {
		t.Fatalf("a key of no team: %v", err)
	}
}

// TestRefusedByOneBudgetReservesOnNone: the key's budget has room but its
// team's has not: nothing is reserved on the key's.
func TestRefusedByOneBudgetReservesOnNone(t *testing.T) {
	h := newHarness(t, spend.Team{Name: "ops", Budgets: []spend.Budget{{Window: spend.Day, MaxTokens: 1000}}})
	sub := spend.Subject{Key: "a", Team: "ops", Budgets: []spend.Budget{{Window: spend.Day, MaxTokens: 1_000_000}}}
	exhausted(t, h.run(t, sub))
	st, err := h.b.KeyStatus(context.Background(), "a", sub.Budgets)
	if err != nil {
		t.Fatal(err)
	}
	if st[0].Used != (state.Amount{}) || st[0].Reserved != (state.Amount{}) {
		t.Fatalf("key budget after its team's refusal: %+v, want untouched", st[0])
	}
}

// TestReleaseAndSettle: a released hold gives its reservation back and is
// no call; a settled one is, with its usage; a second Settle or Release
// does nothing.
func TestReleaseAndSettle(t *testing.T) {
	h := newHarness(t, spend.Team{Name: "ops"})
	sub := spend.Subject{Key: "a", Team: "ops", Budgets: []spend.Budget{{Window: spend.Day, MaxCostUSD: 1}}}
	ctx := context.Background()
	r, err := h.b.Reserve(ctx, sub, call, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := h.b.KeyStatus(ctx, "a", sub.Budgets)
	if st[0].Reserved != r.Reserved() || r.Reserved() != (state.Amount{Cost: 3_000_000, Tokens: 2000}) {
		t.Fatalf("reserved %+v, status %+v", r.Reserved(), st[0])
	}
	if err := r.Release(ctx); err != nil {
		t.Fatal(err)
	}
	_ = r.Settle(ctx, spend.Spent{Usage: used, Cost: usedCost}) // too late: released
	s, err := h.b.Reserve(ctx, sub, call, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(ctx, spend.Spent{Usage: used, Cost: usedCost}); err != nil {
		t.Fatal(err)
	}
	_ = s.Settle(ctx, spend.Spent{Usage: used, Cost: usedCost})
	_ = s.Release(ctx)
	st, _ = h.b.KeyStatus(ctx, "a", sub.Budgets)
	if st[0].Used != (state.Amount{Cost: 1_800_000, Tokens: 1300}) || st[0].Reserved != (state.Amount{}) {
		t.Fatalf("status after one release and one settled call: %+v", st[0])
	}
	recs, err := h.b.Usage(ctx, spend.UsageQuery{From: "2025-01-02", To: "2025-01-02"})
	if err != nil {
		t.Fatal(err)
	}
	want := []spend.Record{
		{Day: "2025-01-02", Key: "a", Calls: 1, Usage: used, Cost: 1_800_000},
		{Day: "2025-01-02", Team: "ops", Calls: 1, Usage: used, Cost: 1_800_000},
	}
	if len(recs) != 2 || recs[0] != want[0] || recs[1] != want[1] {
		t.Fatalf("usage records %+v, want %+v", recs, want)
	}
	only, _ := h.b.Usage(ctx, spend.UsageQuery{From: "2025-01-01", To: "2025-01-31", Team: "ops"})
	if len(only) != 1 || only[0] != want[1] {
		t.Fatalf("the team's records %+v", only)
	}
}

// TestNoKeyNoHold: a call without a key falls under no budget and is
// recorded nowhere; a key without budgets reserves nothing but is
// recorded.
func TestNoKeyNoHold(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if hold, err := h.b.Reserve(ctx, spend.Subject{}, call, time.Time{}); hold != nil || err != nil {
		t.Fatalf("keyless call: %v, %v", hold, err)
	}
	hold, err := h.b.Reserve(ctx, spend.Subject{Key: "free"}, call, time.Time{})
	if err != nil || hold.Reserved() != (state.Amount{}) {
		t.Fatalf("key without budgets: %+v, %v", hold, err)
	}
	if err := hold.Settle(ctx, spend.Spent{Usage: used, Cost: usedCost}); err != nil {
		t.Fatal(err)
	}
	recs, _ := h.b.Usage(ctx, spend.UsageQuery{From: "2025-01-02", To: "2025-01-02"})
	if len(recs) != 1 || recs[0].Key != "free" || recs[0].Calls != 1 {
		t.Fatalf("records %+v", recs)
	}
}

// TestBudgetSetMidWindowCountsTheWindow: a key that spent before it had a
// budget (keys update --budget), and a team before its budget was
// configured (a reload: another Budgeter on the same store), start their
// budgets from what the window's calls spent, not from nothing: the day's
// calls count in a day budget, the month's in a month budget, every call
// in a total one, and a budget with no room left refuses the next call.
func TestBudgetSetMidWindowCountsTheWindow(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	free := spend.Subject{Key: "late", Team: "ops"}
	if err := h.run(t, free); err != nil { // 2025-01-02: 1300 tokens
		t.Fatal(err)
	}
	h.clock.Advance(24 * time.Hour) // 2025-01-03, the same month
	for range 3 {
		if err := h.run(t, free); err != nil {
			t.Fatal(err)
		}
	}
	budgets := []spend.Budget{{Window: spend.Day, MaxTokens: 1_000_000}, {Window: spend.Month, MaxTokens: 1_000_000}, {Window: spend.Total, MaxTokens: 1_000_000}}
	st, err := h.b.KeyStatus(ctx, "late", budgets)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{3 * 1300, 4 * 1300, 4 * 1300} {
		if st[i].Used.Tokens != want {
			t.Errorf("a %s budget set after the calls shows %d tokens used, want %d", budgets[i].Window, st[i].Used.Tokens, want)
		}
	}
	// 3900 used today: a day budget of 5000 has no room for a call's 2000.
	tight := free
	tight.Budgets = []spend.Budget{{Window: spend.Day, MaxTokens: 5000}}
	if ee := exhausted(t, h.run(t, tight)); ee.Balance.Used.Tokens != 3900 {
		t.Fatalf("refused with %d tokens used, want 3900", ee.Balance.Used.Tokens)
	}
	reloaded := spend.New(h.store, []spend.Team{{Name: "ops", Budgets: []spend.Budget{{Window: spend.Month, MaxTokens: 6000}}}}, prices(t), spend.DefaultConfig(), h.clock.Now)
	_, err = reloaded.Reserve(ctx, free, call, time.Time{})
	if ee := exhausted(t, err); !ee.TeamBudget || ee.Balance.Used.Tokens != 5200 {
		t.Fatalf("the team's budget configured after its calls: %+v, want refused with 5200 tokens used", ee)
	}
}

// TestBudgetRemovedAndSetAgain: a budget removed and set again in one
// window counts the calls made in between.
func TestBudgetRemovedAndSetAgain(t *testing.T) {
	h := newHarness(t)
	with := spend.Subject{Key: "a", Budgets: []spend.Budget{{Window: spend.Day, MaxTokens: 1_000_000}}}
	for _, sub := range []spend.Subject{with, {Key: "a"}, {Key: "a"}, with} {
		if err := h.run(t, sub); err != nil {
			t.Fatal(err)
		}
	}
	st, err := h.b.KeyStatus(context.Background(), "a", with.Budgets)
	if err != nil {
		t.Fatal(err)
	}
	if st[0].Used.Tokens != 4*1300 {
		t.Fatalf("%d tokens used, want the four calls' %d", st[0].Used.Tokens, 4*1300)
	}
}

// TestConcurrentCallsNeverOverspend: 32 callers at once on one budget, each
// call spending less than it reserved: what was spent never exceeds the
// budget, and the budget is used up to less than one reservation.
func TestConcurrentCallsNeverOverspend(t *testing.T) {
	h := newHarness(t)
	sub := spend.Subject{Key: "a", Budgets: []spend.Budget{{Window: spend.Day, MaxCostUSD: 0.05}}}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for {
				if err := h.run(t, sub); err != nil {
					exhausted(t, err)
					return
				}
			}
		})
	}
	wg.Wait()
	st, _ := h.b.KeyStatus(context.Background(), "a", sub.Budgets)
	limit := spend.Nanos(0.05)
	if st[0].Used.Cost > limit || st[0].Used.Cost+3_000_000 <= limit || st[0].Reserved != (state.Amount{}) {
		t.Fatalf("spent %s of %s with %s reserved, want within one reservation ($0.003) below the budget",
			spend.FormatUSD(st[0].Used.Cost), spend.FormatUSD(limit), spend.FormatUSD(st[0].Reserved.Cost))
	}
}

func TestCheckBudgets(t *testing.T) {
	tests := []struct {
		name    string
		budgets []spend.Budget
		want    string
	}{
		{"the issue's shape", []spend.Budget{{Window: spend.Day, MaxCostUSD: 5}, {Window: spend.Month, MaxTokens: 2_000_000}}, ""},
		{"both caps", []spend.Budget{{Window: spend.Total, MaxCostUSD: 5, MaxTokens: 9}}, ""},
		{"no window", []spend.Budget{{MaxCostUSD: 5}}, "budgets[0].window is required: day, month or total"},
		{"unknown window", []spend.Budget{{Window: "week", MaxCostUSD: 5}}, `budgets[0].window is "week"; the windows are day, month and total`},
		{"a window twice", []spend.Budget{{Window: spend.Day, MaxCostUSD: 5}, {Window: spend.Day, MaxTokens: 5}}, "budgets[1].window day is already the window of budgets[0]"},
		{"no cap", []spend.Budget{{Window: spend.Day}}, "budgets[0].max_cost_usd or max_tokens is required"},
		{"negative", []spend.Budget{{Window: spend.Day, MaxTokens: -1}}, "budgets[0].max_tokens must not be negative"},
		{"too much", []spend.Budget{{Window: spend.Day, MaxCostUSD: 2e6}}, "budgets[0].max_cost_usd must be at most 1000000"},
		// Below half a nano-dollar the cap rounded to 0, which caps nothing:
		// a key with it spent $0.0001 of its $0.000000000001.
		{"less than a nano-dollar", []spend.Budget{{Window: spend.Day, MaxCostUSD: 1e-12}}, "budgets[0].max_cost_usd must be at least 0.000000001"},
		{"a nano-dollar", []spend.Budget{{Window: spend.Day, MaxCostUSD: 1e-9}}, ""},
	}
	for _, tc := range tests {
		err := spend.CheckBudgets(tc.budgets)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// lateAnswer is a store whose reservations are made, but whose answer is
// lost to the caller's cancellation: what the redis store does when the
// call's client goes while the script runs.
type lateAnswer struct{ *memory.Store }

func (s lateAnswer) Reserve(ctx context.Context, r state.Reservation) (state.Reserved, error) {
	res, err := s.Store.Reserve(context.WithoutCancel(ctx), r)
	if err == nil && ctx.Err() != nil {
		return state.Reserved{}, ctx.Err()
	}
	return res, err
}

// TestCancelledWhileReservingHoldsNothing: a call whose client went while
// its reservation was being made leaves nothing reserved. It was held
// until it lapsed (five minutes past the call's deadline), and the
// budget refused calls as if one ran.
func TestCancelledWhileReservingHoldsNothing(t *testing.T) {
	c := statetest.NewClock()
	store := memory.New()
	b := spend.New(lateAnswer{store}, nil, prices(t), spend.DefaultConfig(), c.Now)
	sub := spend.Subject{Key: "a", Budgets: []spend.Budget{{Window: spend.Day, MaxCostUSD: 0.004}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Reserve(ctx, sub, call, c.Now().Add(time.Minute)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Reserve with the call's context ended: %v", err)
	}
	st, err := b.KeyStatus(context.Background(), "a", sub.Budgets)
	if err != nil {
		t.Fatal(err)
	}
	if st[0].Reserved != (state.Amount{}) || st[0].Used != (state.Amount{}) {
		t.Fatalf("after a call that ended while reserving: %+v reserved, %+v used; want nothing", st[0].Reserved, st[0].Used)
	}
	if _, err := b.Reserve(context.Background(), sub, call, c.Now().Add(time.Minute)); err != nil {
		t.Fatalf("the next call: %v; want it admitted", err)
	}
}

// TestNanosStaysWithinWhatCountersHold: a cost past what the counters hold
// (a huge reply at a high price) counts as the most they hold; converted
// as it was, it wrapped around to a negative amount that credited the
// budgets it was settled to.
func TestNanosStaysWithinWhatCountersHold(t *testing.T) {
	for usd, want := range map[float64]int64{0.01: 10_000_000, 1e6: 1e15, 1e7: spend.MaxNanos, 1e300: spend.MaxNanos} {
		if got := spend.Nanos(usd); got != want {
			t.Errorf("Nanos(%g) = %d, want %d", usd, got, want)
		}
	}
}

// TestCharge: reported usage is charged as it is, an attempt whose stream
// ended before its usage came is charged a token per 3 bytes of its
// request and of what it produced, and one that never opened nothing.
func TestCharge(t *testing.T) {
	// Anthropic's report at message_start: the input, one output token.
	started := provider.Usage{InputTokens: 500, OutputTokens: 1}
	for _, tc := range []struct {
		name string
		a    spend.Attempt
		want provider.Usage // on top of what was reported
	}{
		{"a report with the reply's end wins", spend.Attempt{Usage: used, Reported: true, Finished: true, Opened: true, InputBytes: 9000, OutputBytes: 9000}, provider.Usage{}},
		{"a reported zero with the end wins", spend.Attempt{Reported: true, Finished: true, Opened: true, InputBytes: 9000, OutputBytes: 9000}, provider.Usage{}},
		{"cut before its usage", spend.Attempt{Opened: true, InputBytes: 3000, OutputBytes: 301}, provider.Usage{InputTokens: 1000, OutputTokens: 101}},
		{"cut after its finish, before its usage (OpenAI's last chunk)", spend.Attempt{Finished: true, Opened: true, InputBytes: 3000, OutputBytes: 301}, provider.Usage{InputTokens: 1000, OutputTokens: 101}},
		{"cancelled before a delta", spend.Attempt{Opened: true, InputBytes: 10}, provider.Usage{InputTokens: 4}},
		{"cut after a report at its start: the reported input, the output produced", spend.Attempt{Usage: started, Reported: true, Opened: true, InputBytes: 3000, OutputBytes: 301}, provider.Usage{OutputTokens: 100}},
		{"cut after a report that counted more than produced", spend.Attempt{Usage: provider.Usage{InputTokens: 500, OutputTokens: 200}, Reported: true, Opened: true, InputBytes: 3000, OutputBytes: 301}, provider.Usage{}},
		{"cut after a report without its input", spend.Attempt{Usage: provider.Usage{OutputTokens: 1}, Reported: true, Opened: true, InputBytes: 3000, OutputBytes: 301}, provider.Usage{InputTokens: 1000, OutputTokens: 100}},
		{"never opened", spend.Attempt{InputBytes: 3000, OutputBytes: 300}, provider.Usage{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := spend.Charge(tc.a); got != tc.want {
				t.Fatalf("Charge(%+v) = %+v; want %+v", tc.a, got, tc.want)
			}
		})
	}
}

// TestSettleWithAnEstimate: a call settled with an estimated part spends
// it on its budgets like reported usage, and its usage records say how
// much of their tokens and cost was estimated.
func TestSettleWithAnEstimate(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	sub := spend.Subject{Key: "a", Budgets: []spend.Budget{{Window: spend.Day, MaxTokens: 1_000_000}}}
	hold, err := h.b.Reserve(ctx, sub, call, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	est := provider.Usage{InputTokens: 1000, OutputTokens: 101} // $0.001202 at mock/echo's prices
	all := used
	all.Add(est)
	if err := hold.Settle(ctx, spend.Spent{Usage: all, Cost: usedCost + 0.001202, Estimated: est, EstimatedCost: 0.001202}); err != nil {
		t.Fatal(err)
	}
	st, _ := h.b.KeyStatus(ctx, "a", sub.Budgets)
	if st[0].Used != (state.Amount{Cost: 3_002_000, Tokens: 2401}) {
		t.Fatalf("the budget spent %+v, want the reported and the estimated tokens", st[0].Used)
	}
	recs, err := h.b.Usage(ctx, spend.UsageQuery{From: "2025-01-02", To: "2025-01-02"})
	if err != nil {
		t.Fatal(err)
	}
	want := spend.Record{Day: "2025-01-02", Key: "a", Calls: 1, Usage: all, Cost: 3_002_000, Estimated: est, EstimatedCost: 1_202_000}
	if len(recs) != 1 || recs[0] != want {
		t.Fatalf("usage records %+v, want %+v", recs, want)
	}
}
