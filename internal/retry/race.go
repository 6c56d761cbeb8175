package retry

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// Attempter is the call's side of its attempts, which Run runs.
type Attempter[T any] interface {
	// Attempt runs attempt a under ctx and returns what it produced. It
	// calls a.Commit before it shows the client anything (and before it
	// ends the call itself), and returns at once when Commit refuses.
	//
	// With hedging, Attempt runs on a goroutine of its own, beside the other
	// attempts of its race, and ctx ends as soon as another attempt of the
	// race commits (its cause is then ErrLost) or the call ends. It must
	// not touch the Plan.
	Attempt(ctx context.Context, a *Attempt) (T, error)
	// Settle is told, on Run's goroutine, of every attempt that ended, once,
	// with what Attempt returned. When a.Decides(), its outcome is its
	// round's, and Settle returns what the attempt function of a plan
	// without hedging returns: the call's result, a Step's Continue, the
	// Step's Failure or an error that ends the call. Otherwise (an attempt
	// that lost its race, or failed beside another that ran on) nothing
	// follows it and Settle's results are ignored: it only accounts for it.
	//
	// Settle calls for attempts that do not decide may come while the
	// race's winner is still streaming on its own goroutine.
	Settle(a *Attempt, res T, err error) (T, error)
}

// HedgeObserver is an Attempter's optional capability: told, on Run's
// goroutine, of every hedge the retry budget refused (to target t).
type HedgeObserver interface {
	HedgeRefused(t provider.Target)
}

// ErrLost is the cause an attempt's context is cancelled with when another
// attempt of its race committed first.
var ErrLost = errors.New("retry: another attempt of the race answered first")

// Outcome is how an attempt fared in its round.
type Outcome uint8

// Outcomes.
const (
	// OutcomeRunning: the attempt has not ended.
	OutcomeRunning Outcome = iota
	// OutcomeAlone: the attempt was its round's only one (no hedge started
	// beside it); its outcome is the round's.
	OutcomeAlone
	// OutcomeWon: the attempt committed first in a race; its outcome is
	// the round's.
	OutcomeWon
	// OutcomeLost: another attempt of its race committed first, and this
	// one was cancelled (or ended without having committed).
	OutcomeLost
	// OutcomeFailed: the attempt failed in a race before committing. Its
	// outcome is the round's only when it is the round's first attempt and
	// every other attempt of the race failed too.
	OutcomeFailed
)

// String returns the outcome's lower-case name, for traces, logs and
// metrics.
func (o Outcome) String() string {
	switch o {
	case OutcomeAlone:
		return "alone"
	case OutcomeWon:
		return "won"
	case OutcomeLost:
		return "lost"
	case OutcomeFailed:
		return "failed"
	}
	return "running"
}

// Attempt is one attempt of a call, as Run starts it.
type Attempt struct {
	// N is the attempt's number, from 1. Every attempt of the call, hedges
	// included, is numbered in the order it starts.
	N int
	// Target is where the attempt goes.
	Target provider.Target
	// Started and Ended are when the attempt started and ended, on the
	// plan's clock (Env.Now); Ended is zero until it ended.
	Started, Ended time.Time
	// Hedge says the attempt is a hedge: Run started it beside its round's
	// first attempt, which had committed nothing for the hedging delay.
	Hedge bool

	committed   bool // Commit succeeded; the attempt's goroutine's, until it ended
	decides     bool
	outcome     Outcome
	now         func() time.Time
	race        *race // nil when the attempt runs alone
	committedAt time.Time
	// end ends the attempt's count in flight at its provider; slot, a
	// hedge's, releases the retry it holds in the budget until its race is
	// decided. Run's goroutine calls them, once (release).
	end, slot func()
}

// Commit claims the call's output for the attempt: it returns true when
// the attempt may show the client what it produced, and false when another
// attempt of its race committed first (the attempt must then return at
// once, having shown nothing). An attempt commits when it is about to show
// the client its first delta: text, reasoning, a refusal or a tool call,
// anything the client would see; a sign of life that the client does not
// see (keep-alives, pings, usage) is not a reason to commit. An attempt
// that ends the call itself (its output passed the limit) commits first
// too; one that completes without any delta is committed by Run when it
// ends, if no other attempt committed. The first Commit of a race cancels
// the race's other attempts at once.
//
// Commit is called by the attempt's own goroutine; an attempt that runs
// alone commits at once.
func (a *Attempt) Commit() bool {
	if a.committed {
		return true
	}
	if a.race != nil && !a.race.commit(a) {
		return false
	}
	a.committed, a.committedAt = true, a.now()
	return true
}

// Outcome returns how the attempt fared; OutcomeRunning until Settle.
func (a *Attempt) Outcome() Outcome { return a.outcome }

// Decides reports whether the attempt's outcome is its round's (see
// Attempter.Settle).
func (a *Attempt) Decides() bool { return a.decides }

// Raced reports whether the attempt ran beside others: its round started
// a hedge.
func (a *Attempt) Raced() bool { return a.outcome != OutcomeAlone && a.outcome != OutcomeRunning }

// race is the state the attempts of one round share while they race: who
// committed, and how to cancel the others.
type race struct {
	mu      sync.Mutex
	winner  *Attempt
	cancels map[*Attempt]context.CancelCauseFunc
	won     chan struct{} // closed by the first commit
}

func newRace() *race {
	return &race{cancels: map[*Attempt]context.CancelCauseFunc{}, won: make(chan struct{})}
}

// commit makes a the race's winner, unless another attempt is, and
// cancels the others.
func (r *race) commit(a *Attempt) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.winner != nil {
		return r.winner == a
	}
	r.winner = a
	for o, cancel := range r.cancels {
		if o != a {
			cancel(ErrLost)
		}
	}
	close(r.won)
	return true
}

// committed reports whether an attempt of the race committed.
func (r *race) committed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.winner != nil
}

// join adds the attempt that mk makes to the race, with the cancel func of
// its context, unless an attempt committed already: then it makes none
// and returns nil.
func (r *race) join(mk func() *Attempt, cancel context.CancelCauseFunc) *Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.winner != nil {
		return nil
	}
	a := mk()
	a.race = r
	r.cancels[a] = cancel
	return a
}

// testHookEnded, when set (by tests only), is told of each attempt of a
// race that Run saw end.
var testHookEnded func(n int)

// ended is what an attempt's goroutine hands Run when it ends.
type ended[T any] struct {
	a   *Attempt
	res T
	err error
	// lost says the attempt's context had been cancelled because another
	// attempt committed when it returned: whatever it returned, it lost.
	lost  bool
	panic *attemptPanic
}

// attemptPanic is a panic of an attempt's goroutine, raised again on
// Run's goroutine (where the handler's recovery turns it into INTERNAL)
// once the race's other attempts ended.
type attemptPanic struct {
	value any
	stack []byte
}

func (p *attemptPanic) String() string {
	return fmt.Sprintf("%v\n\nraised by an attempt's goroutine:\n%s", p.value, p.stack)
}

// round runs one round of the plan: its next attempt, and, while the call
// has hedges left and the attempt commits nothing for the hedging delay,
// hedges beside it. It returns what Settle returned for the attempt that
// decides the round, after every attempt of the round ended.
func round[T any](ctx context.Context, p *Plan, timer Timer, at Attempter[T]) (T, error) {
	first := p.start()
	delay := p.hedgeDelay()
	if delay <= 0 {
		res, err := at.Attempt(ctx, first)
		p.ended(first)
		if err == nil && !first.committed {
			// A reply without a delta: it committed as it ended.
			first.committed, first.committedAt = true, first.Ended
		}
		first.outcome, first.decides = OutcomeAlone, true
		p.observe(first)
		defer p.done(first)
		return at.Settle(first, res, err)
	}
	return runRace(ctx, p, timer, at, first, delay)
}

// runRace runs first and its hedges (see round).
func runRace[T any](ctx context.Context, p *Plan, timer Timer, at Attempter[T], first *Attempt, delay time.Duration) (T, error) {
	rctx, cancelRace := context.WithCancelCause(ctx)
	defer cancelRace(nil)
	r := newRace()
	results := make(chan ended[T], 1+p.hedgesLeft())
	inflight, started := 0, 0
	launch := func(mk func() *Attempt) *Attempt {
		actx, cancel := context.WithCancelCause(rctx)
		a := r.join(mk, cancel)
		if a == nil {
			cancel(ErrLost)
			return nil
		}
		inflight++
		started++
		go func() {
			e := ended[T]{a: a}
			defer func() {
				cancel(nil)
				if v := recover(); v != nil {
					e.panic = &attemptPanic{value: v, stack: debug.Stack()}
				}
				results <- e
			}()
			e.res, e.err = at.Attempt(actx, a)
			e.lost = errors.Is(context.Cause(actx), ErrLost)
		}()
		return a
	}
	launch(func() *Attempt { return first })

	tick, stopTick := after(timer, delay)
	defer func() { stopTick() }()
	won := r.won
	var decided, held *ended[T]
	var panicked *attemptPanic
	settle := func(e *ended[T], o Outcome) {
		e.a.outcome = o
		p.observe(e.a)
		p.done(e.a)
		_, _ = at.Settle(e.a, e.res, e.err)
	}
	for inflight > 0 {
		select {
		case e := <-results:
			inflight--
			p.ended(e.a)
			if testHookEnded != nil {
				testHookEnded(e.a.N)
			}
			switch {
			case e.panic != nil:
				panicked = e.panic
				p.done(e.a)
				cancelRace(errors.New("retry: an attempt of the race panicked"))
			case panicked != nil:
				settle(&e, OutcomeLost)
			case e.a.committed || e.err == nil && r.commit(e.a):
				if !e.a.committed {
					// A reply without a delta: it committed as it ended.
					e.a.committed, e.a.committedAt = true, e.a.Ended
				}
				decided = &e
			case e.lost || e.err == nil:
				// (A reply that ended after another attempt committed.)
				settle(&e, OutcomeLost)
			case e.a == first && !r.committed():
				held = &e
			default:
				settle(&e, OutcomeFailed)
			}
		case <-tick:
			tick = nil
			if ctx.Err() != nil || r.committed() {
				continue
			}
			t, slot, ok := p.hedge(ctx)
			if !ok {
				if o, is := at.(HedgeObserver); is {
					o.HedgeRefused(t)
				}
				continue // no more hedges this round
			}
			end := p.budget(t).Begin(ctx)
			if launch(func() *Attempt { return p.newHedge(t, slot, end) }) == nil {
				// An attempt committed meanwhile: the hedge never starts.
				end()
				slot()
				continue
			}
			if p.hedgesLeft() > 0 {
				stopTick()
				tick, stopTick = after(timer, delay)
			}
		case <-won:
			// A hedge holds a retry in flight until its race is decided.
			won, tick = nil, nil
			r.releaseHedges()
		}
	}
	if panicked != nil {
		for _, e := range []*ended[T]{decided, held} {
			if e != nil {
				p.done(e.a)
			}
		}
		panic(panicked)
	}
	if decided != nil {
		if held != nil {
			settle(held, OutcomeFailed)
		}
		p.commitTo(decided.a)
		decided.a.outcome = OutcomeWon
	} else {
		// Every attempt of the race failed: the plan decides on its first
		// attempt's failure, as if it had run alone.
		decided = held
		decided.a.outcome = OutcomeFailed
	}
	if started == 1 {
		decided.a.outcome = OutcomeAlone
	}
	decided.a.decides = true
	p.observe(decided.a)
	defer p.done(decided.a)
	return at.Settle(decided.a, decided.res, decided.err)
}

// releaseHedges releases the retries the race's hedges hold in the budget.
func (r *race) releaseHedges() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for a := range r.cancels {
		release(&a.slot)
	}
}

// after returns a channel that receives once d passed, from timer (nil:
// real time), and a func that stops a real timer.
func after(timer Timer, d time.Duration) (<-chan time.Time, func()) {
	if timer != nil {
		return timer.After(d), func() {}
	}
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}
