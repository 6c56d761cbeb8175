package retry

import (
	"context"
	"errors"
	"time"

	retrygo "github.com/avast/retry-go/v4"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/telemetry"
)

// Health learns how each attempt to a target went: route health (outlier
// detection) counts a target's consecutive failures and restores it on a
// success. The plan reports every success, and every failure that was the
// target's (Classification.TargetFailed), never the caller's nor the
// request's. nil: nobody listens.
type Health interface {
	Succeeded(t provider.Target)
	Failed(t provider.Target)
}

// Timer makes the waits between attempts. Its After matches retry-go's
// Timer; tests inject one that records each wait and returns at once.
type Timer interface {
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// Env is what the plans of one server's calls share: the retry budgets,
// the routes' health, the observed latencies, the clock and randomness.
// A plan keeps a pointer to it, not a copy, since it lives as long as its
// call's stream.
type Env struct {
	// Budget returns the retry budget of a provider, by its configured
	// name; nil (or a nil func) means no budget.
	Budget func(provider string) Throttle
	// Health learns the outcome of each attempt; nil: nobody.
	Health Health
	// Latencies learns each attempt's time to first delta and gives
	// adaptive hedging delays; nil: none.
	Latencies *Latencies
	// Now and Rand default to time.Now and math/rand/v2; tests set them.
	Now  func() time.Time
	Rand Rand
}

// noEnv is the Env of a plan made without one.
var noEnv Env

// PlanConfig is what a Plan is made of.
type PlanConfig struct {
	// Policy is the call's retry policy (Limits.Policy).
	Policy Policy
	// Target is where the call's first attempt goes.
	Target provider.Target
	// Fallbacks are where the call goes next, in order, when a target fails
	// in a way that another target may not (see Plan.Failed); none without
	// a route or the request's fallback_models.
	Fallbacks []provider.Target
	// Env is what the server's calls share; nil: no budgets, health or
	// latencies, the real clock.
	Env *Env
	// Deadline is the call's deadline; zero means none.
	Deadline time.Time
	// MaxReasks is how many structured-output re-asks the call may make on
	// top of Policy.MaxAttempts; 0 without structured output.
	MaxReasks int
	// Hedging is the call's hedging policy (Limits.Hedging); zero: none.
	Hedging Hedging
	// Numbered is how many attempts the call made before this plan's
	// turn: the plan numbers its attempts after them, so that a call's
	// attempts are numbered 1, 2, 3, ... across its turns (0 for a call's
	// first turn).
	Numbered int
}

// Plan is one call's attempt plan: the one place that numbers the call's
// attempts, says where each goes, and decides what follows each one that
// did not succeed. Run executes it with retry-go.
//
// Its invariants: on each target at most Policy.MaxAttempts attempts fail
// in transport and the re-asks come on top, so a call makes at most
// MaxAttempts() attempts; the call moves to its next target only when the
// current one failed in a way that is the target's, not the request's, or
// the request outgrew its model's context window
// (Classification.FallsBack), and retrying it stopped (attempts used up,
// not retryable, its hint or backoff too long, its budget spent), never
// after output under MidstreamFail; a Step that retries is always
// followed by another attempt, unless the call's context ends during the
// wait (then Run reports the Failure of an interrupted wait); every
// decision after a failure is Policy.Decide's, with the exact delay, and a
// move to the next target follows at once.
//
// With hedging (PlanConfig.Hedging), each attempt the plan starts opens a
// round: while the call has hedges left and no attempt of the round has
// committed for the hedging delay, Run starts a hedge beside it (numbered
// as the next attempt, to the target Hedging.Target says, allowed by that
// target's retry budget like a retry, and counted in flight there as a
// retry until its race is decided). The first attempt of the round to
// commit wins and the others are cancelled; the winner's outcome is the
// round's, and a winner on another target makes that target the current
// one. When every attempt of the round fails before committing, the plan
// decides on the round's first attempt, as if it had run alone; hedges
// never count against Policy.MaxAttempts, and the call starts at most
// Hedging.Max of them in all.
//
// A Plan is used by its call's goroutine only (Run's).
//
// A plan lives as long as its call's stream, so it keeps what its call
// needs and no more (PlanConfig less its targets, and a pointer to the
// Env): 240 bytes.
type Plan struct {
	cfg      planConfig
	env      *Env
	ctx      context.Context   // Run's, for the budget
	targets  []provider.Target // Target, then Fallbacks
	cur      int               // the current target's index
	attempts int               // attempts started, hedges included
	hedges   int               // hedges started
	round    int               // hedges started in the current round
	tries    int               // attempts on the current target that were not re-asks or hedges
	reasks   int               // re-asks made
	// refused counts the attempts whose output the provider refused
	// (provider.ClassInvalidOutput): the first is retried, no other.
	refused  int
	reasking bool // the next attempt is a re-ask
	waiting  bool // a Step retried and its attempt has not started
	// next releases the retry a Step took for the next attempt, which is
	// in flight in the budget until that attempt starts.
	next func()
}

// planConfig is what a Plan keeps of its PlanConfig.
type planConfig struct {
	Policy    Policy
	Deadline  time.Time
	MaxReasks int
	Hedging   Hedging
	Numbered  int
}

// NewPlan returns the plan of a call.
func NewPlan(cfg PlanConfig) *Plan {
	env := cfg.Env
	if env == nil {
		env = &noEnv
	}
	targets := append([]provider.Target{cfg.Target}, cfg.Fallbacks...)
	return &Plan{
		cfg:     planConfig{Policy: cfg.Policy, Deadline: cfg.Deadline, MaxReasks: cfg.MaxReasks, Hedging: cfg.Hedging, Numbered: cfg.Numbered},
		env:     env,
		targets: targets,
	}
}

// now returns the plan's clock.
func (p *Plan) now() func() time.Time {
	if p.env.Now != nil {
		return p.env.Now
	}
	return time.Now
}

// MaxAttempts returns the most attempts the call can make: the policy's
// attempts on each target and the re-asks on top.
func (p *Plan) MaxAttempts() int {
	return p.cfg.Policy.MaxAttempts*len(p.targets) + p.cfg.MaxReasks
}

// Attempts returns the attempts this plan started so far, hedges
// included.
func (p *Plan) Attempts() int { return p.attempts }

// Hedges returns how many of the attempts started so far were hedges.
func (p *Plan) Hedges() int { return p.hedges }

// Target returns the target of the current attempt (before the first, of
// the first; after a Step, of the attempt it announced).
func (p *Plan) Target() provider.Target { return p.targets[p.cur] }

// Fallbacks returns how many times the call moved to another target.
func (p *Plan) Fallbacks() int { return p.cur }

// start begins the next attempt of the plan, which opens a round: a retry
// waiting for it is no longer in flight, and the attempt counts as in
// flight at its provider until ended.
func (p *Plan) start() *Attempt {
	p.attempts++
	if !p.reasking {
		p.tries++
	}
	p.reasking, p.waiting = false, false
	p.round = 0
	release(&p.next)
	t := p.targets[p.cur]
	return &Attempt{N: p.cfg.Numbered + p.attempts, Target: t, Started: p.now()(), now: p.now(), end: p.budget(t).Begin(p.context())}
}

// ended records that a ended: its time, and the end of the retry a hedge
// holds in the budget. a stays in flight at its provider until done: the
// attempt that decides its round, until its decision is made (a retry is
// asked for while it still counts).
func (p *Plan) ended(a *Attempt) {
	a.Ended = p.now()()
	release(&a.slot)
}

// done ends a's count in flight at its provider.
func (p *Plan) done(a *Attempt) { release(&a.end) }

// hedgesLeft returns how many hedges the call may still start.
func (p *Plan) hedgesLeft() int { return max(p.cfg.Hedging.Max-p.hedges, 0) }

// hedgeDelay returns the hedging delay of the round that starts: 0 when
// it starts no hedge (none left, or an adaptive delay not known yet).
func (p *Plan) hedgeDelay() time.Duration {
	if p.hedgesLeft() == 0 {
		return 0
	}
	return p.cfg.Hedging.Delay(p.env.Latencies, p.Target())
}

// hedgeTarget returns the target of the round's next hedge.
func (p *Plan) hedgeTarget() provider.Target {
	if p.cfg.Hedging.Target == HedgeNextTarget {
		if i := p.cur + p.round + 1; i < len(p.targets) {
			return p.targets[i]
		}
	}
	return p.targets[p.cur]
}

// hedge asks the retry budget of the round's next hedge's target, t, for
// the hedge. When it allows it, ok is true and slot holds the retry in
// flight; the hedge is then either made (newHedge) or slot released.
// When it denies it, the round starts no more hedges.
func (p *Plan) hedge(ctx context.Context) (t provider.Target, slot func(), ok bool) {
	t = p.hedgeTarget()
	slot, ok = p.budget(t).Retry(ctx)
	return t, slot, ok
}

// newHedge numbers a hedge to t, which holds slot in the budget and end
// in flight at its provider.
func (p *Plan) newHedge(t provider.Target, slot, end func()) *Attempt {
	p.attempts++
	p.hedges++
	p.round++
	return &Attempt{N: p.cfg.Numbered + p.attempts, Target: t, Hedge: true, Started: p.now()(), now: p.now(), end: end, slot: slot}
}

// commitTo makes the target of a, the attempt that won its race, the
// call's current target: a hedge on the route's next target that won
// moves the call there, as its first try.
func (p *Plan) commitTo(a *Attempt) {
	if a.Target == p.targets[p.cur] {
		return
	}
	for i, t := range p.targets {
		if t == a.Target {
			p.cur, p.tries = i, 1
			return
		}
	}
}

// observe records a's time to first delta, when it has one: committed, or
// cancelled as it lost its race (the time it had waited).
func (p *Plan) observe(a *Attempt) {
	switch {
	case p.env.Latencies == nil:
	case a.committed && !a.committedAt.IsZero():
		p.env.Latencies.Observe(a.Target, a.committedAt.Sub(a.Started))
	case a.outcome == OutcomeLost:
		p.env.Latencies.Observe(a.Target, a.Ended.Sub(a.Started))
	}
}

// RaceFailed records that a, an attempt of a race whose outcome is not its
// round's (see Attempt.Decides), failed (classified c): its target's health
// hears of it when the failure is the target's (c.TargetFailed), as
// Failed would tell it.
// Nothing follows it.
func (p *Plan) RaceFailed(a *Attempt, c Classification) {
	if c.TargetFailed() && p.env.Health != nil {
		p.env.Health.Failed(a.Target)
	}
}

// release calls *f once, if set.
func release(f *func()) {
	if *f != nil {
		(*f)()
		*f = nil
	}
}

func (p *Plan) context() context.Context {
	if p.ctx == nil {
		return context.Background()
	}
	return p.ctx
}

// budget returns the retry budget of t's provider; a nil *Budget (which
// allows everything) when there is none.
func (p *Plan) budget(t provider.Target) Throttle {
	if p.env.Budget != nil {
		if b := p.env.Budget(t.Entry.Config.Name); b != nil {
			return b
		}
	}
	return (*Budget)(nil)
}

// Succeeded records that the current attempt's provider call succeeded
// (its stream ended normally), which tells the target's health.
func (p *Plan) Succeeded() {
	if p.env.Health != nil {
		p.env.Health.Succeeded(p.Target())
	}
}

// Step is what follows an attempt that did not succeed: another attempt
// (Retry) or the end of the call (Failure).
type Step struct {
	// Next is the number of the next attempt, 0 when the call ends.
	Next int
	// Target is where the next attempt goes.
	Target provider.Target
	// Fallback says Target is not the failed attempt's target: the call
	// moved on to its next one.
	Fallback bool
	// Reason is why the attempt failed, as the WillRetry reports it: the
	// classification's, or ReasonTargetRefused for a failure that only a
	// fallback gets past (a spent quota, an unknown model, refused
	// credentials).
	Reason Reason
	// Delay is the exact wait before the next attempt.
	Delay time.Duration
	// Decision is the policy's decision, for logs and metrics (zero after a
	// re-ask).
	Decision Decision
	// Failure ends the call; nil when it retries.
	Failure *Failure

	err error // the attempt's error, carried to retry-go
}

// Retry reports whether another attempt follows.
func (s Step) Retry() bool { return s.Failure == nil }

// Continue returns what the attempt function returns to Run so that the
// next attempt follows after Delay; the Failure when the step ends the
// call.
func (s Step) Continue() error {
	if s.Failure != nil {
		return s.Failure
	}
	return &continueError{delay: s.Delay, err: s.err, step: s}
}

// Failed decides what follows the current attempt, which failed with err
// (classified as c; streamed says it had sent the client output). The
// policy decides whether to retry the same target (Policy.Decide, with the
// call's deadline), counting only the attempts to that target that were
// not re-asks; a retry must then be allowed by the target's provider's
// retry budget, unless the caller caused the failure (c.CallerCaused), and
// is in flight in it until its attempt starts. When the call does not
// retry, and the failure is the target's or the context window's
// (c.FallsBack) and the call has a next target, the call moves there at once (the first attempt at its
// target, which no budget is asked for), unless the attempt had streamed
// output under MidstreamFail. Otherwise the call ends with the Failure.
func (p *Plan) Failed(err error, c Classification, streamed bool) Step {
	if c.TargetFailed() && p.env.Health != nil {
		p.env.Health.Failed(p.Target())
	}
	if c.Class == provider.ClassInvalidOutput {
		// The model's output refused (a malformed tool call): another
		// generation usually gets it right, once; twice says the request
		// leads the model astray, and more attempts would only cost.
		p.refused++
		c.Retryable = c.Retryable && p.refused == 1
	}
	d := p.cfg.Policy.Decide(FailedAttempt{
		N: p.tries, Class: c, Streamed: streamed, Now: p.now()(), Deadline: p.cfg.Deadline,
	}, p.env.Rand)
	if d.Retry() && !c.CallerCaused {
		slot, ok := p.budget(p.Target()).Retry(p.context())
		if !ok {
			d.Stop = StopBudget
		} else {
			release(&p.next) // a Step's slot not taken up: never expected
			p.next = slot
		}
	}
	if d.Retry() {
		step := p.retry(d.Delay, d, err)
		step.Reason = c.Reason
		return step
	}
	if p.cur+1 < len(p.targets) && p.fallsBack(c, d, streamed) {
		p.cur++
		p.tries = 0
		step := p.retry(0, d, err)
		step.Fallback, step.Reason = true, c.Reason
		if step.Reason == ReasonUnspecified {
			step.Reason = ReasonTargetRefused
		}
		return step
	}
	return Step{Decision: d, Failure: p.failure(err, c, d.Stop)}
}

// fallsBack reports whether a failure that the current target will not
// retry moves the call to its next target: the failure must be the
// target's, and output already shown is never replaced under MidstreamFail.
func (p *Plan) fallsBack(c Classification, d Decision, streamed bool) bool {
	switch {
	case !c.FallsBack():
		return false
	case d.Stop == StopMidstream, streamed && p.cfg.Policy.Midstream == MidstreamFail:
		return false
	}
	return true
}

// Reask schedules a structured-output re-ask after the current attempt,
// whose reply did not conform (err): the next attempt follows at once, to
// the same target, and does not count against Policy.MaxAttempts. Whether
// a reply is re-asked at all is the structured-output session's decision;
// it allows at most PlanConfig.MaxReasks.
func (p *Plan) Reask(err error) Step {
	p.reasks++
	p.reasking = true
	step := p.retry(0, Decision{}, err)
	step.Reason = ReasonInvalidOutput
	return step
}

func (p *Plan) retry(delay time.Duration, d Decision, err error) Step {
	p.waiting = true
	return Step{Next: p.cfg.Numbered + p.attempts + 1, Target: p.Target(), Delay: delay, Decision: d, err: err}
}

// failure is the Failure that ends the call after the current attempt.
func (p *Plan) failure(err error, c Classification, stop Stop) *Failure {
	return &Failure{Err: err, Class: c, Stop: stop, Attempts: p.cfg.Numbered + p.attempts, Provider: p.Target().Entry.Config.Name}
}

// errPlanOverrun is the cause of a plan that decided to retry but was not
// given the attempt: a bug in how the plan bounds its attempts.
var errPlanOverrun = errors.New("retry: the attempt plan retried past its own bound")

// Run executes the plan with retry-go under ctx, one round per attempt
// the plan starts: the attempt (at.Attempt), and with hedging its hedges
// beside it, concurrently; once every attempt of the round ended, Settle
// of the one that decides the round says what follows, until it returns a
// result, or an error other than a Step's Continue. retry-go makes the
// waits between rounds, which end early when ctx ends; timer, when not
// nil, makes them instead of real time, and the hedging delays too.
//
// Run returns the result, the error an attempt ended the call with (a
// Step's *Failure, or the caller's own), or, when ctx ended before the
// first attempt or during a wait, the *Failure of that interruption:
// class canceled or deadline (by ctx's cause), StopNotRetryable. No
// attempt is running when it returns. A panic of an attempt's goroutine
// is raised again by Run, once the other attempts of its race ended.
func Run[T any](ctx context.Context, p *Plan, timer Timer, at Attempter[T]) (T, error) {
	p.ctx = ctx
	// A retry slot the call holds when it ends (its wait was cut short)
	// goes back to the budget.
	defer release(&p.next)
	if ctx.Err() != nil {
		var none T
		return rounds(ctx, p, timer, at, none, nil, false)
	}
	// The first round runs here rather than inside retry-go, which most
	// calls never need again: an attempt waits for its provider for as
	// long as it streams, and every frame below it stays on the call's
	// stack all that time (see docs/performance.md).
	res, err := round(ctx, p, timer, at)
	if err == nil || !isContinue(err) {
		return res, err
	}
	return rounds(ctx, p, timer, at, res, err, true)
}

// rounds runs the plan's rounds on retry-go. With ran, the first round
// already ran and returned res and err: retry-go is handed its outcome as
// its first call's, and waits and runs the rounds that follow.
func rounds[T any](ctx context.Context, p *Plan, timer Timer, at Attempter[T], res T, err error, ran bool) (T, error) {
	opts := []retrygo.Option{
		retrygo.Context(ctx),
		// The plan bounds the attempts; this bound is never what stops it.
		retrygo.Attempts(uint(p.MaxAttempts())),
		// Only a Step's Continue retries: a custom RetryIf replaces
		// retry-go's IsRecoverable, so the decision is the plan's alone.
		retrygo.RetryIf(isContinue),
		retrygo.DelayType(continueDelay),
		retrygo.LastErrorOnly(true),
	}
	if timer != nil {
		opts = append(opts, retrygo.WithTimer(timer))
	}
	// The span of the wait in progress, when the call is traced: from a
	// Step's Continue to the next attempt's start, or the call's end.
	var wait telemetry.Span
	res, err = retrygo.DoWithData(func() (T, error) {
		if ran {
			ran = false
			wait = startWait(ctx, err)
			return res, err
		}
		wait.EndWait(nil)
		res, err := round(ctx, p, timer, at)
		wait = startWait(ctx, err)
		return res, err
	}, opts...)
	switch {
	case err == nil:
		return res, nil
	case !p.waiting && p.attempts > 0:
		return res, err
	case ctx.Err() == nil && !isContinue(err):
		// The caller's own error where the plan would retry (its
		// will_retry event could not be sent), as after the first round.
		return res, err
	case ctx.Err() == nil:
		wait.EndWait(nil)
		return res, p.failure(errPlanOverrun, Classification{Class: provider.ClassUnknown}, StopAttempts)
	}
	// The wait before the next attempt was cut short, or the call ended
	// before its first: report why the context ended (client cancel,
	// deadline, shutdown).
	cause := context.Cause(ctx)
	wait.EndWait(cause)
	return res, &Failure{Err: cause, Class: Classify(cause), Stop: StopNotRetryable, Attempts: p.cfg.Numbered + p.attempts, Provider: p.Target().Entry.Config.Name}
}

// startWait starts the span of the wait that follows an attempt which
// returned err, when err is a Step's Continue and the call is traced.
func startWait(ctx context.Context, err error) telemetry.Span {
	if !telemetry.Recording(ctx) {
		return telemetry.Span{}
	}
	return traceWait(ctx, err)
}

// traceWait is startWait for a traced call (apart, so that an untraced
// call does not allocate the errors.As target).
func traceWait(ctx context.Context, err error) telemetry.Span {
	var c *continueError
	if !errors.As(err, &c) {
		return telemetry.Span{}
	}
	s := c.step
	return telemetry.StartWait(ctx, telemetry.Wait{
		Next: s.Next, NextProvider: s.Target.Entry.Config.Name, NextModel: s.Target.Model,
		Delay: s.Delay, FromHint: s.Decision.FromHint, Reason: s.Reason.String(),
		Fallback: s.Fallback,
	})
}

// continueError is a Step's Continue: the attempt's error and the exact
// wait the plan decided on.
type continueError struct {
	delay time.Duration
	err   error
	step  Step
}

func (e *continueError) Error() string {
	if e.err == nil {
		return "retry: next attempt"
	}
	return e.err.Error()
}

func (e *continueError) Unwrap() error { return e.err }

// isContinue is retry-go's RetryIf.
func isContinue(err error) bool {
	var c *continueError
	return errors.As(err, &c)
}

// continueDelay is retry-go's DelayType: the wait the plan decided on.
func continueDelay(_ uint, err error, _ *retrygo.Config) time.Duration {
	var c *continueError
	if errors.As(err, &c) {
		return c.delay
	}
	return 0
}
