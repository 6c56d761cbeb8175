package service_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// These tests run hedged calls through the production wiring with a
// retry timer that ends every wait at once (recordingTimer): a hedge
// starts as soon as its round does, so what decides a race is the scripted
// providers' gates, never the machine's speed.

// hedging returns a hedging policy of max hedges after d (max 0: unset).
func hedging(d time.Duration, max uint32, target llmrelayv1.HedgeTarget) *llmrelayv1.HedgePolicy {
	h := &llmrelayv1.HedgePolicy{HedgeAfter: durationpb.New(d), Target: target}
	if max > 0 {
		h.MaxHedges = &max
	}
	return h
}

// hedgedScripted is a request to the test's scripted provider with the
// given hedging.
func hedgedScripted(t *testing.T, h *llmrelayv1.HedgePolicy) *llmrelayv1.GenerateRequest {
	req := echo(t, input, "", attempts(3))
	req.Model = "scripted/any"
	req.Hedging = h
	return req
}

var (
	overloaded503 = &provider.Error{Kind: provider.KindHTTP, Status: 503, Class: provider.ClassOverloaded, Type: "overloaded_error"}
	finishStop    = provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop}
)

func usageEvent(in, out int64) provider.Event {
	return provider.Event{Kind: provider.EventUsage, Usage: provider.Usage{InputTokens: in, OutputTokens: out}}
}

// hedgeCount returns llmrelay_hedges_total for provider and result.
func hedgeCount(t *testing.T, m *metrics.Metrics, provider, result string) float64 {
	t.Helper()
	return metricValue(t, m, metrics.NameHedges, map[string]string{"provider": provider, "result": result})
}

// cancelled reports whether a blocked attempt of p saw its context end.
func cancelled(p *scriptedProvider) bool {
	select {
	case <-p.cancelled:
		return true
	default:
		return false
	}
}

// TestHedgeWinsOverASilentFirstAttempt: the first attempt shows signs of
// life (a usage report) but no delta; the hedge answers and wins; the
// client sees only the hedge's events, the first attempt's provider
// request is cancelled, and the Final counts both attempts, one a hedge,
// and both attempts' tokens.
func TestHedgeWinsOverASilentFirstAttempt(t *testing.T) {
	up := newScripted(t,
		step{events: []provider.Event{usageEvent(7, 0)}, block: true},
		step{events: []provider.Event{text("the "), text("fast"), finishStop, usageEvent(10, 2)}, err: io.EOF},
	)
	timer := &recordingTimer{}
	in := servertest.Start(t, scriptedConfig(t), server.WithRetryTimer(timer))
	m := in.Server.Metrics()
	events, err := servertest.Collect(t.Context(), in.Client, hedgedScripted(t, hedging(300*time.Millisecond, 0, 0)))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkStream(t, events, []string{
		`delta a2 "the "`,
		`delta a2 "fast"`,
		`final a2 attempts=2 "the fast"`,
	})
	final := events[len(events)-1].GetFinal()
	if final.GetHedges() != 1 {
		t.Errorf("final.hedges = %d, want 1", final.GetHedges())
	}
	if u := final.GetUsage(); u.GetInputTokens() != 17 || u.GetOutputTokens() != 2 {
		t.Errorf("final usage %v, want both attempts' tokens (17 in, 2 out)", u)
	}
	if !cancelled(up) {
		t.Error("the first attempt's provider request was not cancelled")
	}
	if got := timer.Waits(); !slices.Equal(got, []time.Duration{300 * time.Millisecond}) {
		t.Errorf("waits %v, want the hedging delay, 300ms", got)
	}
	if n := hedgeCount(t, m, "scripted", metrics.HedgeWon); n != 1 {
		t.Errorf("%s{result=won} = %v, want 1", metrics.NameHedges, n)
	}
}

// TestFirstAttemptBeatsItsHedge: the first attempt answers once its hedge
// started; the hedge is cancelled before it showed anything.
func TestFirstAttemptBeatsItsHedge(t *testing.T) {
	up := newScripted(t)
	up.steps = []step{
		{events: []provider.Event{text("the "), text("slow"), finishStop}, err: io.EOF, wait: map[int]<-chan struct{}{0: up.arrival(2)}},
		{block: true},
	}
	in := servertest.Start(t, scriptedConfig(t), server.WithRetryTimer(&recordingTimer{}))
	m := in.Server.Metrics()
	events, err := servertest.Collect(t.Context(), in.Client, hedgedScripted(t, hedging(300*time.Millisecond, 0, 0)))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkStream(t, events, []string{
		`delta a1 "the "`,
		`delta a1 "slow"`,
		`final a1 attempts=2 "the slow"`,
	})
	if !cancelled(up) {
		t.Error("the hedge's provider request was not cancelled")
	}
	if got := events[len(events)-1].GetFinal().GetHedges(); got != 1 {
		t.Errorf("final.hedges = %d, want 1 (a hedge that lost is still a hedge)", got)
	}
	if n := hedgeCount(t, m, "scripted", metrics.HedgeLost); n != 1 {
		t.Errorf("%s{result=lost} = %v, want 1", metrics.NameHedges, n)
	}
}

// TestReasoningWinsTheRace: a reasoning delta is a delta the client sees:
// the attempt that streams it first wins, even though its text comes
// later and the hedge would have answered meanwhile.
func TestReasoningWinsTheRace(t *testing.T) {
	seen := make(chan struct{})
	up := newScripted(t)
	up.steps = []step{
		{events: []provider.Event{{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Text: "hmm", Format: provider.FormatMock}}, text("slow"), finishStop},
			err: io.EOF, wait: map[int]<-chan struct{}{0: up.arrival(2), 1: seen}},
		{events: []provider.Event{text("fast"), finishStop}, err: io.EOF, wait: map[int]<-chan struct{}{0: seen}},
	}
	in := servertest.Start(t, scriptedConfig(t), server.WithRetryTimer(&recordingTimer{}))
	stream, err := in.Client.Generate(t.Context(), hedgedScripted(t, hedging(300*time.Millisecond, 0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	// The first attempt streams its reasoning once its hedge races.
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	close(seen) // both may go on: the hedge's text would come now
	events := []*llmrelayv1.GenerateEvent{first}
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	checkStream(t, events, []string{
		`reasoning a1 [0] mock "hmm"`,
		`delta a1 "slow"`,
		`final a1 attempts=2 "slow"`,
	})
	if err := up.cause(2); !errors.Is(err, retry.ErrLost) {
		t.Errorf("the hedge's context ended with %v, want ErrLost: cancelled as the reasoning came", err)
	}
}

// TestAllAttemptsOfARaceFail: the first attempt and its hedge both fail
// before any delta. The hedge's failure is no will_retry (the first
// attempt still ran); once both failed, the call goes on as if the first
// had failed alone: a will_retry of attempt 1, the next attempt numbered
// 3. The call used its one hedge: the retry is not hedged.
func TestAllAttemptsOfARaceFail(t *testing.T) {
	up := newScripted(t)
	up.steps = []step{
		{err: overloaded503, wait: map[int]<-chan struct{}{0: up.arrival(2)}},
		{err: overloaded503},
		{events: []provider.Event{text("third"), finishStop}, err: io.EOF},
	}
	timer := &recordingTimer{}
	in := servertest.Start(t, scriptedConfig(t), server.WithRetryTimer(timer))
	m := in.Server.Metrics()
	events, err := servertest.Collect(t.Context(), in.Client, hedgedScripted(t, hedging(300*time.Millisecond, 1, 0)))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkStream(t, events, []string{
		`will_retry a1 OVERLOADED next=3 discard=false cause=Unavailable/PROVIDER_OVERLOADED`,
		`delta a3 "third"`,
		`final a3 attempts=3 "third"`,
	})
	if got := events[len(events)-1].GetFinal().GetHedges(); got != 1 {
		t.Errorf("final.hedges = %d, want 1", got)
	}
	if got := len(up.Requests()); got != 3 {
		t.Errorf("the provider saw %d requests, want 3", got)
	}
	waits := timer.Waits()
	if len(waits) != 2 || waits[0] != 300*time.Millisecond {
		t.Errorf("waits %v, want the hedging delay, then the backoff only", waits)
	}
	if n := hedgeCount(t, m, "scripted", metrics.HedgeFailed); n != 1 {
		t.Errorf("%s{result=failed} = %v, want 1", metrics.NameHedges, n)
	}
	if n := metricValue(t, m, metrics.NameProviderErrors, map[string]string{"provider": "scripted"}); n != 2 {
		t.Errorf("%s = %v, want both failed attempts", metrics.NameProviderErrors, n)
	}
}

// TestHedgeOnTheRoutesNextTarget: a route's default hedging sends the
// hedge to its next target, which wins: the Final names it.
func TestHedgeOnTheRoutesNextTarget(t *testing.T) {
	a := newScriptedAt(t, t.Name()+"/a", step{block: true})
	b := newScriptedAt(t, t.Name()+"/b", step{}, step{events: []provider.Event{text("from b"), finishStop}, err: io.EOF})
	cfg := config.Default()
	cfg.Providers = []provider.Config{
		{Name: "a", Kind: "scripted", BaseURL: t.Name() + "/a", Models: []string{"m"}},
		{Name: "b", Kind: "scripted", BaseURL: t.Name() + "/b", Models: []string{"m"}},
	}
	cfg.Routes = []route.Config{{Name: "r", Targets: []route.TargetConfig{{Model: "a/m"}, {Model: "b/m"}},
		Defaults: route.Defaults{Hedging: &route.HedgingDefaults{HedgeAfter: 300 * time.Millisecond, Target: route.HedgeTargetNext}}}}
	in := servertest.Start(t, cfg, server.WithRetryTimer(&recordingTimer{}))
	req := echo(t, input, "", nil)
	req.Model = "r"
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkRouteStream(t, events, []string{
		`delta a2 "from b"`,
		`final a2 b/m route=r "from b"`,
	})
	final := events[len(events)-1].GetFinal()
	if final.GetHedges() != 1 || !strings.Contains(final.GetAnnotations()["route.defaults"], "hedging") {
		t.Errorf("final hedges %d, annotations %v; want 1 hedge, from the route's defaults", final.GetHedges(), final.GetAnnotations())
	}
	if !cancelled(a) || len(b.Requests()) != 1 {
		t.Errorf("a cancelled %v, b saw %d requests; want a's attempt cancelled, b's hedge", cancelled(a), len(b.Requests()))
	}
}

// TestStructuredOutputReaskAfterAHedge: the hedge won with an invalid
// reply: it is re-asked like any attempt's, and the re-ask, the call's
// hedge being used, runs alone.
func TestStructuredOutputReaskAfterAHedge(t *testing.T) {
	in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
	valid := `{"sentiment":"positive","score":0.9}`
	faults := `[{"first_delay_ms":600000},{"output":` + quote(great) + `},{"output":` + quote(valid) + `}]`
	req := structuredEcho(t, sentiment, faults, nil)
	req.Hedging = hedging(300*time.Millisecond, 1, 0)
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var attemptsSeen []uint32
	for _, ev := range events {
		if !slices.Contains(attemptsSeen, ev.GetAttempt()) {
			attemptsSeen = append(attemptsSeen, ev.GetAttempt())
		}
	}
	if !slices.Equal(attemptsSeen, []uint32{2, 3}) {
		t.Errorf("events of attempts %v, want the hedge's (2) and the re-ask's (3) only", attemptsSeen)
	}
	w := willRetries(events)
	if len(w) != 1 || w[0].GetReason() != llmrelayv1.RetryReason_RETRY_REASON_INVALID_OUTPUT || w[0].GetNextAttempt() != 3 || !w[0].GetDiscardPartial() {
		t.Fatalf("will_retry events %v, want one re-ask of attempt 2's reply", w)
	}
	final := events[len(events)-1].GetFinal()
	if final.GetAttempts() != 3 || final.GetHedges() != 1 || final.GetValidationRetries() != 1 ||
		len(final.GetValidationErrors()) == 0 || final.GetValidationErrors()[0].GetAttempt() != 2 ||
		compactJSON(final.GetObject()) != `{"score":0.9,"sentiment":"positive"}` {
		t.Errorf("final %v, want 3 attempts, 1 hedge, attempt 2's errors and the valid object", final)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestOutputLimitOfAHedge: the hedge that won is metered like any
// attempt: past the limit the call fails, naming the hedge.
func TestOutputLimitOfAHedge(t *testing.T) {
	newScripted(t, step{block: true}, step{events: []provider.Event{text("0123456"), text("789x")}, err: io.EOF})
	in := servertest.Start(t, scriptedConfig(t), server.WithRetryTimer(&recordingTimer{}))
	req := hedgedScripted(t, hedging(300*time.Millisecond, 0, 0))
	req.OutputLimit = &llmrelayv1.OutputLimit{MaxBytes: 10}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	wantStatus(t, err, codes.ResourceExhausted, "OUTPUT_TOO_LARGE", map[string]string{"attempts": "2", "provider": "scripted"})
	checkStream(t, events, []string{`delta a2 "0123456"`})
}

// TestHedgeWithTheMockProvider: the mock's first_delay_ms makes a slow
// first token; the hedge answers at once.
func TestHedgeWithTheMockProvider(t *testing.T) {
	in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
	req := echo(t, input, `[{"first_delay_ms":600000}]`, nil)
	req.Hedging = hedging(200*time.Millisecond, 0, 0)
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	final := events[len(events)-1]
	if final.GetAttempt() != 2 || final.GetFinal().GetMessage().GetContent() != input || final.GetFinal().GetHedges() != 1 {
		t.Errorf("final %v, want attempt 2's echo, one hedge", final)
	}
	for _, ev := range events {
		if ev.GetAttempt() != 2 {
			t.Errorf("an event of attempt %d: %v", ev.GetAttempt(), ev)
		}
	}
}

// TestHedgeRefusedByTheRetryBudget: the provider's budget has one retry
// in flight, held by a hedge of another call: this call's hedge is
// refused and counted, and the call runs on without it.
func TestHedgeRefusedByTheRetryBudget(t *testing.T) {
	up := newScripted(t, step{block: true}, step{block: true})
	cfg := scriptedConfig(t)
	cfg.Retry.Budget = config.RetryBudget{Enabled: true, BudgetPercent: 0, MinRetryConcurrency: 1}
	in := servertest.Start(t, cfg, server.WithRetryTimer(&recordingTimer{}))
	m := in.Server.Metrics()
	req := hedgedScripted(t, hedging(300*time.Millisecond, 0, 0))

	ctx1, cancel1 := context.WithCancel(t.Context())
	defer cancel1()
	done1 := make(chan error, 1)
	go func() { _, err := servertest.Collect(ctx1, in.Client, req); done1 <- err }()
	<-up.arrival(2) // the first call's hedge holds the budget's one retry

	ctx2, cancel2 := context.WithCancel(t.Context())
	defer cancel2()
	done2 := make(chan error, 1)
	go func() { _, err := servertest.Collect(ctx2, in.Client, req); done2 <- err }()
	deadline := time.Now().Add(10 * time.Second)
	for hedgeCount(t, m, "scripted", metrics.HedgeRefused) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the second call's hedge was not refused")
		}
		time.Sleep(time.Millisecond)
	}
	cancel2()
	cancel1()
	for _, done := range []chan error{done1, done2} {
		if err := <-done; err == nil {
			t.Error("a cancelled call succeeded")
		}
	}
	if got := len(up.Requests()); got != 3 {
		t.Errorf("the provider saw %d requests, want 3: two calls, one hedge", got)
	}
}

// TestHedgingRequestsAreChecked: a policy the server cannot run is
// refused before any attempt, naming the field.
func TestHedgingRequestsAreChecked(t *testing.T) {
	in := servertest.Start(t, nil)
	three := uint32(3)
	for _, tc := range []struct {
		name  string
		h     *llmrelayv1.HedgePolicy
		field string
	}{
		{"no delay", &llmrelayv1.HedgePolicy{}, "hedging.hedge_after"},
		{"below the server's floor", hedging(10*time.Millisecond, 0, 0), "hedging.hedge_after"},
		{"three hedges", &llmrelayv1.HedgePolicy{HedgeAfter: durationpb.New(time.Second), MaxHedges: &three}, "hedging.max_hedges"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := echo(t, input, "", nil)
			req.Hedging = tc.h
			events, err := servertest.Collect(t.Context(), in.Client, req)
			st, _ := status.FromError(err)
			if st.Code() != codes.InvalidArgument || len(events) != 0 {
				t.Fatalf("status %v after %d events, want INVALID_ARGUMENT before any", err, len(events))
			}
			if !strings.Contains(fmt.Sprint(st.Message(), st.Details()), tc.field) {
				t.Errorf("status %q %v does not name %s", st.Message(), st.Details(), tc.field)
			}
		})
	}
}
