package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/engine/enginetest"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/spend"

	_ "github.com/llmrelay/llmrelay/internal/provider/mock" // registers kind mock
)

// newEngine is build for a test: keys, when given, are required of
// callers.
func newEngine(t testing.TB, keys ...auth.KeyConfig) *engine.Engine {
	t.Helper()
	eng, stop, err := build(keys...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return eng
}

// generate admits req for caller and runs it, as a door does, returning
// what the client saw.
func generate(t testing.TB, eng *engine.Engine, caller engine.Caller, req *llmrelayv1.GenerateRequest) (*enginetest.Recorder, error) {
	t.Helper()
	if caller.Method == "" {
		caller.Method = llmrelayv1.LLMService_Generate_FullMethodName
	}
	ctx, _ := callinfo.NewContext(t.Context())
	ctx, release, err := eng.Admission().Admit(ctx, caller, req)
	rec := &enginetest.Recorder{}
	if err != nil {
		return rec, err
	}
	defer release()
	return rec, eng.Generate(ctx, req, rec)
}

// request asks model for an echo of text, with one fault per attempt
// (the mock provider's provider_options.faults, JSON).
func request(t testing.TB, model, text, faults string) *llmrelayv1.GenerateRequest {
	t.Helper()
	req := &llmrelayv1.GenerateRequest{
		Model:    model,
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: text}},
		Retry:    &llmrelayv1.RetryPolicy{MaxAttempts: 2, InitialBackoff: durationpb.New(time.Millisecond)},
	}
	if faults != "" {
		req.ProviderOptions = mockFaults(faults)
	}
	return req
}

// mockFaults is the mock provider's provider_options with one fault per
// attempt, given as JSON.
func mockFaults(faults string) *structpb.Struct {
	var list []any
	if err := json.Unmarshal([]byte(faults), &list); err != nil {
		panic(err)
	}
	opts, err := structpb.NewStruct(map[string]any{"faults": list})
	if err != nil {
		panic(err)
	}
	return opts
}

// render writes the events compactly: "delta a1", "will_retry a1->a2
// backup fallback", "final a3".
func render(events []*llmrelayv1.GenerateEvent) []string {
	var out []string
	for _, ev := range events {
		switch e := ev.GetEvent().(type) {
		case *llmrelayv1.GenerateEvent_Delta:
			if s := fmt.Sprintf("delta a%d", ev.GetAttempt()); len(out) == 0 || out[len(out)-1] != s {
				out = append(out, s)
			}
		case *llmrelayv1.GenerateEvent_WillRetry:
			w := e.WillRetry
			s := fmt.Sprintf("will_retry a%d->a%d %s", ev.GetAttempt(), w.GetNextAttempt(), w.GetNextProvider())
			if w.GetFallback() {
				s += " fallback"
			}
			if w.GetDiscardPartial() {
				s += " discard"
			}
			out = append(out, s)
		case *llmrelayv1.GenerateEvent_Final:
			out = append(out, fmt.Sprintf("final a%d %s %q", ev.GetAttempt(), e.Final.GetProvider(), e.Final.GetMessage().GetContent()))
		}
	}
	return out
}

// TestGenerateWithoutATransport drives calls through the engine alone (no
// gRPC server, listener or bufconn): a call that retries, then falls back
// to the route's next target, with its events numbered without gaps; and a
// resumable call whose client goes away mid-stream and which Resume
// replays from the client's last event to the same Final.
func TestGenerateWithoutATransport(t *testing.T) {
	eng := newEngine(t)

	t.Run("retry then fallback", func(t *testing.T) {
		// primary fails twice (its max_attempts, the second after one
		// delta), then the call falls back to backup, which answers.
		rec, err := generate(t, eng, engine.Caller{}, request(t, "smart", "hello there", `[{"status": 503}, {"drop_after": 1}, {}]`))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"will_retry a1->a2 primary",
			"delta a2",
			"will_retry a2->a3 backup fallback discard",
			"delta a3",
			`final a3 backup "hello there"`,
		}
		if got := render(rec.Events()); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for i, ev := range rec.Events() {
			if ev.GetSequence() != uint64(i+1) {
				t.Fatalf("event %d has sequence %d", i+1, ev.GetSequence())
			}
		}
		if f := rec.Events()[len(rec.Events())-1].GetFinal(); f.GetAttempts() != 3 || f.GetRoute() != "smart" {
			t.Errorf("final: %d attempts, route %q; want 3 on smart", f.GetAttempts(), f.GetRoute())
		}
	})

	t.Run("resumable call resumed", func(t *testing.T) {
		id := uuid.NewString()
		req := request(t, "primary/echo", "one two three four five six", "")
		req.RequestId, req.Resumable = id, new(true)
		ctx, _ := callinfo.NewContext(t.Context())
		caller := engine.Caller{Method: llmrelayv1.LLMService_Generate_FullMethodName}
		ctx, release, err := eng.Admission().Admit(ctx, caller, req)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		// The client reads two events, then its stream goes away: the call
		// runs on, into its log.
		live := &goneAfter{n: 2}
		if err := eng.Generate(ctx, req, live); err != nil {
			t.Fatal(err)
		}
		if live.Header(engine.HeaderResumable) != "true" || live.Header(engine.HeaderRequestID) != id {
			t.Errorf("headers resumable=%q request_id=%q, want true and %s", live.Header(engine.HeaderResumable), live.Header(engine.HeaderRequestID), id)
		}
		seen := live.Events()
		resumed := &enginetest.Recorder{}
		rctx, _ := callinfo.NewContext(t.Context())
		if err := eng.Resume(rctx, &llmrelayv1.ResumeRequest{RequestId: id, AfterSequence: seen[len(seen)-1].GetSequence()}, resumed); err != nil {
			t.Fatalf("Resume: %v", err)
		}
		all := append(seen, resumed.Events()...)
		var text strings.Builder
		for i, ev := range all {
			if ev.GetSequence() != uint64(i+1) {
				t.Fatalf("event %d has sequence %d: the resumed events do not follow on", i+1, ev.GetSequence())
			}
			text.WriteString(ev.GetDelta().GetText())
		}
		final := all[len(all)-1].GetFinal()
		if final == nil || final.GetMessage().GetContent() != "one two three four five six" || text.String() != final.GetMessage().GetContent() {
			t.Errorf("deltas %q, final %v: want the whole reply once", text.String(), final)
		}
	})

	t.Run("typed errors", func(t *testing.T) {
		_, err := generate(t, eng, engine.Caller{}, request(t, "nobody/echo", "hi", ""))
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Kind != apierr.InvalidArgument || ae.Reason != apierr.ReasonUnknownProvider {
			t.Errorf("an unknown provider: %v, want INVALID_ARGUMENT %s", err, apierr.ReasonUnknownProvider)
		}
		_, err = generate(t, eng, engine.Caller{}, request(t, "primary/echo", "hi", `[{"status": 400}]`))
		if !errors.As(err, &ae) || ae.Kind != apierr.InvalidArgument || ae.Reason != apierr.ReasonProviderRejected {
			t.Errorf("a rejected request: %v, want INVALID_ARGUMENT %s", err, apierr.ReasonProviderRejected)
		}
	})
}

// goneAfter is a Sink whose client goes away after n events.
type goneAfter struct {
	enginetest.Recorder
	n int
}

func (g *goneAfter) Send(ev *llmrelayv1.GenerateEvent) error {
	if len(g.Events()) == g.n {
		g.Gone(context.Canceled)
	}
	return g.Recorder.Send(ev)
}

// kindBuffered is the kind of bufferedProvider.
const kindBuffered = "enginetest-buffered"

func init() {
	provider.Register(kindBuffered, func(provider.Config) (provider.Provider, error) { return bufferedProvider{}, nil })
}

// bufferedProvider streams a reply of 100,000 one-letter deltas that it
// already holds whole, as a transport that buffered a reply would: its
// Recv never looks at the attempt's context.
type bufferedProvider struct{}

func (bufferedProvider) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	return &bufferedStream{}, nil
}

type bufferedStream struct{ n int }

func (s *bufferedStream) Recv() (provider.Event, error) {
	if s.n == 100_000 {
		return provider.Event{}, io.EOF
	}
	s.n++
	return provider.Event{Kind: provider.EventText, Text: "x"}, nil
}

func (s *bufferedStream) Close() error { return nil }

// TestCancelledAttemptShowsNothingMore: once a call's context ends, the
// attempt stops at once even when its provider's stream still holds
// events: the client sees none of them and the call ends cancelled.
func TestCancelledAttemptShowsNothingMore(t *testing.T) {
	eng := newEngine(t)
	req := request(t, "buffered/reply", "hi", "")
	ctx, _ := callinfo.NewContext(t.Context())
	ctx, release, err := eng.Admission().Admit(ctx, engine.Caller{Method: llmrelayv1.LLMService_Generate_FullMethodName}, req)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sink := &cancelAfter{n: 3, cancel: cancel}
	err = eng.Generate(ctx, req, sink)
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Kind != apierr.Canceled {
		t.Errorf("Generate: %v, want CANCELLED", err)
	}
	if n := len(sink.Events()); n != 3 {
		t.Errorf("the client got %d events, want the 3 before it went away", n)
	}
}

// cancelAfter is a Sink whose client cancels its call after n events.
type cancelAfter struct {
	enginetest.Recorder
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Send(ev *llmrelayv1.GenerateEvent) error {
	err := c.Recorder.Send(ev)
	if len(c.Events()) == c.n {
		c.cancel()
	}
	return err
}

// TestBudgetWithoutATransport: a door that drives the engine alone
// (Admit, Generate, release) reserves on the key's budget and settles it
// from the call's usage: a total budget of 1000 tokens, calls reserving
// about 100 and spending 4, admits calls until what they spent leaves no
// room for one reservation, then refuses with BUDGET_EXHAUSTED. Were calls
// not settled, their reservations would refuse the tenth.
func TestBudgetWithoutATransport(t *testing.T) {
	eng := newEngine(t, auth.KeyConfig{Name: "ci", SHA256: auth.HashKey("ci-secret"), Scopes: []string{"generate"}, Models: []string{"*"},
		Budgets: []spend.Budget{{Window: spend.Total, MaxTokens: 1000}}})
	caller := engine.Caller{Credential: auth.Bearer([]string{"Bearer ci-secret"})}
	maxOut := uint32(90)
	admitted := 0
	for ; admitted < 1000; admitted++ {
		req := request(t, "primary/echo", "a b", "")
		req.Generation = &llmrelayv1.GenerationConfig{MaxOutputTokens: &maxOut}
		_, err := generate(t, eng, caller, req)
		if err == nil {
			continue
		}
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Reason != apierr.ReasonBudgetExhausted || ae.Kind != apierr.ResourceExhausted || ae.Metadata["window"] != "total" {
			t.Fatalf("call %d: %v, want BUDGET_EXHAUSTED", admitted+1, err)
		}
		break
	}
	// Each call spends 4 tokens (2 in, 2 out) and reserves 90 out and its
	// size in: about 220 calls fit.
	if admitted < 200 || admitted > 250 {
		t.Fatalf("%d calls admitted on 1000 tokens, want about 220 (4 spent each, settled)", admitted)
	}
}
