package service

import (
	"errors"
	"unicode/utf8"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// outputLimit is a call's bound on the output of each of its attempts:
// max bytes of text, tool-call arguments and reasoning; past it, the
// attempt ends, and the call with it, truncated or failed.
type outputLimit struct {
	max      int64
	truncate bool
}

// outputLimitOf returns the request's output limit: its max_bytes, the
// server's default when 0, lowered to the server's limit.
func (s *Service) outputLimitOf(req *llmrelayv1.GenerateRequest) outputLimit {
	ol := req.GetOutputLimit()
	n := int64(min(ol.GetMaxBytes(), uint64(s.maxOutput)))
	if n == 0 {
		n = s.defaultOutput
	}
	return outputLimit{max: n, truncate: ol.GetOnLimit() == llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_TRUNCATE}
}

// errTruncated ends an attempt whose output reached the limit of a call
// that asked for truncation: the attempt succeeded, cut at the limit.
var errTruncated = errors.New("the reply reached its output limit and was truncated")

// outputOf returns the field of ev that holds reply output, counted
// against the call's output limit (and cut there under truncation); nil
// for events without output. Every kind of output event is listed here,
// but a provider tool block, which meterOutput counts whole.
func outputOf(ev *provider.Event) *string {
	switch ev.Kind {
	case provider.EventText:
		return &ev.Text
	case provider.EventToolCall:
		return &ev.ToolCall.ArgumentsDelta
	case provider.EventReasoning:
		return &ev.Reasoning.Text
	}
	return nil
}

// meterOutput counts ev's output against the call's limit for attempt a,
// whose output so far res holds. Under the limit, it returns nil. The
// piece that reaches the limit makes it return errTruncated, with ev's
// output cut to what still fits (on a character boundary), under
// truncation; otherwise the OUTPUT_TOO_LARGE *apierr.Error that ends the
// call, with nothing of the piece sent.
//
// A provider tool block counts whole and is never cut (the provider
// needs it back as it came): under truncation the reply ends before the
// block that reaches the limit.
func (c *call) meterOutput(a *retry.Attempt, ev *provider.Event, res *attemptResult) error {
	left := c.output.max - res.outputBytes
	if ev.Kind == provider.EventProviderTool && ev.ProviderTool != nil {
		if size := int64(ev.ProviderTool.Size()); size <= left {
			res.outputBytes += size
			return nil
		}
		if !c.output.truncate {
			return apierr.OutputTooLarge(c.output.max, a.Target.Entry.Config.Name, a.N)
		}
		ev.ProviderTool = nil
		res.outputBytes = c.output.max
		return errTruncated
	}
	out := outputOf(ev)
	if out == nil {
		return nil
	}
	if int64(len(*out)) <= left {
		res.outputBytes += int64(len(*out))
		return nil
	}
	if !c.output.truncate {
		return apierr.OutputTooLarge(c.output.max, a.Target.Entry.Config.Name, a.N)
	}
	cut := int(left)
	for cut > 0 && !utf8.RuneStart((*out)[cut]) {
		cut--
	}
	*out = (*out)[:cut]
	res.outputBytes += int64(cut)
	return errTruncated
}
