package soak

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
)

// Outcome is one call as the client and the upstream saw it.
type Outcome struct {
	Events []*llmrelayv1.GenerateEvent
	// Err is the status error that ended the stream; nil after a clean end.
	Err error
	// Seen is how many requests the upstream received for the call.
	Seen int
}

// Shown applies the client idiom to the events: append each delta's text,
// drop it all on a WillRetry with discard_partial. For a successful call it
// must equal the Final's text.
func Shown(events []*llmrelayv1.GenerateEvent) string {
	shown := ""
	for _, ev := range events {
		switch {
		case ev.GetDelta() != nil:
			shown += ev.GetDelta().GetText()
		case ev.GetWillRetry().GetDiscardPartial():
			shown = ""
		}
	}
	return shown
}

// Check returns what is wrong with o for plan p, or nil: every event in
// order (sequence numbers without gaps; each attempt's deltas, its words in order;
// a WillRetry after each failed attempt with its reason, next attempt,
// discard flag and delay, the provider's hint exactly when it gave one;
// exactly one Final, last), the status of a failing call, and the upstream
// having seen exactly the attempts the events report.
func Check(cfg Config, maxBackoff time.Duration, p Plan, o Outcome) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for i, ev := range o.Events {
		if ev.GetSequence() != uint64(i+1) {
			bad("event %d has sequence %d", i+1, ev.GetSequence())
			break
		}
	}

	evs := o.Events
	next := func() *llmrelayv1.GenerateEvent {
		if len(evs) == 0 {
			return nil
		}
		ev := evs[0]
		evs = evs[1:]
		return ev
	}
	for i, s := range p.Steps {
		attempt := uint32(i + 1)
		// The attempt's words in order, one delta each or several joined
		// (coalesced: those already read while the client was sent the
		// one before).
		want, got := openaitest.Text(s.Deltas(cfg.Chunks)), ""
		for got != want {
			ev := next()
			text := ev.GetDelta().GetText()
			if ev.GetDelta() == nil || ev.GetAttempt() != attempt || text == "" || !strings.HasPrefix(want, got+text) {
				bad("attempt %d (%v): event %v, want a delta continuing %q towards %q", attempt, s.Kind, ev, got, want)
				return errors.Join(errs...)
			}
			got += text
		}
		if i == len(p.Steps)-1 {
			break
		}
		ev := next()
		wr := ev.GetWillRetry()
		switch {
		case wr == nil || ev.GetAttempt() != attempt:
			bad("attempt %d (%v): event %v, want will_retry", attempt, s.Kind, ev)
			return errors.Join(errs...)
		case wr.GetReason() != s.Reason() || wr.GetNextAttempt() != attempt+1 || wr.GetDiscardPartial() != (s.Deltas(cfg.Chunks) > 0):
			bad("attempt %d (%v): will_retry %v, want reason %v, next %d, discard %v", attempt, s.Kind, wr, s.Reason(), attempt+1, s.Deltas(cfg.Chunks) > 0)
		case s.Kind == RateLimited && wr.GetDelay().AsDuration() != s.Wait:
			bad("attempt %d: will_retry delay %v, want the provider's hint %v", attempt, wr.GetDelay().AsDuration(), s.Wait)
		case s.Kind != RateLimited && (wr.GetDelay().AsDuration() <= 0 || wr.GetDelay().AsDuration() > maxBackoff):
			bad("attempt %d: will_retry delay %v, want a backoff within (0, %v]", attempt, wr.GetDelay().AsDuration(), maxBackoff)
		}
	}

	reported := -1
	if p.Succeeds() {
		ev := next()
		f := ev.GetFinal()
		switch {
		case o.Err != nil:
			bad("ended with %v, want a Final", o.Err)
		case f == nil:
			bad("event %v, want the Final", ev)
		case f.GetMessage().GetContent() != openaitest.Text(cfg.Chunks) || f.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP:
			bad("Final %q (%v), want the reference text", f.GetMessage().GetContent(), f.GetFinishReason())
		case Shown(o.Events) != openaitest.Text(cfg.Chunks):
			bad("shown text %q once discards are applied, want the reference text", Shown(o.Events))
		case ev.GetAttempt() != uint32(len(p.Steps)):
			bad("Final of attempt %d, want %d", ev.GetAttempt(), len(p.Steps))
		}
		reported = int(f.GetAttempts())
	} else {
		code, reason := p.Status()
		st, _ := status.FromError(o.Err)
		info := errorInfo(st)
		switch {
		case o.Err == nil:
			bad("ended cleanly, want %v %s", code, reason)
		case st.Code() != code || info.GetReason() != reason:
			bad("ended with %v %s (%v), want %v %s", st.Code(), info.GetReason(), o.Err, code, reason)
		}
		reported, _ = strconv.Atoi(info.GetMetadata()["attempts"])
	}
	if len(evs) > 0 {
		bad("%d events after the end, first %v", len(evs), evs[0])
	}
	if reported != len(p.Steps) || o.Seen != reported {
		bad("events report %d attempts, the upstream saw %d, the plan has %d", reported, o.Seen, len(p.Steps))
	}
	return errors.Join(errs...)
}

func errorInfo(st *status.Status) *errdetails.ErrorInfo {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}
