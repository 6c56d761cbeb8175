package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/hook"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

// parseConfig reads a config file's YAML over the defaults, with the
// placeholders {A} and {B} replaced by the given upstream URLs.
func parseConfig(t *testing.T, yaml string, urls ...string) *config.Config {
	t.Helper()
	for i, u := range urls {
		yaml = strings.ReplaceAll(yaml, fmt.Sprintf("{%c}", 'A'+i), u)
	}
	cfg, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// routeRender writes an event with where it came from and where the next
// attempt goes:
//
//	delta a3 "w0 "
//	will_retry a2 OVERLOADED next=3 b/m fallback discard=false
//	final a3 b/m route=smart "w0 w1 w2 "
func routeRender(ev *llmrelayv1.GenerateEvent) string {
	switch e := ev.GetEvent().(type) {
	case *llmrelayv1.GenerateEvent_WillRetry:
		w := e.WillRetry
		s := fmt.Sprintf("will_retry a%d %s next=%d %s/%s", ev.GetAttempt(), strings.TrimPrefix(w.GetReason().String(), "RETRY_REASON_"),
			w.GetNextAttempt(), w.GetNextProvider(), w.GetNextModel())
		if w.GetFallback() {
			s += " fallback"
		}
		return s + fmt.Sprintf(" discard=%v", w.GetDiscardPartial())
	case *llmrelayv1.GenerateEvent_Final:
		f := e.Final
		return fmt.Sprintf("final a%d %s/%s route=%s %q", ev.GetAttempt(), f.GetProvider(), f.GetModel(), f.GetRoute(), f.GetMessage().GetContent())
	}
	return render(ev)
}

// checkRouteStream compares the rendered events (routeRender) with want
// and checks that the sequence numbers run 1, 2, 3, ... without gaps.
// An attempt's consecutive text deltas are compared as one: how the text
// is cut into deltas depends on how fast the test reads (coalesced deltas).
func checkRouteStream(t *testing.T, events []*llmrelayv1.GenerateEvent, want []string) {
	t.Helper()
	var got []string
	var text string // the text deltas of the last attempt, joined
	for i, ev := range events {
		if ev.GetSequence() != uint64(i+1) {
			t.Errorf("event %d has sequence %d, want %d", i, ev.GetSequence(), i+1)
		}
		d := ev.GetDelta()
		if d.GetText() != "" && i > 0 && events[i-1].GetDelta().GetText() != "" && events[i-1].GetAttempt() == ev.GetAttempt() {
			text += d.GetText()
			got[len(got)-1] = fmt.Sprintf("delta a%d %q", ev.GetAttempt(), text)
			continue
		}
		text = d.GetText()
		got = append(got, routeRender(ev))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func ask(model, text string) *llmrelayv1.GenerateRequest {
	return &llmrelayv1.GenerateRequest{Model: model, Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: text}}}
}

// twoUpstreams is a config with two OpenAI-compatible upstreams, a and b,
// and the route smart over them, in that order.
const twoUpstreams = `
providers:
  - {name: a, kind: openai, base_url: "{A}", models: [m]}
  - {name: b, kind: openai, base_url: "{B}", models: [m]}
retry: {initial_backoff: 1ms, max_backoff: 2ms}
routes:
  - name: smart
    targets:
      - model: a/m
      - model: b/m
    defaults:
      retry: {max_attempts: 2}
`

// failingUpstream starts an OpenAI-compatible upstream that answers every
// request with the status and error type.
func failingUpstream(t *testing.T, status int, errorType string) *openaitest.Server {
	return openaitest.Start(t, openaitest.Options{FaultFor: func(int, []byte) openaitest.Fault {
		return openaitest.Fault{Kind: openaitest.Status, Status: status, ErrorType: errorType}
	}})
}

// relaySmart starts llmrelay with the route smart over upstreams a and b
// (twoUpstreams), its waits recorded by the returned timer.
func relaySmart(t *testing.T, a, b *openaitest.Server) (*servertest.Instance, *recordingTimer) {
	timer := &recordingTimer{}
	return servertest.Start(t, parseConfig(t, twoUpstreams, a.URL(), b.URL()), server.WithRetryTimer(timer)), timer
}

// TestRouteFallsBackToTheNextTarget: A answers every request 503, B is
// healthy. The call's stream shows A's failed attempts, then a WillRetry
// naming B, then B's answer; the Final says B answered, for the route.
func TestRouteFallsBackToTheNextTarget(t *testing.T) {
	a, b := failingUpstream(t, 503, "service_unavailable"), openaitest.Start(t, openaitest.Options{Chunks: 3})
	in, timer := relaySmart(t, a, b)
	events, err := servertest.Collect(t.Context(), in.Client, ask("smart", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	checkRouteStream(t, events, []string{
		"will_retry a1 OVERLOADED next=2 a/m discard=false",
		"will_retry a2 OVERLOADED next=3 b/m fallback discard=false",
		`delta a3 "w0 w1 w2 "`,
		`final a3 b/m route=smart "w0 w1 w2 "`,
	})
	if a.Requests() != 2 || b.Requests() != 1 {
		t.Errorf("upstream requests a=%d b=%d, want A's 2 attempts then 1 to B", a.Requests(), b.Requests())
	}
	if w := timer.Waits(); len(w) != 2 || w[0] <= 0 || w[1] != 0 {
		t.Errorf("waits %v, want a backoff before A's retry and none before the fallback", w)
	}
	// The cause names the failure at A.
	for _, w := range willRetries(events) {
		if c := statusOf(w.GetCause()); errorInfo(c).GetMetadata()["provider"] != "a" {
			t.Errorf("cause %v, want provider a's failure", c)
		}
	}
	if got := metricValue(t, in.Server.Metrics(), metrics.NameFallbacks, map[string]string{"route": "smart", "from": "a/m", "to": "b/m"}); got != 1 {
		t.Errorf("%s{smart, a/m → b/m} = %v, want 1", metrics.NameFallbacks, got)
	}
}

// TestRouteQuotaExhaustedMovesOnAtOnce: a 429 that says the quota is spent
// is not retried at A: the call moves to B at once.
func TestRouteQuotaExhaustedMovesOnAtOnce(t *testing.T) {
	a, b := failingUpstream(t, 429, "insufficient_quota"), openaitest.Start(t, openaitest.Options{Chunks: 2})
	in, timer := relaySmart(t, a, b)
	events, err := servertest.Collect(t.Context(), in.Client, ask("smart", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	checkRouteStream(t, events, []string{
		"will_retry a1 TARGET_REFUSED next=2 b/m fallback discard=false",
		`delta a2 "w0 w1 "`,
		`final a2 b/m route=smart "w0 w1 "`,
	})
	if a.Requests() != 1 {
		t.Errorf("A got %d requests, want 1: a spent quota is not retried", a.Requests())
	}
	if w := timer.Waits(); len(w) != 1 || w[0] != 0 {
		t.Errorf("waits %v, want none before the fallback", w)
	}
	if c := statusOf(willRetries(events)[0].GetCause()); c.Code() != codes.ResourceExhausted || errorInfo(c).GetReason() != "PROVIDER_QUOTA_EXHAUSTED" {
		t.Errorf("cause %v, want RESOURCE_EXHAUSTED PROVIDER_QUOTA_EXHAUSTED", c)
	}
}

// TestRouteFallsBackOnTheTargetsFailures: every failure that is the
// target's, not the request's, moves the call to B (after A's two
// attempts when retrying A could help, at once when it could not).
func TestRouteFallsBackOnTheTargetsFailures(t *testing.T) {
	closed := openaitest.NewServer(openaitest.Options{})
	closed.Close() // nothing listens there any more: connection refused
	tests := []struct {
		name string
		a    func(t *testing.T) string // A's base URL
		want []string
	}{
		{"model unknown at the provider", func(t *testing.T) string { return failingUpstream(t, 404, "model_not_found").URL() },
			[]string{"will_retry a1 TARGET_REFUSED next=2 b/m fallback discard=false"}},
		{"longer than the model's context window", func(t *testing.T) string { return failingUpstream(t, 400, "context_length_exceeded").URL() },
			[]string{"will_retry a1 TARGET_REFUSED next=2 b/m fallback discard=false"}},
		{"credentials refused", func(t *testing.T) string { return failingUpstream(t, 401, "invalid_api_key").URL() },
			[]string{"will_retry a1 TARGET_REFUSED next=2 b/m fallback discard=false"}},
		{"rate limited", func(t *testing.T) string { return failingUpstream(t, 429, "rate_limit_exceeded").URL() },
			[]string{"will_retry a1 RATE_LIMITED next=2 a/m discard=false", "will_retry a2 RATE_LIMITED next=3 b/m fallback discard=false"}},
		{"unreachable", func(*testing.T) string { return closed.URL() },
			[]string{"will_retry a1 TRANSPORT next=2 a/m discard=false", "will_retry a2 TRANSPORT next=3 b/m fallback discard=false"}},
		{"an in-stream server error", func(t *testing.T) string {
			return openaitest.Start(t, openaitest.Options{FaultFor: func(int, []byte) openaitest.Fault {
				return openaitest.Fault{Kind: openaitest.InStreamError, After: 0, ErrorType: "server_error"}
			}}).URL()
		}, []string{"will_retry a1 SERVER_ERROR next=2 a/m discard=false", "will_retry a2 SERVER_ERROR next=3 b/m fallback discard=false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := openaitest.Start(t, openaitest.Options{Chunks: 1})
			in := servertest.Start(t, parseConfig(t, twoUpstreams, tt.a(t), b.URL()), server.WithRetryTimer(&recordingTimer{}))
			events, err := servertest.Collect(t.Context(), in.Client, ask("smart", "hi"))
			if err != nil {
				t.Fatal(err)
			}
			n := len(tt.want) + 1
			want := append(tt.want, fmt.Sprintf(`delta a%d "w0 "`, n), fmt.Sprintf(`final a%d b/m route=smart "w0 "`, n))
			checkRouteStream(t, events, want)
		})
	}
}

// TestRouteDoesNotFallBackForTheCallersError: a 400 from A is the
// request's fault; B, which would reject it as well, is never called.
func TestRouteDoesNotFallBackForTheCallersError(t *testing.T) {
	a, b := failingUpstream(t, 400, "invalid_request_error"), openaitest.Start(t, openaitest.Options{})
	in, _ := relaySmart(t, a, b)
	events, err := servertest.Collect(t.Context(), in.Client, ask("smart", "hi"))
	checkRouteStream(t, events, nil)
	wantStatus(t, err, codes.InvalidArgument, "PROVIDER_REJECTED", map[string]string{"provider": "a", "attempts": "1"})
	if a.Requests() != 1 || b.Requests() != 0 {
		t.Errorf("upstream requests a=%d b=%d, want 1 and 0", a.Requests(), b.Requests())
	}
}

// mockRoutes is a config with two mock providers, down (a standing fault
// from its options) and up, and routes over them.
const mockRoutes = `
providers:
  - name: down
    kind: mock
    options: {fault: %s}
  - {name: up, kind: mock}
retry: {initial_backoff: 1ms, max_backoff: 2ms}
routes:
  - name: smart
    targets: [{model: down/echo}, {model: up/echo}]
    defaults:
      retry: {max_attempts: 1}
`

func TestRouteMidstream(t *testing.T) {
	cfg := parseConfig(t, fmt.Sprintf(mockRoutes, "{drop_after: 2}"))
	in := servertest.Start(t, cfg, server.WithRetryTimer(&recordingTimer{}))

	t.Run("MIDSTREAM_RESTART falls back and discards the partial output", func(t *testing.T) {
		events, err := servertest.Collect(t.Context(), in.Client, ask("smart", "one two three"))
		if err != nil {
			t.Fatal(err)
		}
		checkRouteStream(t, events, []string{
			`delta a1 "one two "`,
			"will_retry a1 TRANSPORT next=2 up/echo fallback discard=true",
			`delta a2 "one two three"`,
			`final a2 up/echo route=smart "one two three"`,
		})
	})
	t.Run("MIDSTREAM_FAIL fails the call", func(t *testing.T) {
		req := ask("smart", "one two three")
		req.Retry = &llmrelayv1.RetryPolicy{Midstream: llmrelayv1.Midstream_MIDSTREAM_FAIL}
		events, err := servertest.Collect(t.Context(), in.Client, req)
		checkRouteStream(t, events, []string{`delta a1 "one two "`})
		wantStatus(t, err, codes.Unavailable, "MIDSTREAM_FAILED", map[string]string{"provider": "down"})
	})
}

// TestRoutesExample runs the example docs/routes.md walks through
// (examples/config/routes.yaml): a mock provider whose standing fault
// fails every request, no provider_options, and the calls the doc shows.
func TestRoutesExample(t *testing.T) {
	cfg, err := config.Load(config.Flags{ConfigPath: "../../examples/config/routes.yaml"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	timer, logs := &recordingTimer{}, &syncBuffer{}
	in := servertest.Start(t, cfg, server.WithRetryTimer(timer), server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))

	events, err := servertest.Collect(t.Context(), in.Client, ask("smart", "hello routes"))
	if err != nil {
		t.Fatal(err)
	}
	checkRouteStream(t, events, []string{
		"will_retry a1 OVERLOADED next=2 down/echo discard=false",
		"will_retry a2 OVERLOADED next=3 up/echo fallback discard=false",
		`delta a3 "hello routes"`,
		`final a3 up/echo route=smart "hello routes"`,
	})
	if w := timer.Waits(); len(w) != 2 || w[0] < 100*time.Millisecond || w[0] > 200*time.Millisecond || w[1] != 0 {
		t.Errorf("waits %v, want the 200ms backoff (with equal jitter), then none", w)
	}
	// The move is logged, and the call's line names the route and the
	// defaults that applied.
	moves, finished := logs.records(t, "falling back"), logs.records(t, "finished call")
	if len(moves) != 1 || moves[0]["route"] != "smart" || moves[0]["from"] != "down/echo" || moves[0]["to"] != "up/echo" {
		t.Errorf("falling back lines %v", moves)
	}
	if len(finished) != 1 || finished[0]["route"] != "smart" ||
		finished[0]["annotations"].(map[string]any)[hook.AnnotationRouteDefaults] != "messages,retry.max_attempts,retry.initial_backoff" {
		t.Errorf("finished call lines %v", finished)
	}

	events, err = servertest.Collect(t.Context(), in.Client, ask("tickets", "the printer is on fire"))
	if err != nil {
		t.Fatal(err)
	}
	f := events[len(events)-1].GetFinal()
	if obj := f.GetObject().GetStructValue().AsMap(); obj["title"] == nil || obj["priority"] == nil {
		t.Errorf("tickets: object %v, want a ticket", obj)
	}
}

// TestRouteDefaultSchema: the route's schema applies to a request that has
// no response_format, and is validated (a reply that does not conform is
// re-asked); a request's own response_format wins.
func TestRouteDefaultSchema(t *testing.T) {
	cfg := parseConfig(t, `
routes:
  - name: tickets
    targets: [{model: mock/echo}]
    defaults:
      response_format:
        name: ticket
        json_schema:
          type: object
          properties: {title: {type: string}, priority: {type: integer, minimum: 1}}
          required: [title, priority]
          additionalProperties: false
`)
	in := servertest.Start(t, cfg, server.WithRetryTimer(&recordingTimer{}))

	t.Run("applied and validated", func(t *testing.T) {
		req := ask("tickets", "the printer is on fire")
		// The first reply does not conform to the route's schema.
		req.ProviderOptions = mustStruct(t, map[string]any{"faults": []any{map[string]any{"output": `{"title": "fire"}`}}})
		events, err := servertest.Collect(t.Context(), in.Client, req)
		if err != nil {
			t.Fatal(err)
		}
		ws := willRetries(events)
		if len(ws) != 1 || ws[0].GetReason() != llmrelayv1.RetryReason_RETRY_REASON_INVALID_OUTPUT {
			t.Fatalf("will_retries %v, want one re-ask for the reply missing priority", ws)
		}
		f := events[len(events)-1].GetFinal()
		obj := f.GetObject().GetStructValue().AsMap()
		if _, ok := obj["priority"]; !ok || f.GetValidationRetries() != 1 {
			t.Errorf("final object %v after %d re-asks, want one conforming to the route's schema", obj, f.GetValidationRetries())
		}
		if got := f.GetAnnotations()[hook.AnnotationRouteDefaults]; got != "response_format" {
			t.Errorf("annotation %q = %q, want response_format", hook.AnnotationRouteDefaults, got)
		}
	})
	t.Run("the request's own wins", func(t *testing.T) {
		req := ask("tickets", "x")
		req.ResponseFormat = &llmrelayv1.ResponseFormat{JsonSchema: mustStruct(t, map[string]any{
			"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "boolean"}}, "required": []any{"answer"},
		})}
		events, err := servertest.Collect(t.Context(), in.Client, req)
		if err != nil {
			t.Fatal(err)
		}
		f := events[len(events)-1].GetFinal()
		if obj := f.GetObject().GetStructValue().AsMap(); len(obj) != 1 || obj["answer"] == nil {
			t.Errorf("object %v, want the request's schema's", obj)
		}
		if len(f.GetAnnotations()) != 0 {
			t.Errorf("annotations %v, want none: no default applied", f.GetAnnotations())
		}
	})
	t.Run("a request with tools gets no default schema", func(t *testing.T) {
		req := ask("tickets", "plain text")
		req.Tools = []*llmrelayv1.Tool{{Name: "lookup"}}
		events, err := servertest.Collect(t.Context(), in.Client, req)
		if err != nil {
			t.Fatal(err)
		}
		if f := events[len(events)-1].GetFinal(); f.GetObject() != nil || f.GetMessage().GetContent() != "plain text" {
			t.Errorf("final %v, want the plain echo", f)
		}
	})
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRouteDefaultsReachTheUpstream: the route's system prompt and prefix
// messages reach the provider ahead of the caller's messages, and its
// generation and retry defaults fill only what the request leaves unset.
func TestRouteDefaultsReachTheUpstream(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	up := openaitest.Start(t, openaitest.Options{Chunks: 1, FaultFor: func(n int, body []byte) openaitest.Fault {
		mu.Lock()
		bodies = append(bodies, string(body))
		mu.Unlock()
		return openaitest.Fault{}
	}})
	cfg := parseConfig(t, `
providers: [{name: up, kind: openai, base_url: "{A}", models: [m]}]
routes:
  - name: support
    targets: [{model: up/m}]
    defaults:
      system: "You are the support assistant of Example Corp."
      messages: [{role: user, content: "Answer in French."}]
      generation: {max_output_tokens: 1024, temperature: 0.2}
`, up.URL())
	in := servertest.Start(t, cfg)
	req := &llmrelayv1.GenerateRequest{Model: "support", Messages: []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_SYSTEM, Content: "Be brief."},
		{Role: llmrelayv1.Role_ROLE_USER, Content: "My order is late."},
	}}
	temp := float32(0.9)
	req.Generation = &llmrelayv1.GenerationConfig{Temperature: &temp}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		MaxTokens   *int     `json:"max_tokens"` // max_completion_tokens for OpenAI's own base URL
		Temperature *float64 `json:"temperature"`
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || json.Unmarshal([]byte(bodies[0]), &sent) != nil {
		t.Fatalf("upstream bodies %q", bodies)
	}
	var got []string
	for _, m := range sent.Messages {
		got = append(got, m.Role+": "+m.Content)
	}
	want := []string{"system: You are the support assistant of Example Corp.", "user: Answer in French.", "system: Be brief.", "user: My order is late."}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("upstream messages\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if sent.MaxTokens == nil || *sent.MaxTokens != 1024 || sent.Temperature == nil || *sent.Temperature < 0.89 || *sent.Temperature > 0.91 {
		t.Errorf("upstream max tokens %v, temperature %v; want the route's 1024 and the request's 0.9", sent.MaxTokens, sent.Temperature)
	}
	want2 := "messages,generation.max_output_tokens"
	if got := events[len(events)-1].GetFinal().GetAnnotations()[hook.AnnotationRouteDefaults]; got != want2 {
		t.Errorf("annotation = %q, want %q", got, want2)
	}
}

// TestFallbackModels: a request's own fallback_models, named
// "<provider>/<model>", take over when its model fails, and the key's
// allow-list is checked for each.
func TestFallbackModels(t *testing.T) {
	const key = "key-fallbacks"
	cfg := parseConfig(t, fmt.Sprintf(`
providers:
  - name: down
    kind: mock
    options: {fault: {status: 500}}
  - {name: up, kind: mock}
retry: {initial_backoff: 1ms, max_backoff: 2ms}
auth:
  keys:
    - name: team
      sha256: %s
      scopes: [generate]
      models: [down/*, up/echo]
`, auth.HashKey(key)))
	in := servertest.Start(t, cfg, server.WithRetryTimer(&recordingTimer{}))
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+key)

	req := ask("down/echo", "fine")
	req.Retry = attempts(1)
	req.FallbackModels = []string{"down/lorem", "up/echo"}
	events, err := servertest.Collect(ctx, in.Client, req)
	if err != nil {
		t.Fatal(err)
	}
	checkRouteStream(t, events, []string{
		"will_retry a1 SERVER_ERROR next=2 down/lorem fallback discard=false",
		"will_retry a2 SERVER_ERROR next=3 up/echo fallback discard=false",
		`delta a3 "fine"`,
		`final a3 up/echo route= "fine"`,
	})

	req.FallbackModels = []string{"up/echo", "up/lorem"}
	events, err = servertest.Collect(ctx, in.Client, req)
	checkRouteStream(t, events, nil)
	wantStatus(t, err, codes.PermissionDenied, "MODEL_NOT_ALLOWED", map[string]string{"model": "up/lorem", "field": "fallback_models[1]"})
}

// TestWeightedRouteOverTheServer: 1,000 calls to a route weighted 3:1 go
// to its deployments within a few percent of 750:250 (a seeded random
// source keeps the count steady).
func TestWeightedRouteOverTheServer(t *testing.T) {
	cfg := parseConfig(t, `
providers: [{name: eu, kind: mock}, {name: us, kind: mock}]
routes:
  - name: fast
    balance: weighted
    targets:
      - {model: eu/echo, weight: 3}
      - {model: us/echo, weight: 1}
`)
	var mu sync.Mutex
	rnd := rand.New(rand.NewPCG(7, 7))
	in := servertest.Start(t, cfg, server.WithRouteRand(func(n int64) int64 {
		mu.Lock()
		defer mu.Unlock()
		return rnd.Int64N(n)
	}))
	served := map[string]int{}
	for range 1000 {
		events, err := servertest.Collect(t.Context(), in.Client, ask("fast", "x"))
		if err != nil {
			t.Fatal(err)
		}
		served[events[len(events)-1].GetFinal().GetProvider()]++
	}
	if eu := served["eu"]; eu < 720 || eu > 780 || eu+served["us"] != 1000 {
		t.Fatalf("served %v, want eu within 750±30 of 1000", served)
	}
}

// TestEjectedTargetSitsOutItsCooldown drives the server's clock for
// target health: A fails until it is ejected, gets no call during its
// cooldown (calls go straight to B, without a WillRetry), is listed as
// ejected by ListModels and the metrics, and serves again once the
// cooldown is over.
func TestEjectedTargetSitsOutItsCooldown(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	a := openaitest.Start(t, openaitest.Options{Chunks: 1, FaultFor: func(int, []byte) openaitest.Fault {
		if down.Load() {
			return openaitest.Fault{Kind: openaitest.Status, Status: 502}
		}
		return openaitest.Fault{}
	}})
	b := openaitest.Start(t, openaitest.Options{Chunks: 1})
	cfg := parseConfig(t, `
providers:
  - {name: a, kind: openai, base_url: "{A}", models: [m]}
  - {name: b, kind: openai, base_url: "{B}", models: [m]}
routes:
  - name: smart
    targets: [{model: a/m}, {model: b/m}]
    defaults: {retry: {max_attempts: 1}}
outlier_detection: {consecutive_failures: 2, base_ejection_time: 30s, max_ejection_time: 5m}
`, a.URL(), b.URL())
	clock := statetest.NewClock()
	in := servertest.Start(t, cfg, server.WithRetryTimer(&recordingTimer{}), server.WithRouteClock(clock.Now))
	call := func() []string {
		t.Helper()
		events, err := servertest.Collect(t.Context(), in.Client, ask("smart", "x"))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ev := range events {
			if ev.GetDelta() == nil {
				out = append(out, routeRender(ev))
			}
		}
		return out
	}
	fallback := []string{"will_retry a1 SERVER_ERROR next=2 b/m fallback discard=false", `final a2 b/m route=smart "w0 "`}
	for i := range 2 {
		if got := call(); strings.Join(got, "\n") != strings.Join(fallback, "\n") {
			t.Fatalf("call %d: %v, want the fallback to B", i+1, got)
		}
	}
	// Two failures in a row: A is ejected for 30s.
	m := in.Server.Metrics()
	if got := metricValue(t, m, metrics.NameEjections, map[string]string{"target": "a/m"}); got != 1 {
		t.Errorf("%s{a/m} = %v, want 1", metrics.NameEjections, got)
	}
	if g := findMetric(t, m, metrics.NameEjected, map[string]string{"target": "a/m"}); g.GetGauge().GetValue() != 1 {
		t.Errorf("%s{a/m} = %v, want 1", metrics.NameEjected, g)
	}
	list, err := in.Client.ListModels(t.Context(), &llmrelayv1.ListModelsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var smart *llmrelayv1.Model
	for _, md := range list.GetModels() {
		if md.GetId() == "smart" {
			smart = md
		}
	}
	if h := smart.GetTargets()[0].GetHealth(); !h.GetEjected() || !h.GetEjectedUntil().AsTime().Equal(clock.Now().Add(30*time.Second)) || h.GetEjections() != 1 {
		t.Errorf("ListModels: smart's first target health %v, want ejected for 30s", h)
	}

	before := a.Requests()
	clock.Advance(29 * time.Second)
	for range 3 {
		if got := call(); strings.Join(got, "\n") != `final a1 b/m route=smart "w0 "` {
			t.Fatalf("during the cooldown: %v, want B at once", got)
		}
	}
	if a.Requests() != before {
		t.Errorf("A got %d calls during its cooldown", a.Requests()-before)
	}

	down.Store(false)
	clock.Advance(time.Second)
	if got := call(); strings.Join(got, "\n") != `final a1 a/m route=smart "w0 "` {
		t.Fatalf("after the cooldown: %v, want A back", got)
	}
	if g := findMetric(t, m, metrics.NameEjected, map[string]string{"target": "a/m"}); g.GetGauge().GetValue() != 0 {
		t.Errorf("%s{a/m} = %v after the cooldown, want 0", metrics.NameEjected, g)
	}
}

// TestRouteTimeoutCoversEveryTarget: a route's timeout bounds the whole
// call, its fallbacks included: A never answers, and the call ends at the
// route's deadline without reaching B.
func TestRouteTimeoutCoversEveryTarget(t *testing.T) {
	a := openaitest.Start(t, openaitest.Options{FaultFor: func(int, []byte) openaitest.Fault {
		return openaitest.Fault{Kind: openaitest.Stall}
	}})
	b := openaitest.Start(t, openaitest.Options{})
	cfg := parseConfig(t, `
providers:
  - {name: a, kind: openai, base_url: "{A}", models: [m]}
  - {name: b, kind: openai, base_url: "{B}", models: [m]}
routes:
  - name: smart
    targets: [{model: a/m}, {model: b/m}]
    timeout: 1s
`, a.URL(), b.URL())
	in := servertest.Start(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := servertest.Collect(ctx, in.Client, ask("smart", "x"))
	wantStatus(t, err, codes.DeadlineExceeded, "DEADLINE_EXCEEDED", nil)
	if took := time.Since(start); took < time.Second {
		t.Errorf("the call ended after %v, before the route's 1s timeout", took)
	}
	if b.Requests() != 0 {
		t.Errorf("B got %d requests after the deadline", b.Requests())
	}
}

// refuseForbidden refuses calls whose last message says "forbidden", adds
// a message to every other call, and annotates successful calls with the
// provider that answered.
type refuseForbidden struct{}

func (refuseForbidden) Name() string { return "policy" }

func (refuseForbidden) BeforeAttempts(_ context.Context, c *hook.Call) error {
	msgs := c.Request.GetMessages()
	if strings.Contains(msgs[len(msgs)-1].GetContent(), "forbidden") {
		return &hook.Refusal{Reason: "POLICY_VIOLATION", Message: "this topic is not served here"}
	}
	c.Request.Messages = append(msgs, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Content: "appended"})
	return nil
}

func (refuseForbidden) AfterFinal(_ context.Context, c *hook.Call, f *llmrelayv1.Final) {
	c.Annotate("answered_by", f.GetProvider()+"/"+f.GetModel()+" for "+c.Model)
}

func TestHooks(t *testing.T) {
	in := servertest.Start(t, nil, server.WithHooks(refuseForbidden{}))
	events, err := servertest.Collect(t.Context(), in.Client, ask("mock/echo", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	f := events[len(events)-1].GetFinal()
	if f.GetMessage().GetContent() != "appended" {
		t.Errorf("reply %q, want the echo of the message the hook added", f.GetMessage().GetContent())
	}
	if got := f.GetAnnotations()["answered_by"]; got != "mock/echo for mock/echo" {
		t.Errorf("annotations %v, want answered_by from the After hook", f.GetAnnotations())
	}
	events, err = servertest.Collect(t.Context(), in.Client, ask("mock/echo", "something forbidden"))
	checkRouteStream(t, events, nil)
	st := wantStatus(t, err, codes.PermissionDenied, "POLICY_VIOLATION", map[string]string{"hook": "policy"})
	if st.Message() != "this topic is not served here" {
		t.Errorf("message %q", st.Message())
	}
}

// TestListModelsShowsRoutesToKeysThatMaySeeThem: a key allowed a route
// sees it with all its targets, without being allowed the targets.
func TestListModelsShowsRoutesToKeysThatMaySeeThem(t *testing.T) {
	const key = "key-list"
	cfg := parseConfig(t, fmt.Sprintf(`
providers: [{name: eu, kind: mock}, {name: us, kind: mock}]
routes:
  - name: fast
    balance: weighted
    targets: [{model: eu/echo, weight: 3}, {model: us/lorem}]
  - name: hidden
    targets: [{model: eu/echo}]
auth:
  keys:
    - {name: team, sha256: %s, scopes: [models.list], models: [fast]}
`, auth.HashKey(key)))
	in := servertest.Start(t, cfg)
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+key)
	list, err := in.Client.ListModels(ctx, &llmrelayv1.ListModelsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetModels()) != 1 {
		t.Fatalf("models %v, want the route fast only", list.GetModels())
	}
	m := list.GetModels()[0]
	var targets []string
	for _, tg := range m.GetTargets() {
		targets = append(targets, fmt.Sprintf("%s(%s %s) w%d ejected=%v", tg.GetModel(), tg.GetProvider(), tg.GetName(), tg.GetWeight(), tg.GetHealth().GetEjected()))
	}
	if m.GetId() != "fast" || m.GetKind() != llmrelayv1.ModelKind_MODEL_KIND_ROUTE || m.GetBalance() != llmrelayv1.RouteBalance_ROUTE_BALANCE_WEIGHTED ||
		strings.Join(targets, ", ") != "eu/echo(eu echo) w3 ejected=false, us/lorem(us lorem) w1 ejected=false" {
		t.Errorf("route %v with targets %v", m, targets)
	}
}
