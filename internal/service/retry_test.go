package service_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

const input = "the quick brown fox jumps"

func TestRetriesTransientFailuresUntilSuccess(t *testing.T) {
	timer := &recordingTimer{}
	logs := &syncBuffer{}
	in := servertest.Start(t, nil, server.WithRetryTimer(timer), server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	req := echo(t, input, `[{"status":503},{"status":429,"retry_after_ms":700},{"drop_after":2}]`,
		&llmrelayv1.RetryPolicy{MaxAttempts: 5})
	req.RequestId = "7b0c7a4e-3f5e-4c57-9a39-0d4f3a1e2b6c"

	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkStream(t, events, []string{
		`will_retry a1 OVERLOADED next=2 discard=false cause=Unavailable/PROVIDER_OVERLOADED`,
		`will_retry a2 RATE_LIMITED next=3 discard=false cause=ResourceExhausted/PROVIDER_RATE_LIMITED`,
		`delta a3 "the "`,
		`delta a3 "quick "`,
		`will_retry a3 TRANSPORT next=4 discard=true cause=Unavailable/PROVIDER_TRANSPORT_ERROR`,
		`delta a4 "the "`,
		`delta a4 "quick "`,
		`delta a4 "brown "`,
		`delta a4 "fox "`,
		`delta a4 "jumps"`,
		`final a4 attempts=4 "the quick brown fox jumps"`,
	})

	// Each WillRetry announces exactly the wait that follows it.
	retries := willRetries(events)
	waits := timer.Waits()
	if len(waits) != len(retries) {
		t.Fatalf("waited %d times for %d WillRetry events", len(waits), len(retries))
	}
	for i, w := range retries {
		if got := w.GetDelay().AsDuration(); got != waits[i] {
			t.Errorf("WillRetry %d announces %v, the wait was %v", i+1, got, waits[i])
		}
	}
	if got := retries[1].GetDelay().AsDuration(); got != 700*time.Millisecond {
		t.Errorf("the rate-limited retry waits %v, want the provider's 700ms", got)
	}
	// The default backoff before the first retry is within [250ms, 500ms].
	if got := retries[0].GetDelay().AsDuration(); got < 250*time.Millisecond || got > 500*time.Millisecond {
		t.Errorf("the first backoff is %v, want within [250ms, 500ms]", got)
	}
	cause := retries[1].GetCause()
	if md := errorInfo(statusOf(cause)).GetMetadata(); md["provider_status"] != "429" || md["attempt"] != "2" || md["provider"] != "mock" {
		t.Errorf("the rate-limited cause's metadata = %v", md)
	}

	// Every retry is logged with what an operator needs.
	recs := logs.records(t, "retrying")
	if len(recs) != 3 {
		t.Fatalf("logged %d retries, want 3", len(recs))
	}
	for _, k := range []string{"request_id", "attempt", "reason", "delay", "provider"} {
		if _, ok := recs[1][k]; !ok {
			t.Errorf("the retry log record has no %s: %v", k, recs[1])
		}
	}
	if recs[1]["request_id"] != req.RequestId || recs[1]["reason"] != "RATE_LIMITED" || recs[1]["attempt"] != 2.0 || recs[1]["provider"] != "mock" {
		t.Errorf("second retry logged as %v", recs[1])
	}

	// And counted.
	m := in.Server.Metrics()
	for reason, want := range map[string]float64{"OVERLOADED": 1, "RATE_LIMITED": 1, "TRANSPORT": 1} {
		if got := metricValue(t, m, "llmrelay_retries_total", map[string]string{"provider": "mock", "reason": reason}); got != want {
			t.Errorf("llmrelay_retries_total{reason=%s} = %v, want %v", reason, got, want)
		}
	}
	if got := metricValue(t, m, "llmrelay_generate_calls_total", map[string]string{"provider": "mock", "code": "OK"}); got != 1 {
		t.Errorf("llmrelay_generate_calls_total{code=OK} = %v, want 1", got)
	}
	if got := histogramSum(t, m, "llmrelay_attempts_per_call", map[string]string{"provider": "mock"}); got != 4 {
		t.Errorf("llmrelay_attempts_per_call sum = %v, want 4", got)
	}
	if got := metricValue(t, m, "llmrelay_time_to_first_delta_seconds", map[string]string{"provider": "mock"}); got != 1 {
		t.Errorf("llmrelay_time_to_first_delta_seconds has %v samples, want 1", got)
	}
	if got := metricValue(t, m, "llmrelay_provider_errors_total", map[string]string{"provider": "mock", "class": "transport"}); got != 1 {
		t.Errorf("llmrelay_provider_errors_total{class=transport} = %v, want 1", got)
	}
}

// TestResponseHeadersNameTheAttemptProviderAndModel: the response headers
// of a gRPC call, sent with its first delta, say which attempt the reply
// starts with, the configured provider and the model, all three (they are
// set together).
func TestResponseHeadersNameTheAttemptProviderAndModel(t *testing.T) {
	in := servertest.Start(t, nil)
	stream, err := in.Client.Generate(t.Context(), echo(t, input, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	md, err := stream.Header()
	if err != nil {
		t.Fatalf("headers: %v", err)
	}
	for key, want := range map[string]string{"llmrelay-attempts": "1", "llmrelay-provider": "mock", "llmrelay-model": "echo"} {
		if got := md.Get(key); len(got) != 1 || got[0] != want {
			t.Errorf("header %s = %q, want [%q]", key, got, want)
		}
	}
	for {
		if _, err := stream.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("Recv: %v", err)
		}
	}
}

func TestRetryLogsShareTheCallsRequestID(t *testing.T) {
	logs := &syncBuffer{}
	in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}), server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	// No request_id: the call record makes one up, and the retry lines and
	// the chain's lines must agree on it.
	if _, err := servertest.Collect(t.Context(), in.Client, echo(t, "hi", `[{"status":503}]`, attempts(2))); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	retries, finished := logs.records(t, "retrying"), logs.records(t, "finished call")
	if len(retries) != 1 || len(finished) != 1 {
		t.Fatalf("logged %d retries and %d finished calls, want 1 and 1", len(retries), len(finished))
	}
	if id := retries[0]["request_id"]; id == nil || id == "" || id != finished[0]["request_id"] {
		t.Errorf("retry logged request_id %v, the call %v", id, finished[0]["request_id"])
	}
	if finished[0]["attempts"] != 2.0 {
		t.Errorf("the call's log line reports %v attempts, want 2", finished[0]["attempts"])
	}
}

func TestFailuresThatAreNotRetried(t *testing.T) {
	tests := []struct {
		name   string
		faults string
		code   codes.Code
		reason string
		md     map[string]string
	}{
		{"provider rejects the request", `[{"status":400}]`, codes.InvalidArgument, "PROVIDER_REJECTED",
			map[string]string{"attempts": "1", "provider": "mock", "provider_status": "400", "provider_error_type": "invalid_request_error"}},
		{"provider rejects the credentials", `[{"status":401}]`, codes.FailedPrecondition, "PROVIDER_AUTH_FAILED",
			map[string]string{"attempts": "1", "provider_status": "401"}},
		{"quota exhausted", `[{"status":429,"error_type":"insufficient_quota"}]`, codes.ResourceExhausted, "PROVIDER_QUOTA_EXHAUSTED",
			map[string]string{"attempts": "1", "provider_error_type": "insufficient_quota"}},
		{"provider says x-should-retry: false", `[{"status":503,"should_retry":false}]`, codes.Unavailable, "PROVIDER_RETRY_DISALLOWED",
			map[string]string{"attempts": "1", "provider_status": "503"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timer := &recordingTimer{}
			in := servertest.Start(t, nil, server.WithRetryTimer(timer))
			events, err := servertest.Collect(t.Context(), in.Client, echo(t, input, tt.faults, attempts(5)))
			if len(events) != 0 {
				t.Errorf("got events %v, want none", events)
			}
			st := wantStatus(t, err, tt.code, tt.reason, tt.md)
			if ri := retryInfo(st); ri != nil {
				t.Errorf("RetryInfo %v on a failure that waiting does not fix", ri)
			}
			if w := timer.Waits(); len(w) != 0 {
				t.Errorf("waited %v before failing", w)
			}
		})
	}
}

func TestXShouldRetryTrueRetriesARejection(t *testing.T) {
	in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
	events, err := servertest.Collect(t.Context(), in.Client, echo(t, "hi", `[{"status":400,"should_retry":true}]`, attempts(2)))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkStream(t, events, []string{
		`will_retry a1 SERVER_ERROR next=2 discard=false cause=InvalidArgument/PROVIDER_REJECTED`,
		`delta a2 "hi"`,
		`final a2 attempts=2 "hi"`,
	})
}

func TestRetriesExhausted(t *testing.T) {
	in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
	events, err := servertest.Collect(t.Context(), in.Client,
		echo(t, input, `[{"status":503},{"status":503},{"status":503},{"status":503}]`, &llmrelayv1.RetryPolicy{MaxAttempts: 3}))
	checkStream(t, events, []string{
		`will_retry a1 OVERLOADED next=2 discard=false cause=Unavailable/PROVIDER_OVERLOADED`,
		`will_retry a2 OVERLOADED next=3 discard=false cause=Unavailable/PROVIDER_OVERLOADED`,
	})
	wantStatus(t, err, codes.Unavailable, "RETRIES_EXHAUSTED",
		map[string]string{"attempts": "3", "provider": "mock", "provider_status": "503", "provider_error_type": "overloaded_error"})
	m := in.Server.Metrics()
	if got := metricValue(t, m, "llmrelay_generate_calls_total", map[string]string{"provider": "mock", "code": "Unavailable"}); got != 1 {
		t.Errorf("llmrelay_generate_calls_total{code=Unavailable} = %v, want 1", got)
	}
}

func TestMaxAttemptsOneDisablesRetries(t *testing.T) {
	in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
	events, err := servertest.Collect(t.Context(), in.Client, echo(t, input, `[{"status":503}]`, &llmrelayv1.RetryPolicy{MaxAttempts: 1}))
	if len(events) != 0 {
		t.Errorf("got events %v, want none", events)
	}
	wantStatus(t, err, codes.Unavailable, "RETRIES_EXHAUSTED", map[string]string{"attempts": "1"})
}

func TestMidstream(t *testing.T) {
	t.Run("MIDSTREAM_FAIL ends the call after output", func(t *testing.T) {
		in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
		events, err := servertest.Collect(t.Context(), in.Client, echo(t, input, `[{"drop_after":2}]`,
			&llmrelayv1.RetryPolicy{MaxAttempts: 3, Midstream: llmrelayv1.Midstream_MIDSTREAM_FAIL}))
		checkStream(t, events, []string{`delta a1 "the "`, `delta a1 "quick "`})
		wantStatus(t, err, codes.Unavailable, "MIDSTREAM_FAILED", map[string]string{"attempts": "1"})
	})
	t.Run("MIDSTREAM_FAIL still retries before output", func(t *testing.T) {
		in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
		events, err := servertest.Collect(t.Context(), in.Client, echo(t, "hi", `[{"drop_after":0}]`,
			&llmrelayv1.RetryPolicy{MaxAttempts: 3, Midstream: llmrelayv1.Midstream_MIDSTREAM_FAIL}))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		checkStream(t, events, []string{
			`will_retry a1 TRANSPORT next=2 discard=false cause=Unavailable/PROVIDER_TRANSPORT_ERROR`,
			`delta a2 "hi"`,
			`final a2 attempts=2 "hi"`,
		})
	})
	t.Run("an in-stream overloaded error restarts", func(t *testing.T) {
		in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
		events, err := servertest.Collect(t.Context(), in.Client, echo(t, "one two three", `[{"error_after":1}]`, attempts(2)))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		checkStream(t, events, []string{
			`delta a1 "one "`,
			`will_retry a1 OVERLOADED next=2 discard=true cause=Unavailable/PROVIDER_OVERLOADED`,
			`delta a2 "one "`,
			`delta a2 "two "`,
			`delta a2 "three"`,
			`final a2 attempts=2 "one two three"`,
		})
	})
}

func TestStalledAttemptIsRetried(t *testing.T) {
	in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
	req := echo(t, input, `[{"stall_after":2}]`, attempts(3))
	req.StreamIdleTimeout = durationpb.New(300 * time.Millisecond)
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkStream(t, events, []string{
		`delta a1 "the "`,
		`delta a1 "quick "`,
		`will_retry a1 STALLED next=2 discard=true cause=Unavailable/PROVIDER_STALLED`,
		`delta a2 "the "`,
		`delta a2 "quick "`,
		`delta a2 "brown "`,
		`delta a2 "fox "`,
		`delta a2 "jumps"`,
		`final a2 attempts=2 "the quick brown fox jumps"`,
	})
}

func TestRetryHints(t *testing.T) {
	t.Run("a hint past the deadline fails at once with RetryInfo", func(t *testing.T) {
		// Real time: had the server slept for the hint, the call would end
		// DEADLINE_EXCEEDED instead.
		// The deadline is far longer than a loaded machine needs to reach
		// the first attempt, and the hint longer still (and under the
		// server's 60s cap).
		in := servertest.Start(t, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		_, err := servertest.Collect(ctx, in.Client, echo(t, input, `[{"status":429,"retry_after_ms":30000}]`, nil))
		st := wantStatus(t, err, codes.ResourceExhausted, "RETRY_HINT_EXCEEDS_DEADLINE",
			map[string]string{"attempts": "1", "provider_status": "429"})
		if got := retryInfo(st).GetRetryDelay().AsDuration(); got != 30*time.Second {
			t.Errorf("RetryInfo = %v, want 30s", got)
		}
	})
	t.Run("a hint above the server's cap fails at once with RetryInfo", func(t *testing.T) {
		timer := &recordingTimer{}
		in := servertest.Start(t, nil, server.WithRetryTimer(timer))
		_, err := servertest.Collect(t.Context(), in.Client, echo(t, input, `[{"status":503,"retry_after_ms":120000}]`, nil))
		st := wantStatus(t, err, codes.Unavailable, "RETRY_HINT_TOO_LONG", map[string]string{"attempts": "1"})
		if got := retryInfo(st).GetRetryDelay().AsDuration(); got != 2*time.Minute {
			t.Errorf("RetryInfo = %v, want 2m", got)
		}
		if w := timer.Waits(); len(w) != 0 {
			t.Errorf("waited %v", w)
		}
	})
	t.Run("a backoff past the deadline fails at once", func(t *testing.T) {
		// An 8s backoff waits at least 4s (equal jitter): past a 3s
		// deadline, which leaves a loaded machine ample time for the
		// first attempt.
		in := servertest.Start(t, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		_, err := servertest.Collect(ctx, in.Client, echo(t, input, `[{"status":503}]`,
			&llmrelayv1.RetryPolicy{InitialBackoff: durationpb.New(8 * time.Second)}))
		wantStatus(t, err, codes.Unavailable, "RETRY_BACKOFF_EXCEEDS_DEADLINE", map[string]string{"attempts": "1"})
	})
	t.Run("rate limits exhausted carry the last hint", func(t *testing.T) {
		in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
		_, err := servertest.Collect(t.Context(), in.Client, echo(t, input,
			`[{"status":429,"retry_after_ms":100},{"status":429,"retry_after_ms":300}]`, attempts(2)))
		st := wantStatus(t, err, codes.ResourceExhausted, "RETRIES_EXHAUSTED", map[string]string{"attempts": "2"})
		if got := retryInfo(st).GetRetryDelay().AsDuration(); got != 300*time.Millisecond {
			t.Errorf("RetryInfo = %v, want 300ms", got)
		}
	})
}

func TestServerDeadlines(t *testing.T) {
	const def, limit = time.Second, 2 * time.Second
	short := func() *config.Config {
		cfg := config.Default()
		cfg.Deadlines.Default = def
		cfg.Deadlines.Max = limit
		return cfg
	}
	tests := []struct {
		name     string
		deadline time.Duration // 0: none
		want     time.Duration // the deadline the server applies
	}{
		{"a call without a deadline gets the server default", 0, def},
		{"a longer deadline is clamped to the server max", time.Hour, limit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := servertest.Start(t, short())
			ctx := t.Context()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			// The attempt is silent from the start (the idle timeout is
			// 30s): only a deadline ends it, and nothing was sent before,
			// however slow the machine.
			start := time.Now()
			events, err := servertest.Collect(ctx, in.Client, echo(t, input, `[{"stall_after":0}]`, nil))
			checkStream(t, events, nil)
			// No attempt count: on a loaded machine the short deadline may
			// pass before the first attempt starts, which is still the
			// server's deadline ending the call.
			wantStatus(t, err, codes.DeadlineExceeded, "DEADLINE_EXCEEDED", nil)
			// The server's deadline, not an earlier one, ended the call (a
			// lower bound: a loaded machine only makes it later).
			if took := time.Since(start); took < tt.want {
				t.Errorf("the call ended after %v, before the %v deadline", took, tt.want)
			}
		})
	}
}

// scriptedConfig is the default config with the test's scripted provider.
func scriptedConfig(t testing.TB) *config.Config {
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "scripted", Kind: "scripted", BaseURL: t.Name()}}
	return cfg
}

func TestFinalUsageSumsEveryAttempt(t *testing.T) {
	newScripted(t,
		step{events: []provider.Event{
			{Kind: provider.EventText, Text: "partial"},
			{Kind: provider.EventUsage, Usage: provider.Usage{InputTokens: 10, OutputTokens: 3}},
		}, err: &provider.Error{Kind: provider.KindInStream, Class: provider.ClassOverloaded, Type: "overloaded_error"}},
		step{events: []provider.Event{
			{Kind: provider.EventText, Text: "done"},
			{Kind: provider.EventFinish, FinishReason: provider.FinishStop},
			{Kind: provider.EventUsage, Usage: provider.Usage{InputTokens: 10, OutputTokens: 5}},
		}, err: io.EOF},
	)
	in := servertest.Start(t, scriptedConfig(t), server.WithRetryTimer(&recordingTimer{}))
	req := echo(t, input, "", nil)
	req.Model = "scripted/any"
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	final := events[len(events)-1].GetFinal()
	if final.GetMessage().GetContent() != "done" {
		t.Errorf("Final message = %q, want only the successful attempt's %q", final.GetMessage().GetContent(), "done")
	}
	if u := final.GetUsage(); u.GetInputTokens() != 20 || u.GetOutputTokens() != 8 {
		t.Errorf("Final usage = %v, want 20 in and 8 out (both attempts)", u)
	}
}

func TestClientCancellationStopsTheProviderCall(t *testing.T) {
	p := newScripted(t, step{events: []provider.Event{{Kind: provider.EventText, Text: "hello "}}, block: true})
	in := servertest.Start(t, scriptedConfig(t))
	req := echo(t, input, "", nil)
	req.Model = "scripted/any"

	ctx, cancel := context.WithCancel(t.Context())
	stream, err := in.Client.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatalf("first event: %v", err)
	}
	cancel()
	select {
	case <-p.cancelled:
	case <-time.After(10 * time.Second): // a guard against hangs, not a timing assertion
		t.Fatal("the provider call's context was not cancelled")
	}
	waitForMetric(t, in, "llmrelay_generate_calls_total", map[string]string{"provider": "scripted", "code": "Canceled"})
}

func TestCancellationDuringBackoff(t *testing.T) {
	// Real time, and a backoff of 30 to 60 seconds: only the cancellation
	// can end the wait before the guard below gives up.
	cfg := config.Default()
	cfg.Retry.MaxBackoff = time.Hour
	cfg.Deadlines.Default, cfg.Deadlines.Max = 2*time.Hour, 2*time.Hour
	in := servertest.Start(t, cfg)
	ctx, cancel := context.WithCancel(t.Context())
	stream, err := in.Client.Generate(ctx, echo(t, input, `[{"status":503}]`,
		&llmrelayv1.RetryPolicy{InitialBackoff: durationpb.New(time.Minute), MaxBackoff: durationpb.New(time.Minute)}))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := stream.Recv()
	if err != nil || ev.GetWillRetry() == nil {
		t.Fatalf("first event = %v, %v; want a WillRetry", ev, err)
	}
	cancel()
	waitForMetric(t, in, "llmrelay_generate_calls_total", map[string]string{"provider": "mock", "code": "Canceled"})
	// goleak (TestMain) checks that nothing of the call is left running.
}

// waitForMetric waits until the server counted a call with the labels: the
// handler has returned.
func waitForMetric(t *testing.T, in *servertest.Instance, name string, labels map[string]string) {
	t.Helper()
	for start := time.Now(); metricValue(t, in.Server.Metrics(), name, labels) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 10*time.Second { // a guard against hangs
			t.Fatalf("%s%v never counted", name, labels)
		}
	}
}
