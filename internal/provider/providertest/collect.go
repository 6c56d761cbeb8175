// Package providertest is the conformance suite every provider adapter must
// pass, the mock included: the scenarios are defined once here, and each
// adapter supplies a Harness that plays them (an httptest server replaying
// the adapter's fixture streams, or the mock's fault options).
//
// It also holds what the suite's harnesses share: Collect, which reads a
// stream the way the retry engine does and assembles its reply, and
// Upstream, a replaying HTTP server that can drop or stall a stream and
// records what it was sent.
package providertest

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// Result is what one attempt produced, assembled.
type Result struct {
	// Events are the events in the order Recv returned them.
	Events []provider.Event
	// Text is the concatenated text.
	Text string
	// ToolCalls are the tool calls assembled from their fragments, by index.
	ToolCalls []provider.ToolCall
	// Reasoning is the reasoning blocks assembled from their fragments, by
	// index.
	Reasoning []provider.Reasoning
	// Refusal is the concatenated refusal text.
	Refusal string
	// ProviderTools are the provider tool blocks, in order.
	ProviderTools []provider.ProviderTool
	// Parts is the order of the reply's blocks (provider.Order), as the
	// retry engine records it for the final message.
	Parts []provider.Part
	// Usage is the last usage event's counts; HasUsage says there was one.
	Usage    provider.Usage
	HasUsage bool
	// Finish is the last finish reason; StopSequence the stop sequence
	// its event named (provider.EventFinish), "" for none.
	Finish       provider.FinishReason
	StopSequence string
	// Err is nil when the stream ended with io.EOF; else Stream's or
	// Recv's error.
	Err error
	// Violations lists breaches of the provider.Stream contract seen on the
	// way (a tool call's id arriving after its first fragment, a reasoning
	// block numbered out of order, Recv returning something else after its
	// end).
	Violations []string
}

// Collect runs one attempt of req on p to its end and assembles the reply.
// It closes the stream.
func Collect(ctx context.Context, p provider.Provider, req *provider.Request) Result {
	s, err := p.Stream(ctx, req)
	if err != nil {
		return Result{Err: err}
	}
	defer s.Close()
	return Drain(s, nil)
}

// Drain reads s to its end (io.EOF or an error) and assembles the reply,
// calling each, when not nil, for every event as it arrives. It does not
// close s.
func Drain(s provider.Stream, each func(provider.Event)) Result {
	var r Result
	var seen []bool // per tool call: a fragment arrived
	var order provider.Order
	for {
		ev, err := s.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.Err = err
			}
			if _, again := s.Recv(); !sameEnd(again, err) {
				r.Violations = append(r.Violations, fmt.Sprintf("Recv after the end returned %v, want %v again", again, err))
			}
			r.Parts = order.Parts(r.Text)
			return r
		}
		if each != nil {
			each(ev)
		}
		r.Events = append(r.Events, ev)
		order.Add(&ev, len(r.Text))
		switch ev.Kind {
		case provider.EventText:
			r.Text += ev.Text
		case provider.EventToolCall:
			d := ev.ToolCall
			if d.Index < 0 || d.Index > len(r.ToolCalls) {
				r.Violations = append(r.Violations, fmt.Sprintf("tool call index %d skips past %d calls", d.Index, len(r.ToolCalls)))
				continue
			}
			if d.Index == len(r.ToolCalls) {
				r.ToolCalls = append(r.ToolCalls, provider.ToolCall{})
				seen = append(seen, false)
			}
			c := &r.ToolCalls[d.Index]
			if (d.ID != "" || d.Name != "") && seen[d.Index] {
				r.Violations = append(r.Violations, fmt.Sprintf("tool call %d: id or name after its first fragment", d.Index))
			}
			if !seen[d.Index] && (d.ID == "" || d.Name == "") {
				r.Violations = append(r.Violations, fmt.Sprintf("tool call %d: first fragment lacks its id or name", d.Index))
			}
			seen[d.Index] = true
			if d.ID != "" {
				c.ID = d.ID
			}
			if d.Name != "" {
				c.Name = d.Name
			}
			if d.Signature != "" {
				if c.Signature != "" {
					r.Violations = append(r.Violations, fmt.Sprintf("tool call %d: a second signature", d.Index))
				}
				c.Signature = d.Signature
			}
			c.Arguments += d.ArgumentsDelta
		case provider.EventReasoning:
			d := ev.Reasoning
			if d.Index < 0 || d.Index > len(r.Reasoning) {
				r.Violations = append(r.Violations, fmt.Sprintf("reasoning block %d skips past %d blocks", d.Index, len(r.Reasoning)))
				continue
			}
			if d.Index == len(r.Reasoning) {
				r.Reasoning = append(r.Reasoning, provider.Reasoning{Format: d.Format})
				if d.Format == "" {
					r.Violations = append(r.Violations, fmt.Sprintf("reasoning block %d: first fragment lacks its format", d.Index))
				}
			} else if d.Format != "" {
				r.Violations = append(r.Violations, fmt.Sprintf("reasoning block %d: format after its first fragment", d.Index))
			}
			b := &r.Reasoning[d.Index]
			b.Text += d.Text
			if d.Signature != "" {
				b.Signature += d.Signature
			}
			b.Redacted += d.Redacted
			for _, f := range [...]struct {
				to *string
				v  string
			}{{&b.ID, d.ID}, {&b.Kind, d.Kind}, {&b.ProviderFormat, d.ProviderFormat}} {
				if f.v != "" {
					*f.to = f.v
				}
			}
		case provider.EventProviderTool:
			if ev.ProviderTool == nil || ev.ProviderTool.Kind == "" || ev.ProviderTool.Format == "" {
				r.Violations = append(r.Violations, fmt.Sprintf("provider tool block %d without its block, kind or format", len(r.ProviderTools)))
				continue
			}
			r.ProviderTools = append(r.ProviderTools, *ev.ProviderTool)
		case provider.EventRefusal:
			r.Refusal += ev.Text
		case provider.EventUsage:
			r.Usage, r.HasUsage = ev.Usage, true
		case provider.EventFinish:
			r.Finish, r.StopSequence = ev.FinishReason, ev.Text
			if ev.Text != "" && ev.FinishReason != provider.FinishStop {
				r.Violations = append(r.Violations, fmt.Sprintf("stop sequence %q with finish reason %s", ev.Text, ev.FinishReason))
			}
		default:
			r.Violations = append(r.Violations, fmt.Sprintf("event of unknown kind %d", ev.Kind))
		}
	}
}

// sameEnd reports whether a second Recv after the end returned the same
// end: io.EOF again, or an error again.
func sameEnd(again, first error) bool {
	if errors.Is(first, io.EOF) {
		return errors.Is(again, io.EOF)
	}
	return again != nil && !errors.Is(again, io.EOF)
}

// ProviderError returns err's *provider.Error, or nil.
func ProviderError(err error) *provider.Error {
	var pe *provider.Error
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}
