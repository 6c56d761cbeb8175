package retry

import (
	"context"
	"errors"
	"time"

	retrygo "github.com/avast/retry-go/v4"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// Throttle is a provider's retry budget as a plan uses it: Failure records
// a retryable failure and reports whether a retry may follow, Success
// records a successful attempt. *Budget (in memory, per process) is one; a
// budget shared between replicas would be another. A nil *Budget allows
// every retry.
type Throttle interface {
	Failure() bool
	Success()
}

// Timer makes the waits between attempts. Its After matches retry-go's
// Timer; tests inject one that records each wait and returns at once.
type Timer interface {
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// PlanConfig is what a Plan is made of.
type PlanConfig struct {
	// Policy is the call's retry policy (Limits.Policy).
	Policy Policy
	// Target is where the call's attempts go.
	Target provider.Target
	// Budget returns the retry budget of a provider, by its configured
	// name; nil means no budget.
	Budget func(provider string) Throttle
	// Deadline is the call's deadline; zero means none.
	Deadline time.Time
	// MaxReasks is how many structured-output re-asks the call may make on
	// top of Policy.MaxAttempts; 0 without structured output.
	MaxReasks int
	// Now and Rand default to time.Now and math/rand/v2; tests set them.
	Now  func() time.Time
	Rand Rand
}

// Plan is one call's attempt plan: the one place that numbers the call's
// attempts, says where each goes, and decides what follows each one that
// did not succeed. Run executes it with retry-go.
//
// Its invariants: at most Policy.MaxAttempts attempts fail in transport
// and the re-asks come on top, so a call makes at most MaxAttempts()
// attempts; a Step that retries is always followed by another attempt,
// unless the call's context ends during the wait (then Run reports the
// Failure of an interrupted wait); every decision after a failure is
// Policy.Decide's, with the exact delay.
//
// Where later work extends it: which target an attempt goes to (targetOf:
// route fallback moves a failing call to its next target and says so in the
// Step), what follows a failure (Failed), a budget shared between replicas
// (PlanConfig.Budget), concurrent hedged attempts and a span per attempt
// and per wait (Run).
//
// A Plan is used by its call's goroutine only.
type Plan struct {
	cfg      PlanConfig
	attempts int  // attempts started
	reasks   int  // re-asks made
	waiting  bool // a Step retried and its attempt has not started
}

// NewPlan returns the plan of a call.
func NewPlan(cfg PlanConfig) *Plan {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Plan{cfg: cfg}
}

// MaxAttempts returns the most attempts the call can make: the policy's
// attempts and the re-asks on top.
func (p *Plan) MaxAttempts() int { return p.cfg.Policy.MaxAttempts + p.cfg.MaxReasks }

// Attempts returns the attempts started so far.
func (p *Plan) Attempts() int { return p.attempts }

// Target returns the target of the current attempt (before the first, of
// the first).
func (p *Plan) Target() provider.Target { return p.targetOf(max(p.attempts, 1)) }

// start begins the next attempt and returns its number, from 1, and target.
func (p *Plan) start() (int, provider.Target) {
	p.attempts++
	p.waiting = false
	return p.attempts, p.targetOf(p.attempts)
}

// targetOf returns the target attempt n goes to: the call's target, for
// every attempt. Route fallback will choose here.
func (p *Plan) targetOf(int) provider.Target { return p.cfg.Target }

// budget returns the retry budget of the current attempt's provider.
func (p *Plan) budget() Throttle {
	if p.cfg.Budget == nil {
		return nil
	}
	return p.cfg.Budget(p.Target().Entry.Config.Name)
}

// Succeeded records that the current attempt's provider call succeeded
// (its stream ended normally), which refills the provider's budget.
func (p *Plan) Succeeded() {
	if b := p.budget(); b != nil {
		b.Success()
	}
}

// Step is what follows an attempt that did not succeed: another attempt
// (Retry) or the end of the call (Failure).
type Step struct {
	// Next is the number of the next attempt, 0 when the call ends.
	Next int
	// Target is where the next attempt goes.
	Target provider.Target
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
	return &continueError{delay: s.Delay, err: s.err}
}

// Failed decides what follows the current attempt, which failed with err
// (classified as c; streamed says it had sent the client output): the
// policy decides (Policy.Decide, with the provider's budget and the call's
// deadline), counting only the attempts that were not re-asks.
func (p *Plan) Failed(err error, c Classification, streamed bool) Step {
	d := p.cfg.Policy.Decide(Attempt{
		N: p.attempts - p.reasks, Class: c, Streamed: streamed, Now: p.cfg.Now(), Deadline: p.cfg.Deadline,
	}, p.budget(), p.cfg.Rand)
	if !d.Retry() {
		return Step{Decision: d, Failure: p.failure(err, c, d.Stop)}
	}
	return p.retry(d.Delay, d, err)
}

// Reask schedules a structured-output re-ask after the current attempt,
// whose reply did not conform (err): the next attempt follows at once, to
// the same target, and does not count against Policy.MaxAttempts. Whether
// a reply is re-asked at all is the structured-output session's decision;
// it allows at most PlanConfig.MaxReasks.
func (p *Plan) Reask(err error) Step {
	p.reasks++
	return p.retry(0, Decision{}, err)
}

func (p *Plan) retry(delay time.Duration, d Decision, err error) Step {
	p.waiting = true
	next := p.attempts + 1
	return Step{Next: next, Target: p.targetOf(next), Delay: delay, Decision: d, err: err}
}

// failure is the Failure that ends the call after the current attempt.
func (p *Plan) failure(err error, c Classification, stop Stop) *Failure {
	return &Failure{Err: err, Class: c, Stop: stop, Attempts: p.attempts, Provider: p.Target().Entry.Config.Name}
}

// errPlanOverrun is the cause of a plan that decided to retry but was not
// given the attempt: a bug in how the plan bounds its attempts.
var errPlanOverrun = errors.New("retry: the attempt plan retried past its own bound")

// Run executes the plan with retry-go under ctx: it runs attempt for each
// attempt, with its number (from 1) and target, until one returns a
// result, or an error other than a Step's Continue. retry-go makes the
// waits, which end early when ctx ends; timer, when not nil, makes them
// instead of real time.
//
// Run returns the result, the error an attempt ended the call with (a
// Step's *Failure, or the caller's own), or, when ctx ended before the
// first attempt or during a wait, the *Failure of that interruption:
// class canceled or deadline (by ctx's cause), StopNotRetryable.
func Run[T any](ctx context.Context, p *Plan, timer Timer, attempt func(n int, t provider.Target) (T, error)) (T, error) {
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
	res, err := retrygo.DoWithData(func() (T, error) {
		return attempt(p.start())
	}, opts...)
	switch {
	case err == nil:
		return res, nil
	case !p.waiting && p.attempts > 0:
		return res, err
	case ctx.Err() == nil:
		return res, p.failure(errPlanOverrun, Classification{Class: provider.ClassUnknown}, StopAttempts)
	}
	// The wait before the next attempt was cut short, or the call ended
	// before its first: report why the context ended (client cancel,
	// deadline, shutdown).
	cause := context.Cause(ctx)
	return res, &Failure{Err: cause, Class: Classify(cause), Stop: StopNotRetryable, Attempts: p.attempts, Provider: p.Target().Entry.Config.Name}
}

// continueError is a Step's Continue: the attempt's error and the exact
// wait the plan decided on.
type continueError struct {
	delay time.Duration
	err   error
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
