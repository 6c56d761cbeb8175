// Package soak is llmrelay's fault soak: thousands of streams through the
// production server to an OpenAI-compatible upstream that fails by seed (rate
// limits with retry hints, 503s, in-stream overload errors, dropped
// connections, stalls, malformed lines, slow first bytes, rejections), with
// every call's events checked against the fault plan that explains them. Its
// tests also cover a provider outage (the retry budget), shutdown under load
// and client cancellation.
//
// This file holds the fault plans and what each one must look like from the
// client; the runs are in the tests. `make test` runs a short fixed-seed
// soak, `make soak` a long one (SOAK_CALLS streams).
package soak

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
)

// Kind is what one attempt meets at the upstream.
type Kind uint8

// Kinds of attempt.
const (
	// OK is a whole, fast stream.
	OK Kind = iota
	// SlowStart is a whole stream whose first byte comes late, though
	// within the stream idle timeout.
	SlowStart
	// RateLimited is HTTP 429 with a retry-after-ms hint.
	RateLimited
	// Unavailable is HTTP 503.
	Unavailable
	// Overloaded is an in-stream overloaded_error (Anthropic's 529) after
	// Step.After chunks.
	Overloaded
	// Dropped is a connection dropped after Step.After chunks.
	Dropped
	// Stalled is silence after Step.After chunks, until the stream idle
	// timeout abandons the attempt.
	Stalled
	// Malformed is a line that is not server-sent events after Step.After
	// chunks: a provider protocol error, which is never retried.
	Malformed
	// Rejected is HTTP 400, which is never retried.
	Rejected
)

// weights is how often each kind comes up, in percent.
var weights = [...]int{
	OK: 48, SlowStart: 7, RateLimited: 8, Unavailable: 8, Overloaded: 8,
	Dropped: 8, Stalled: 3, Malformed: 8, Rejected: 2,
}

// Step is one attempt of a plan.
type Step struct {
	Kind Kind
	// After is how many content chunks a mid-stream failure lets through.
	After int
	// Wait is the retry hint of RateLimited, or the delay of SlowStart.
	Wait time.Duration
}

// Plan is one call's attempts, in order: the upstream serves attempt n
// (from 0) as Steps[n].
type Plan struct {
	Call  int
	Steps []Step
}

// Config shapes the plans.
type Config struct {
	// Seed makes the plans reproducible.
	Seed uint64
	// Chunks is the content chunks of a whole stream.
	Chunks int
	// MaxAttempts is the calls' retry.max_attempts.
	MaxAttempts int
	// MaxSlowStart bounds SlowStart's delay: keep it well below the
	// stream idle timeout.
	MaxSlowStart time.Duration
}

// NewPlan draws call's plan: attempts until one that ends the call (OK,
// SlowStart, Rejected, Malformed) or MaxAttempts of them.
func NewPlan(cfg Config, call int) Plan {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(call)))
	p := Plan{Call: call}
	for len(p.Steps) < cfg.MaxAttempts {
		s := Step{Kind: draw(rng)}
		switch s.Kind {
		case RateLimited:
			s.Wait = time.Duration(1+rng.IntN(20)) * time.Millisecond
		case SlowStart:
			s.Wait = time.Duration(1+rng.Int64N(int64(cfg.MaxSlowStart/time.Millisecond))) * time.Millisecond
		case Overloaded, Dropped, Stalled, Malformed:
			s.After = rng.IntN(cfg.Chunks + 1)
		}
		p.Steps = append(p.Steps, s)
		if s.Kind == OK || s.Kind == SlowStart || s.Kind == Rejected || s.Kind == Malformed {
			break
		}
	}
	return p
}

func draw(rng *rand.Rand) Kind {
	n := rng.IntN(100)
	for k, w := range weights {
		if n < w {
			return Kind(k)
		}
		n -= w
	}
	return OK
}

// Fault is how the upstream serves the step.
func (s Step) Fault() openaitest.Fault {
	switch s.Kind {
	case SlowStart:
		return openaitest.Fault{FirstByteDelay: s.Wait}
	case RateLimited:
		return openaitest.Fault{Kind: openaitest.Status, Status: 429, ErrorType: "rate_limit_exceeded",
			Header: map[string]string{"retry-after-ms": strconv.FormatInt(s.Wait.Milliseconds(), 10)}}
	case Unavailable:
		return openaitest.Fault{Kind: openaitest.Status, Status: 503}
	case Overloaded:
		return openaitest.Fault{Kind: openaitest.InStreamError, After: s.After, ErrorType: "overloaded_error"}
	case Dropped:
		return openaitest.Fault{Kind: openaitest.Drop, After: s.After}
	case Stalled:
		return openaitest.Fault{Kind: openaitest.Stall, After: s.After}
	case Malformed:
		return openaitest.Fault{Kind: openaitest.Malformed, After: s.After}
	case Rejected:
		return openaitest.Fault{Kind: openaitest.Status, Status: 400, ErrorType: "invalid_request_error"}
	}
	return openaitest.Fault{}
}

// Deltas is how many content chunks reach the client in the step.
func (s Step) Deltas(chunks int) int {
	switch s.Kind {
	case OK, SlowStart:
		return chunks
	case Overloaded, Dropped, Stalled, Malformed:
		return s.After
	}
	return 0
}

// Reason is the WillRetry reason that follows the step, when it fails
// and another attempt comes.
func (s Step) Reason() llmrelayv1.RetryReason {
	switch s.Kind {
	case RateLimited:
		return llmrelayv1.RetryReason_RETRY_REASON_RATE_LIMITED
	case Unavailable, Overloaded:
		return llmrelayv1.RetryReason_RETRY_REASON_OVERLOADED
	case Dropped:
		return llmrelayv1.RetryReason_RETRY_REASON_TRANSPORT
	case Stalled:
		return llmrelayv1.RetryReason_RETRY_REASON_STALLED
	}
	return llmrelayv1.RetryReason_RETRY_REASON_UNSPECIFIED
}

// Succeeds reports whether the plan ends with a Final.
func (p Plan) Succeeds() bool {
	k := p.Steps[len(p.Steps)-1].Kind
	return k == OK || k == SlowStart
}

// Status is the code and ErrorInfo reason a failing plan ends with: the
// provider's rejection or protocol error as it is, or retries exhausted
// with the code of the last failure.
func (p Plan) Status() (codes.Code, string) {
	switch p.Steps[len(p.Steps)-1].Kind {
	case Rejected:
		return codes.InvalidArgument, apierr.ReasonProviderRejected
	case Malformed:
		return codes.Unknown, apierr.ReasonProviderProtocolError
	case RateLimited:
		return codes.ResourceExhausted, apierr.ReasonRetriesExhausted
	}
	return codes.Unavailable, apierr.ReasonRetriesExhausted
}

// CallText is the user message of call n: the upstream reads the call back
// from it.
func CallText(n int) string { return "soak call " + strconv.Itoa(n) }

// Upstream serves each request by its call's plan and counts the attempts
// each call made. It is safe for concurrent use.
type Upstream struct {
	plans func(call int) Plan

	mu       sync.Mutex
	attempts map[int]int
	unknown  int
}

// NewUpstream returns an Upstream serving plans. Pass its FaultFor to
// openaitest.Options.
func NewUpstream(plans func(call int) Plan) *Upstream {
	return &Upstream{plans: plans, attempts: map[int]int{}}
}

// FaultFor is the openaitest.Options.FaultFor hook.
func (u *Upstream) FaultFor(_ int, body []byte) openaitest.Fault {
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	call := -1
	if json.Unmarshal(body, &req) == nil && len(req.Messages) > 0 {
		if s, ok := strings.CutPrefix(req.Messages[len(req.Messages)-1].Content, "soak call "); ok {
			call, _ = strconv.Atoi(s)
		}
	}
	u.mu.Lock()
	if call < 0 {
		u.unknown++
		u.mu.Unlock()
		return openaitest.Fault{Kind: openaitest.Status, Status: 400}
	}
	n := u.attempts[call]
	u.attempts[call] = n + 1
	u.mu.Unlock()
	if steps := u.plans(call).Steps; n < len(steps) {
		return steps[n].Fault()
	}
	return openaitest.Fault{} // more attempts than planned: the check reports it
}

// Attempts returns how many requests the upstream received for call.
func (u *Upstream) Attempts(call int) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.attempts[call]
}

// Unknown returns how many requests named no call.
func (u *Upstream) Unknown() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.unknown
}
