package engine

import (
	"errors"
	"sync"
	"unicode/utf8"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/servertools"
)

// outputLimit is a call's bound on the output of each of its attempts:
// max bytes of output (see outputOf); past it, the
// attempt ends, and the call with it, truncated or failed. call is the
// request's limit; max is lower for a turn of a call with server tools
// (turnLimit).
type outputLimit struct {
	max, call int64
	truncate  bool
}

// outputLimitOf returns the request's output limit: its max_bytes, the
// server's default when 0, lowered to the server's limit.
func (s *Engine) outputLimitOf(req *llmrelayv1.GenerateRequest) outputLimit {
	ol := req.GetOutputLimit()
	n := int64(min(ol.GetMaxBytes(), uint64(s.output.Max)))
	if n == 0 {
		n = s.output.Default
	}
	return outputLimit{max: n, call: n, truncate: ol.GetOnLimit() == llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_TRUNCATE}
}

// With server tools the output limit bounds the whole call, so that its
// final, which carries the transcript (every turn's reply and every tool
// result) and repeats the last turn's reply as its message, is never more
// than the limit (and so within a client's message size limit whenever a
// one-turn reply is). The transcript's bytes so far are tools.spent:
//   - a turn's attempts may output half of what the turns before it left
//     (turnLimit): any turn may be the last, whose reply the final carries
//     twice;
//   - a turn's tool results may add what its reply left of that
//     (toolBudget); the result that passes it is cut to what is left, and
//     the call ends once the turn's tools returned, as a reply reaching
//     the limit ends it: failed (CallOutputTooLarge), or under truncation
//     with a final whose finish reason is FINISH_REASON_LENGTH.

// turnLimit returns the output limit of the next turn of a call with server
// tools.
func (t *tools) turnLimit(l outputLimit) outputLimit {
	l.max = max(l.call-t.spent, 0) / 2
	return l
}

// toolBudget counts a turn's server tool results against what the call's
// output limit leaves them. Safe for concurrent use: the tools run in
// parallel, and their results are counted as they return.
type toolBudget struct {
	mu   sync.Mutex
	left int64
	// used is what the results took; cut says one was cut to fit.
	used int64
	cut  bool
}

// newToolBudget returns the budget of the tool results of turn res, the
// turn that just ended (its reply is in the transcript already).
func (c *call) newToolBudget(res *attemptResult) *toolBudget {
	return &toolBudget{left: max(c.turn.output.call-c.tools.spent-res.outputBytes, 0)}
}

// take counts the result of tool call id of tool name, as the final's
// transcript holds it (its text and its images' bytes); a result that
// does not fit whole is cut to what is left (Result.Cut: with a note to
// the model, when it fits; an image that does not fit whole, and what
// follows it, left out), and marked truncated.
func (b *toolBudget) take(r *servertools.Result, id, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ids := int64(len(id) + len(name))
	if n := ids + int64(r.Size()); n <= b.left {
		b.left -= n
		b.used += n
		return
	}
	r.Cut(int(max(b.left-ids, 0)))
	r.Truncated, b.cut = true, true
	n := ids + int64(r.Size())
	b.used += n
	b.left = max(b.left-n, 0)
}

// outputTooLarge is the error of attempt n of target provider whose
// output passed the turn's limit, the call failing as it asked.
func (c *call) outputTooLarge(provider string, n int) *apierr.Error {
	if c.tools == nil {
		return apierr.OutputTooLarge(c.turn.output.max, provider, n)
	}
	return apierr.CallOutputTooLarge(c.turn.output.call, provider, n, c.turn.n)
}

// errTruncated ends an attempt whose output reached the limit of a call
// that asked for truncation: the attempt succeeded, cut at the limit.
var errTruncated = errors.New("the reply reached its output limit and was truncated")

// outputField is a field of an event that the client receives: text that
// may be cut at the limit, or an opaque value (an id, a name, a format, a
// signature, a redacted block) that is sent whole or not at all.
type outputField struct {
	s      *string
	opaque bool
}

// outputOf returns the fields of ev that the client receives from the
// provider, in their order, counted against the call's output limit (and
// cut or left out there under truncation); none for events without
// output. Every kind of output event, and every field of it the client
// sees in a delta or the final, is listed here.
func outputOf(ev *provider.Event) (fs [4]outputField) {
	switch ev.Kind {
	case provider.EventText, provider.EventRefusal:
		fs[0] = outputField{s: &ev.Text}
	case provider.EventToolCall:
		tc := &ev.ToolCall
		fs = [4]outputField{{&tc.ID, true}, {&tc.Name, true}, {&tc.ArgumentsDelta, false}, {&tc.Signature, true}}
	case provider.EventReasoning:
		r := &ev.Reasoning
		fs = [4]outputField{{&r.Format, true}, {&r.Text, false}, {&r.Signature, true}, {&r.Redacted, true}}
	}
	return fs
}

// meterOutput counts ev's output against the call's limit for attempt a,
// whose output so far res holds. Under the limit, it returns nil. The
// event that reaches the limit makes it return errTruncated, with ev's
// output cut to what still fits, under truncation: text cut on a character
// boundary, an opaque field that does not fit whole left out, and nothing
// after either; otherwise the OUTPUT_TOO_LARGE *apierr.Error that ends the
// call, with nothing of the event sent.
//
// A provider tool block counts whole and is never cut (the provider
// needs it back as it came): under truncation the reply ends before the
// block that reaches the limit.
func (c *call) meterOutput(a *retry.Attempt, ev *provider.Event, res *attemptResult) error {
	left := c.turn.output.max - res.outputBytes
	if ev.Kind == provider.EventProviderTool && ev.ProviderTool != nil {
		if size := int64(ev.ProviderTool.Size()); size <= left {
			res.outputBytes += size
			return nil
		}
		if !c.turn.output.truncate {
			return c.outputTooLarge(a.Target.Entry.Config.Name, a.N)
		}
		ev.ProviderTool = nil
		res.outputBytes = c.turn.output.max
		return errTruncated
	}
	fs := outputOf(ev)
	var n int64
	for _, f := range fs {
		if f.s != nil {
			n += int64(len(*f.s))
		}
	}
	if n <= left {
		res.outputBytes += n
		return nil
	}
	if !c.turn.output.truncate {
		return c.outputTooLarge(a.Target.Entry.Config.Name, a.N)
	}
	for _, f := range fs {
		switch {
		case f.s == nil:
		case int64(len(*f.s)) <= left:
			left -= int64(len(*f.s))
		case f.opaque:
			*f.s, left = "", 0
		default:
			cut := int(left)
			for cut > 0 && !utf8.RuneStart((*f.s)[cut]) {
				cut--
			}
			*f.s, left = (*f.s)[:cut], 0
		}
	}
	res.outputBytes = c.turn.output.max - left
	return errTruncated
}
