package retry_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/retry/retrytest"
)

// Races start goroutines: none may outlive its test.
func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

// racer is a scripted Attempter: each attempt, as it starts, is handed to
// the test (started), which then makes it commit, succeed or fail through
// its controls; an attempt whose context ends returns the context's error,
// unless it is deaf (a provider slow to notice), which only the test ends.
// Settle records each attempt's outcome (also on settled) and decides like
// a call: a success is the result, a failure asks the plan (Failed), a
// failure of an attempt that does not decide tells the plan's RaceFailed.
type racer struct {
	t        *testing.T
	p        *retry.Plan
	deaf     map[int]bool
	started  chan *control
	settles  chan string
	refusals chan string
	mu       sync.Mutex
	settled  []string
	refused  []string
	canceled map[int]error // attempt → the cause its context ended with
}

// control drives one running attempt.
type control struct {
	a      *retry.Attempt
	commit chan chan bool // the attempt commits and answers whether it may
	end    chan error     // the attempt ends with this error (nil: success)
}

func newRacer(t *testing.T, p *retry.Plan) *racer {
	return &racer{t: t, p: p, deaf: map[int]bool{}, started: make(chan *control, 16), settles: make(chan string, 16), refusals: make(chan string, 16), canceled: map[int]error{}}
}

func (r *racer) Attempt(ctx context.Context, a *retry.Attempt) (string, error) {
	c := &control{a: a, commit: make(chan chan bool), end: make(chan error, 1)}
	r.started <- c
	gone := ctx.Done()
	if r.deaf[a.N] {
		gone = nil
	}
	defer func() {
		if ctx.Err() != nil {
			r.mu.Lock()
			r.canceled[a.N] = context.Cause(ctx)
			r.mu.Unlock()
		}
	}()
	for {
		select {
		case ok := <-c.commit:
			ok <- a.Commit()
		case err := <-c.end:
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("reply of %d", a.N), nil
		case <-gone:
			return "", ctx.Err()
		}
	}
}

func (r *racer) Settle(a *retry.Attempt, res string, err error) (string, error) {
	s := fmt.Sprintf("%d→%s %s", a.N, a.Target.Entry.Config.Name, a.Outcome())
	if a.Hedge {
		s += " hedge"
	}
	if a.Decides() {
		s += " decides"
	}
	r.mu.Lock()
	r.settled = append(r.settled, s)
	r.mu.Unlock()
	r.settles <- s
	switch {
	case !a.Decides():
		if err != nil && a.Outcome() == retry.OutcomeFailed {
			r.p.RaceFailed(a, retry.Classify(err))
		}
		return "", nil
	case err == nil:
		r.p.Succeeded()
		return res, nil
	}
	return "", r.p.Failed(err, retry.Classify(err), false).Continue()
}

func (r *racer) HedgeRefused(t provider.Target) {
	r.mu.Lock()
	r.refused = append(r.refused, t.Entry.Config.Name)
	r.mu.Unlock()
	r.refusals <- t.Entry.Config.Name
}

// nextRefusal returns the target of the next hedge the budget refused.
func (r *racer) nextRefusal() string {
	r.t.Helper()
	select {
	case s := <-r.refusals:
		return s
	case <-time.After(10 * time.Second):
		r.t.Fatal("no hedge was refused")
		return ""
	}
}

// next returns the next attempt that started.
func (r *racer) next() *control {
	r.t.Helper()
	select {
	case c := <-r.started:
		return c
	case <-time.After(10 * time.Second):
		r.t.Fatal("no attempt started")
		return nil
	}
}

// noneStarted checks that no further attempt started.
func (r *racer) noneStarted() {
	r.t.Helper()
	select {
	case c := <-r.started:
		r.t.Errorf("attempt %d started, want none", c.a.N)
	default:
	}
}

// nextSettled returns the next attempt Settle was told of, as recorded.
func (r *racer) nextSettled() string {
	r.t.Helper()
	select {
	case s := <-r.settles:
		return s
	case <-time.After(10 * time.Second):
		r.t.Fatal("no attempt was settled")
		return ""
	}
}

// tryCommit makes the attempt commit and returns whether it may.
func (c *control) tryCommit() bool {
	ok := make(chan bool)
	select {
	case c.commit <- ok:
		return <-ok
	case <-time.After(10 * time.Second):
		panic(fmt.Sprintf("attempt %d is not running: it cannot commit", c.a.N))
	}
}

func (r *racer) Settled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.settled)
}

func (r *racer) Canceled(n int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.canceled[n]
}

// result is what Run returned.
type result struct {
	res string
	err error
}

// runAsync runs p in the background and returns where its result goes.
func runAsync(ctx context.Context, p *retry.Plan, timer retry.Timer, r *racer) <-chan result {
	done := make(chan result, 1)
	go func() {
		res, err := retry.Run(ctx, p, timer, r)
		done <- result{res, err}
	}()
	return done
}

func (r *racer) wait(done <-chan result) result {
	r.t.Helper()
	select {
	case res := <-done:
		return res
	case <-time.After(10 * time.Second):
		r.t.Fatal("Run did not return")
		return result{}
	}
}

func hedgedPlan(h retry.Hedging, budget retry.Throttle, health retry.Health, targets ...provider.Target) *retry.Plan {
	if len(targets) == 0 {
		targets = []provider.Target{testTarget}
	}
	return retry.NewPlan(retry.PlanConfig{
		Policy:    retry.Policy{MaxAttempts: 2, InitialBackoff: 100 * ms, MaxBackoff: time.Second, MaxRetryAfter: time.Minute},
		Target:    targets[0],
		Fallbacks: targets[1:],
		Env:       &retry.Env{Budget: func(string) retry.Throttle { return budget }, Health: health, Rand: func(int64) int64 { return 0 }},
		Hedging:   h,
	})
}

func TestHedgeStartsAfterTheDelayAndTheFirstToCommitWins(t *testing.T) {
	budget := retry.NewBudget(retry.BudgetConfig{MinRetryConcurrency: 3})
	p := hedgedPlan(retry.Hedging{Max: 1, After: 200 * ms}, budget, nil)
	timer, r := retrytest.NewManualTimer(), newRacer(t, p)
	done := runAsync(t.Context(), p, timer, r)

	first := r.next()
	w := timer.Next(t)
	if w.D != 200*ms {
		t.Fatalf("the hedging delay is %v, want hedge_after, 200ms", w.D)
	}
	r.noneStarted() // nothing before the delay passed
	w.Fire()
	hedge := r.next()
	if hedge.a.N != 2 || !hedge.a.Hedge || first.a.Hedge || hedge.a.Target != testTarget {
		t.Fatalf("the hedge is attempt %d (hedge %v) to %v; want attempt 2, a hedge, to the same target", hedge.a.N, hedge.a.Hedge, hedge.a.Target)
	}
	if a, rt := budget.InFlight(); a != 2 || rt != 1 {
		t.Errorf("while racing: %d attempts and %d retries in flight, want 2 and the hedge's retry", a, rt)
	}
	if !hedge.tryCommit() {
		t.Fatal("the hedge could not commit first")
	}
	// The loser is cancelled as the winner commits, and settled while the
	// winner still streams.
	if got := r.nextSettled(); got != "1→up lost" {
		t.Errorf("settled first %q, want the loser", got)
	}
	if !errors.Is(r.Canceled(1), retry.ErrLost) {
		t.Errorf("the loser's context ended with %v, want ErrLost", r.Canceled(1))
	}
	hedge.end <- nil
	res := r.wait(done)
	if res.err != nil || res.res != "reply of 2" {
		t.Fatalf("Run = %q, %v; want the hedge's reply", res.res, res.err)
	}
	if got, want := r.Settled(), []string{"1→up lost", "2→up won hedge decides"}; !slices.Equal(got, want) {
		t.Errorf("settled %q, want %q", got, want)
	}
	if p.Attempts() != 2 || p.Hedges() != 1 {
		t.Errorf("%d attempts, %d hedges; want 2 and 1", p.Attempts(), p.Hedges())
	}
	if a, rt := budget.InFlight(); a != 0 || rt != 0 {
		t.Errorf("after the call: %d attempts and %d retries in flight, want none", a, rt)
	}
	timer.None(t)
}

// TestHedgeCommitIsExclusive: two attempts whose first deltas come
// together (the loser's provider slow to notice its cancellation): only
// the first to commit may show anything.
func TestHedgeCommitIsExclusive(t *testing.T) {
	p := hedgedPlan(retry.Hedging{Max: 1, After: 200 * ms}, nil, nil)
	timer, r := retrytest.NewManualTimer(), newRacer(t, p)
	r.deaf[2] = true
	done := runAsync(t.Context(), p, timer, r)
	first := r.next()
	timer.Next(t).Fire()
	hedge := r.next()
	if !first.tryCommit() {
		t.Fatal("the first attempt could not commit")
	}
	if hedge.tryCommit() {
		t.Error("the hedge committed after the first attempt had")
	}
	hedge.end <- errors.New("lost") // what an attempt refused does: it returns
	first.end <- nil
	res := r.wait(done)
	if res.err != nil || res.res != "reply of 1" {
		t.Fatalf("Run = %q, %v; want the first attempt's reply", res.res, res.err)
	}
	if got, want := r.Settled(), []string{"2→up lost hedge", "1→up won decides"}; !slices.Equal(got, want) {
		t.Errorf("settled %q, want %q", got, want)
	}
}

func TestNoHedgeWhenTheFirstAttemptCommitsInTime(t *testing.T) {
	p := hedgedPlan(retry.Hedging{Max: 2, After: 200 * ms}, nil, nil)
	timer, r := retrytest.NewManualTimer(), newRacer(t, p)
	done := runAsync(t.Context(), p, timer, r)
	first := r.next()
	w := timer.Next(t)
	if !first.tryCommit() {
		t.Fatal("the first attempt could not commit")
	}
	w.Fire() // too late: the attempt committed
	first.end <- nil
	if res := r.wait(done); res.err != nil || res.res != "reply of 1" {
		t.Fatalf("Run = %q, %v; want the first attempt's reply", res.res, res.err)
	}
	r.noneStarted()
	if got, want := r.Settled(), []string{"1→up alone decides"}; !slices.Equal(got, want) {
		t.Errorf("settled %q, want %q", got, want)
	}
	if p.Attempts() != 1 || p.Hedges() != 0 {
		t.Errorf("%d attempts, %d hedges; want 1 and none", p.Attempts(), p.Hedges())
	}
}

func TestMaxHedges(t *testing.T) {
	for _, max := range []int{1, 2} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			p := hedgedPlan(retry.Hedging{Max: max, After: 200 * ms}, nil, nil)
			timer, r := retrytest.NewManualTimer(), newRacer(t, p)
			done := runAsync(t.Context(), p, timer, r)
			controls := []*control{r.next()}
			for range max {
				w := timer.Next(t)
				if w.D != 200*ms {
					t.Errorf("hedging delay %v, want 200ms between hedges too", w.D)
				}
				w.Fire()
				controls = append(controls, r.next())
			}
			timer.None(t) // no delay is armed past max_hedges
			last := controls[len(controls)-1]
			if last.a.N != max+1 || !last.tryCommit() {
				t.Fatalf("the last hedge is attempt %d; want %d, and able to commit", last.a.N, max+1)
			}
			last.end <- nil
			if res := r.wait(done); res.err != nil {
				t.Fatal(res.err)
			}
			if p.Attempts() != max+1 || p.Hedges() != max {
				t.Errorf("%d attempts, %d hedges; want %d and %d", p.Attempts(), p.Hedges(), max+1, max)
			}
			r.noneStarted()
		})
	}
}

// TestMaxHedgesIsPerCall: the call's hedges are counted across its
// rounds: a retry after a race whose attempts all failed is not hedged
// when the call used its hedge.
func TestMaxHedgesIsPerCall(t *testing.T) {
	var health healthLog
	p := hedgedPlan(retry.Hedging{Max: 1, After: 200 * ms}, nil, &health)
	timer, r := retrytest.NewManualTimer(), newRacer(t, p)
	done := runAsync(t.Context(), p, timer, r)
	first := r.next()
	timer.Next(t).Fire()
	hedge := r.next()
	first.end <- overloaded
	// The first attempt failed, but the hedge runs on: no decision yet.
	hedge.end <- overloaded
	if got := r.nextSettled(); got != "2→up failed hedge" {
		t.Errorf("settled %q first, want the hedge, which did not decide", got)
	}
	if got := r.nextSettled(); got != "1→up failed decides" {
		t.Errorf("then %q, want the first attempt, which decides the round", got)
	}
	backoff := timer.Next(t)
	if backoff.D != 50*ms {
		t.Errorf("the wait before the retry is %v, want the backoff", backoff.D)
	}
	backoff.Fire()
	retried := r.next()
	if retried.a.N != 3 || retried.a.Hedge {
		t.Errorf("the retry is attempt %d (hedge %v), want 3, not a hedge", retried.a.N, retried.a.Hedge)
	}
	timer.None(t) // the call used its one hedge: the retry runs alone
	retried.end <- nil
	if res := r.wait(done); res.err != nil || res.res != "reply of 3" {
		t.Fatalf("Run = %q, %v; want the retry's reply", res.res, res.err)
	}
	if want := []string{"fail up", "fail up", "ok up"}; !slices.Equal(health, want) {
		t.Errorf("health heard %q, want each failed attempt of the race and the success", health)
	}
}

// TestHedgeFailureIsNotTheCallsWhileAnotherRuns: a hedge that fails while
// the first attempt runs on decides nothing; the first then wins.
func TestHedgeFailureIsNotTheCallsWhileAnotherRuns(t *testing.T) {
	p := hedgedPlan(retry.Hedging{Max: 2, After: 200 * ms}, nil, nil)
	timer, r := retrytest.NewManualTimer(), newRacer(t, p)
	done := runAsync(t.Context(), p, timer, r)
	first := r.next()
	timer.Next(t).Fire()
	hedge := r.next()
	hedge.end <- overloaded
	if got := r.nextSettled(); got != "2→up failed hedge" {
		t.Errorf("settled %q, want the failed hedge, not deciding", got)
	}
	if !first.tryCommit() {
		t.Fatal("the first attempt could not commit")
	}
	first.end <- nil
	if res := r.wait(done); res.err != nil || res.res != "reply of 1" {
		t.Fatalf("Run = %q, %v; want the first attempt's reply", res.res, res.err)
	}
	if got := r.nextSettled(); got != "1→up won decides" {
		t.Errorf("settled %q, want the first attempt, the race's winner", got)
	}
}

// TestFirstAttemptFailureWaitsForItsRace: the round's first attempt fails
// while its hedge runs on; the hedge wins, and the first attempt's failure
// is only accounted.
func TestFirstAttemptFailureWaitsForItsRace(t *testing.T) {
	seen := make(chan int, 4)
	retry.SetTestHookEnded(t.Cleanup, func(n int) { seen <- n })
	p := hedgedPlan(retry.Hedging{Max: 1, After: 200 * ms}, nil, nil)
	timer, r := retrytest.NewManualTimer(), newRacer(t, p)
	done := runAsync(t.Context(), p, timer, r)
	first := r.next()
	timer.Next(t).Fire()
	hedge := r.next()
	first.end <- dropped
	if n := <-seen; n != 1 {
		t.Fatalf("attempt %d ended, want the first", n)
	}
	if !hedge.tryCommit() {
		t.Fatal("the hedge could not commit")
	}
	hedge.end <- nil
	if res := r.wait(done); res.err != nil || res.res != "reply of 2" {
		t.Fatalf("Run = %q, %v; want the hedge's reply", res.res, res.err)
	}
	if got, want := r.Settled(), []string{"1→up failed", "2→up won hedge decides"}; !slices.Equal(got, want) {
		t.Errorf("settled %q, want %q", got, want)
	}
}

func TestHedgeRefusedByTheBudget(t *testing.T) {
	budget := retry.NewBudget(retry.BudgetConfig{}) // denies every retry
	p := hedgedPlan(retry.Hedging{Max: 2, After: 200 * ms}, budget, nil)
	timer, r := retrytest.NewManualTimer(), newRacer(t, p)
	done := runAsync(t.Context(), p, timer, r)
	first := r.next()
	timer.Next(t).Fire()
	r.nextRefusal()
	timer.None(t) // refused: the round tries no further hedge
	if !first.tryCommit() {
		t.Fatal("the first attempt could not commit")
	}
	first.end <- nil
	if res := r.wait(done); res.err != nil {
		t.Fatal(res.err)
	}
	r.noneStarted()
	if !slices.Equal(r.refused, []string{"up"}) || p.Hedges() != 0 || p.Attempts() != 1 {
		t.Errorf("refused %q, %d hedges, %d attempts; want one refusal by up's budget and no hedge", r.refused, p.Hedges(), p.Attempts())
	}
	if got := r.Settled(); !slices.Equal(got, []string{"1→up alone decides"}) {
		t.Errorf("settled %q, want the first attempt alone", got)
	}
}

// TestHedgeHoldsItsRetryUntilTheRaceIsDecided: a hedge counts as a retry
// in flight in its provider's budget while it races, so the budget bounds
// hedges as it bounds retries; once the race is decided the winner is an
// attempt like any other.
func TestHedgeHoldsItsRetryUntilTheRaceIsDecided(t *testing.T) {
	budget := retry.NewBudget(retry.BudgetConfig{MinRetryConcurrency: 1})
	p := hedgedPlan(retry.Hedging{Max: 2, After: 200 * ms}, budget, nil)
	timer, r := retrytest.NewManualTimer(), newRacer(t, p)
	done := runAsync(t.Context(), p, timer, r)
	first := r.next()
	timer.Next(t).Fire()
	hedge := r.next()
	// The budget's one retry is the hedge's: the second hedge is refused.
	timer.Next(t).Fire()
	if got := r.nextRefusal(); got != "up" {
		t.Errorf("refused by %q's budget, want up's", got)
	}
	if a, rt := budget.InFlight(); a != 2 || rt != 1 {
		t.Errorf("racing: %d attempts and %d retries in flight, want 2 and 1", a, rt)
	}
	if !hedge.tryCommit() {
		t.Fatal("the hedge could not commit")
	}
	if got := r.nextSettled(); got != "1→up lost" {
		t.Fatalf("settled %q, want the loser", got)
	}
	// Decided: the winner streams on as an attempt, no longer a retry.
	// (Run releases the retry as it sees the commit: wait for it.)
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, rt := budget.InFlight()
		if a == 1 && rt == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the commit: %d attempts and %d retries in flight, want 1 and 0", a, rt)
		}
		time.Sleep(ms)
	}
	hedge.end <- nil
	if res := r.wait(done); res.err != nil {
		t.Fatal(res.err)
	}
	_ = first
	if !slices.Equal(r.refused, []string{"up"}) || p.Hedges() != 1 {
		t.Errorf("refused %q with %d hedges, want the second hedge refused", r.refused, p.Hedges())
	}
}

func TestHedgeOnTheNextTarget(t *testing.T) {
	var health healthLog
	a, b := target("a"), target("b")
	p := hedgedPlan(retry.Hedging{Max: 2, After: 200 * ms, Target: retry.HedgeNextTarget}, nil, &health, a, b)
	timer, r := retrytest.NewManualTimer(), newRacer(t, p)
	done := runAsync(t.Context(), p, timer, r)
	first := r.next()
	timer.Next(t).Fire()
	toB := r.next()
	timer.Next(t).Fire()
	toA := r.next()
	if first.a.Target != a || toB.a.Target != b || toA.a.Target != a {
		t.Fatalf("attempts to %v, %v, %v; want a, then hedges to the next target b and, with no target after it, a again",
			first.a.Target, toB.a.Target, toA.a.Target)
	}
	if !toB.tryCommit() {
		t.Fatal("the hedge to b could not commit")
	}
	// The winner on b fails after it committed: the call is on b now, and
	// the plan retries b.
	toB.end <- dropped
	backoff := timer.Next(t)
	backoff.Fire()
	retried := r.next()
	if retried.a.N != 4 || retried.a.Target != b || retried.a.Hedge {
		t.Errorf("the retry is attempt %d to %v (hedge %v), want 4 to b", retried.a.N, retried.a.Target, retried.a.Hedge)
	}
	retried.end <- nil
	if res := r.wait(done); res.err != nil || res.res != "reply of 4" {
		t.Fatalf("Run = %q, %v", res.res, res.err)
	}
	if p.Target() != b || p.Fallbacks() != 1 {
		t.Errorf("the call ended on %v after %d fallbacks, want b", p.Target(), p.Fallbacks())
	}
	if want := []string{"fail b", "ok b"}; !slices.Equal(health, want) {
		t.Errorf("health heard %q, want %q (the losers were cancelled, not failed)", health, want)
	}
}

func TestRaceEndsWithTheCall(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := hedgedPlan(retry.Hedging{Max: 1, After: 200 * ms}, nil, nil)
	timer, r := retrytest.NewManualTimer(), newRacer(t, p)
	done := runAsync(ctx, p, timer, r)
	r.next()
	timer.Next(t).Fire()
	r.next()
	cancel()
	res := r.wait(done)
	var f *retry.Failure
	if !errors.As(res.err, &f) || f.Class.Class != provider.ClassCanceled || f.Attempts != 2 {
		t.Fatalf("Run error = %v, want a canceled Failure after 2 attempts", res.err)
	}
	got := r.Settled()
	slices.Sort(got)
	if want := []string{"1→up failed decides", "2→up failed hedge"}; !slices.Equal(got, want) {
		t.Errorf("settled %q, want %q", got, want)
	}
}

func TestRaceReraisesAnAttemptsPanic(t *testing.T) {
	p := hedgedPlan(retry.Hedging{Max: 1, After: 200 * ms}, nil, nil)
	timer := retrytest.NewManualTimer()
	var other atomicErr
	at := panicky{started: make(chan struct{}, 2), other: &other}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		_, _ = retry.Run(t.Context(), p, timer, at)
	}()
	<-at.started
	timer.Next(t).Fire()
	var v any
	select {
	case v = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	if s := fmt.Sprint(v); !strings.Contains(s, "boom") || !strings.Contains(s, "goroutine") {
		t.Errorf("Run panicked with %q, want the attempt's panic and its stack", s)
	}
	if other.get() == nil {
		t.Error("the other attempt was not cancelled before Run panicked")
	}
}

// panicky's first attempt waits for its context; its hedge panics.
type panicky struct {
	started chan struct{}
	other   *atomicErr
}

func (p panicky) Attempt(ctx context.Context, a *retry.Attempt) (string, error) {
	p.started <- struct{}{}
	if a.Hedge {
		panic("boom")
	}
	<-ctx.Done()
	p.other.set(context.Cause(ctx))
	return "", ctx.Err()
}

func (panicky) Settle(*retry.Attempt, string, error) (string, error) { return "", nil }

type atomicErr struct {
	mu  sync.Mutex
	err error
}

func (a *atomicErr) set(err error) { a.mu.Lock(); a.err = err; a.mu.Unlock() }
func (a *atomicErr) get() error    { a.mu.Lock(); defer a.mu.Unlock(); return a.err }

// TestAReplyWithoutDeltasCommitsAsItEnds: an attempt that completes
// without showing anything wins, if no other attempt committed.
func TestAReplyWithoutDeltasCommitsAsItEnds(t *testing.T) {
	p := hedgedPlan(retry.Hedging{Max: 1, After: 200 * ms}, nil, nil)
	timer, r := retrytest.NewManualTimer(), newRacer(t, p)
	done := runAsync(t.Context(), p, timer, r)
	first := r.next()
	timer.Next(t).Fire()
	r.next()
	first.end <- nil
	if res := r.wait(done); res.err != nil || res.res != "reply of 1" {
		t.Fatalf("Run = %q, %v; want the first attempt's reply", res.res, res.err)
	}
	if got, want := r.Settled(), []string{"2→up lost hedge", "1→up won decides"}; !slices.Equal(got, want) {
		t.Errorf("settled %q, want %q", got, want)
	}
}

func TestAdaptiveHedgingDelay(t *testing.T) {
	lat := retry.NewLatencies()
	h := retry.Hedging{Max: 1, Adaptive: true, Floor: 50 * ms}
	cfg := func(h retry.Hedging) retry.PlanConfig {
		return retry.PlanConfig{Policy: retry.Policy{MaxAttempts: 1}, Target: testTarget, Hedging: h, Env: &retry.Env{Latencies: lat}}
	}
	// Too few samples: an adaptive-only policy hedges nothing.
	timer := retrytest.NewManualTimer()
	p := retry.NewPlan(cfg(h))
	r := newRacer(t, p)
	done := runAsync(t.Context(), p, timer, r)
	first := r.next()
	timer.None(t)
	first.tryCommit()
	first.end <- nil
	if res := r.wait(done); res.err != nil {
		t.Fatal(res.err)
	}

	for i := range retry.LatencyMinSamples {
		lat.Observe(testTarget, time.Duration(i+1)*10*ms) // 10ms .. 200ms
	}
	for _, tc := range []struct {
		name  string
		after time.Duration
		want  time.Duration
	}{
		{"the p95", 0, 190 * ms},
		{"hedge_after is the least wait", 300 * ms, 300 * ms},
		{"the p95 above hedge_after", 100 * ms, 190 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := h
			h.After = tc.after
			p := retry.NewPlan(cfg(h))
			timer, r := retrytest.NewManualTimer(), newRacer(t, p)
			done := runAsync(t.Context(), p, timer, r)
			first := r.next()
			if w := timer.Next(t); w.D != tc.want {
				t.Errorf("hedging delay %v, want %v", w.D, tc.want)
			}
			first.tryCommit()
			first.end <- nil
			if res := r.wait(done); res.err != nil {
				t.Fatal(res.err)
			}
		})
	}
}

// TestRunRecordsTimesToFirstDelta: each committed attempt teaches the
// latencies its time to first delta, on the plan's clock.
func TestRunRecordsTimesToFirstDelta(t *testing.T) {
	lat := retry.NewLatencies()
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	for range retry.LatencyMinSamples {
		p := retry.NewPlan(retry.PlanConfig{Policy: retry.Policy{MaxAttempts: 1}, Target: testTarget, Env: &retry.Env{Latencies: lat, Now: clock}})
		r := newRacer(t, p)
		done := runAsync(t.Context(), p, nil, r)
		c := r.next()
		advance(700 * ms)
		c.tryCommit()
		advance(time.Second)
		c.end <- nil
		if res := r.wait(done); res.err != nil {
			t.Fatal(res.err)
		}
	}
	if q, ok := lat.Quantile(testTarget, 0.95); !ok || q != 700*ms {
		t.Errorf("p95 = %v, %v; want 700ms, the time to the first delta, not to the end", q, ok)
	}
}

func TestLatenciesQuantile(t *testing.T) {
	lat := retry.NewLatencies()
	other := target("other")
	if _, ok := lat.Quantile(testTarget, 0.95); ok {
		t.Error("a quantile without samples")
	}
	for i := range retry.LatencyMinSamples - 1 {
		lat.Observe(testTarget, time.Duration(i)*ms)
	}
	if _, ok := lat.Quantile(testTarget, 0.95); ok {
		t.Errorf("a quantile from %d samples, want none before %d", retry.LatencyMinSamples-1, retry.LatencyMinSamples)
	}
	lat.Observe(testTarget, 19*ms)
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 9 * ms}, {0.95, 18 * ms}, {1, 19 * ms}, {0.01, 0}} {
		if got, ok := lat.Quantile(testTarget, tc.q); !ok || got != tc.want {
			t.Errorf("Quantile(%v) = %v, %v; want %v", tc.q, got, ok, tc.want)
		}
	}
	if _, ok := lat.Quantile(other, 0.95); ok {
		t.Error("another target has the samples of up")
	}
	// The window keeps the most recent samples only.
	for range retry.LatencyWindow {
		lat.Observe(testTarget, time.Second)
	}
	if got, _ := lat.Quantile(testTarget, 0.01); got != time.Second {
		t.Errorf("after a window of 1s samples the smallest is %v, want 1s", got)
	}
	var none *retry.Latencies
	none.Observe(testTarget, time.Second)
	if _, ok := none.Quantile(testTarget, 0.95); ok {
		t.Error("a nil Latencies knows a quantile")
	}
}

func TestLimitsHedging(t *testing.T) {
	l := retry.Limits{MaxHedges: 2, MinHedgeAfter: 50 * ms}
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		name    string
		req     retry.HedgeRequest
		want    retry.Hedging
		wantErr string
	}{
		{"unset: off", retry.HedgeRequest{}, retry.Hedging{}, ""},
		{"max_hedges unset takes 1", retry.HedgeRequest{Set: true, After: 200 * ms},
			retry.Hedging{Max: 1, After: 200 * ms, Floor: 50 * ms, Target: retry.HedgeSameTarget}, ""},
		{"max_hedges 0 turns it off", retry.HedgeRequest{Set: true, After: 200 * ms, MaxHedges: n(0)}, retry.Hedging{}, ""},
		{"2 on the next target", retry.HedgeRequest{Set: true, After: 200 * ms, MaxHedges: n(2), Target: retry.HedgeNextTarget},
			retry.Hedging{Max: 2, After: 200 * ms, Floor: 50 * ms, Target: retry.HedgeNextTarget}, ""},
		{"adaptive only", retry.HedgeRequest{Set: true, Adaptive: true},
			retry.Hedging{Max: 1, Adaptive: true, Floor: 50 * ms, Target: retry.HedgeSameTarget}, ""},
		{"no delay", retry.HedgeRequest{Set: true}, retry.Hedging{}, "hedging.hedge_after"},
		{"below the floor", retry.HedgeRequest{Set: true, After: 10 * ms}, retry.Hedging{}, "hedging.hedge_after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.Hedging(tc.req)
			var fe *provider.FieldError
			switch {
			case tc.wantErr != "":
				if !errors.As(err, &fe) || fe.Field != tc.wantErr {
					t.Errorf("error %v, want a FieldError on %s", err, tc.wantErr)
				}
			case err != nil || got != tc.want:
				t.Errorf("Hedging = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	// The server's bound lowers a request's max_hedges; 0 turns hedging off.
	l.MaxHedges = 1
	if got, _ := l.Hedging(retry.HedgeRequest{Set: true, After: time.Second, MaxHedges: n(2)}); got.Max != 1 {
		t.Errorf("max_hedges 2 under a server bound of 1: %d", got.Max)
	}
	l.MaxHedges = 0
	if got, _ := l.Hedging(retry.HedgeRequest{Set: true, After: time.Second}); got != (retry.Hedging{}) {
		t.Errorf("hedging on a server that allows none: %+v", got)
	}
}

// TestLatenciesKeepABoundedNumberOfTargets: model names a caller makes up
// do not grow the record past MaxLatencyTargets; the targets observed
// least recently are dropped, the ones in use kept.
func TestLatenciesKeepABoundedNumberOfTargets(t *testing.T) {
	lat := retry.NewLatencies()
	for range retry.LatencyMinSamples {
		lat.Observe(testTarget, 7*ms)
	}
	made := func(i int) provider.Target {
		return provider.Target{Entry: testTarget.Entry, Model: fmt.Sprintf("made-up-%d", i)}
	}
	for i := range 10 * retry.MaxLatencyTargets {
		lat.Observe(made(i), ms)
		if i%64 == 0 {
			lat.Observe(testTarget, 7*ms) // a target in use
		}
	}
	if n := lat.Targets(); n != retry.MaxLatencyTargets {
		t.Errorf("Latencies keeps %d targets, want %d", n, retry.MaxLatencyTargets)
	}
	if got, ok := lat.Quantile(testTarget, 0.5); !ok || got != 7*ms {
		t.Errorf("the target in use lost its window: %v, %v", got, ok)
	}
	for range retry.LatencyMinSamples {
		lat.Observe(made(0), ms)
	}
	if got, ok := lat.Quantile(made(0), 0.5); !ok || got != ms || lat.Targets() != retry.MaxLatencyTargets {
		t.Errorf("a target dropped and observed again: %v, %v, %d targets", got, ok, lat.Targets())
	}
	if _, ok := lat.Quantile(made(1), 0.5); ok {
		t.Error("the oldest made-up target was kept")
	}
}
