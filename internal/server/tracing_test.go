package server_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/telemetry"
	"github.com/llmrelay/llmrelay/internal/telemetry/otlptest"
)

// The client's trace context: its trace id and the id of its span, which
// the server span must continue.
const (
	clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID  = "00f067aa0ba902b7"
)

// okStream is an OpenAI-compatible stream of "Hello world" with usage.
const okStream = `data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"stop"}]}

data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-test","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}

data: [DONE]

`

// failOnceUpstream answers its first request 503 (a server error, retried)
// and every other one with okStream.
func failOnceUpstream(t *testing.T) *providertest.Upstream {
	return providertest.NewUpstream(t, func(n int, _ *http.Request) providertest.Reply {
		if n == 0 {
			return providertest.Reply{Status: http.StatusServiceUnavailable, Body: []byte(`{"error":{"message":"busy","type":"server_error"}}`)}
		}
		return providertest.Reply{Body: []byte(okStream)}
	})
}

// tracedRelay starts llmrelay with tracing set up from the environment
// (which the test set), one openai-kind provider "up" in front of up, and a
// key named "checkout".
func tracedRelay(t *testing.T, up *providertest.Upstream, capture bool) (*servertest.Instance, *telemetry.Tracing) {
	t.Helper()
	tr, err := telemetry.Setup(t.Context(), os.Getenv, telemetry.Options{ServiceVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL + "/v1", Models: []string{"gpt-test"}}}
	cfg.Auth.Keys = []config.APIKey{{Name: "checkout", SHA256: auth.HashKey(keyFull), Scopes: []string{"generate"}, Models: []string{"*"}}}
	cfg.Tracing.CaptureContent = capture
	// One event per upstream chunk, so llmrelay.deltas counts chunks.
	cfg.Streaming.CoalesceDeltas = false
	return servertest.Start(t, cfg, server.WithTracing(tr)), tr
}

// tracedCall makes one Generate call with the client's trace context and
// key, retrying after 1ms.
func tracedCall(t *testing.T, in *servertest.Instance) {
	t.Helper()
	ctx := metadata.AppendToOutgoingContext(bearer(t.Context(), keyFull),
		"traceparent", "00-"+clientTraceID+"-"+clientSpanID+"-01")
	_, err := servertest.Collect(ctx, in.Client, &llmrelayv1.GenerateRequest{
		Model:    "up/gpt-test",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_SYSTEM, Content: "Be brief."}, {Role: llmrelayv1.Role_ROLE_USER, Content: "Say hello"}},
		Retry:    &llmrelayv1.RetryPolicy{InitialBackoff: durationpb.New(time.Millisecond), MaxBackoff: durationpb.New(time.Millisecond)},
	})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
}

// TestTracesThroughOTLP is the done-when test of traces: one call with two
// attempts (the first fails 503, overloaded) reaches an in-process OTLP receiver, over
// gRPC and over HTTP, as a server span continuing the client's trace, two
// attempt spans and one wait span, children of the server span, with the
// GenAI attributes; and the upstream saw the traceparent of each attempt's
// span.
func TestTracesThroughOTLP(t *testing.T) {
	for _, protocol := range []string{telemetry.ProtocolGRPC, telemetry.ProtocolHTTPProtobuf} {
		t.Run(protocol, func(t *testing.T) {
			recv, endpoint := otlptest.StartGRPC(t)
			if protocol == telemetry.ProtocolHTTPProtobuf {
				recv, endpoint = otlptest.StartHTTP(t)
			}
			t.Setenv(telemetry.EnvEndpoint, endpoint)
			t.Setenv(telemetry.EnvProtocol, protocol)
			t.Setenv("OTEL_SERVICE_NAME", "relay-under-test")
			up := failOnceUpstream(t)
			in, tr := tracedRelay(t, up, false)

			tracedCall(t, in)
			spans := exported(t, tr, recv, 4)
			var srv otlptest.Span
			var attempts, waits []otlptest.Span
			for _, s := range spans {
				switch {
				case s.GetName() == "llmrelay.v1.LLMService/Generate":
					srv = s
				case s.GetName() == "chat gpt-test":
					attempts = append(attempts, s)
				case s.GetName() == telemetry.SpanWait:
					waits = append(waits, s)
				default:
					t.Errorf("unexpected span %q", s.GetName())
				}
			}
			if srv.Span == nil || len(attempts) != 2 || len(waits) != 1 {
				t.Fatalf("got a server span: %v, %d attempt spans, %d wait spans; want 1, 2, 1", srv.Span != nil, len(attempts), len(waits))
			}
			if srv.TraceID() != clientTraceID || srv.ParentID() != clientSpanID {
				t.Errorf("server span in trace %s under %s, want the client's %s under %s", srv.TraceID(), srv.ParentID(), clientTraceID, clientSpanID)
			}
			if srv.Service != "relay-under-test" {
				t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", srv.Service)
			}
			wantAttrs(t, "server span", srv, map[string]any{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
				"gen_ai.request.model": "gpt-test", "gen_ai.response.model": "gpt-test",
				"gen_ai.usage.input_tokens": int64(7), "gen_ai.usage.output_tokens": int64(2),
				"gen_ai.response.finish_reasons": []string{"stop"},
				"llmrelay.attempts":              int64(2), "llmrelay.api_key.name": "checkout", "llmrelay.model": "up/gpt-test",
			})
			for _, s := range append(attempts, waits...) {
				if s.TraceID() != clientTraceID || s.ParentID() != srv.SpanID() {
					t.Errorf("%s span in trace %s under %s, want a child of the server span %s", s.GetName(), s.TraceID(), s.ParentID(), srv.SpanID())
				}
			}
			first, second := attempts[0], attempts[1]
			if n, _ := first.Attr("llmrelay.attempt"); n.GetIntValue() != 1 {
				first, second = second, first
			}
			wantAttrs(t, "failed attempt", first, map[string]any{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test",
				"llmrelay.attempt": int64(1), "llmrelay.provider": "up",
				"error.type": "overloaded", "llmrelay.retry.reason": "overloaded", "llmrelay.retry.discard_partial": false,
			})
			if _, ok := first.Attr("gen_ai.response.model"); ok {
				t.Error("the failed attempt has a gen_ai.response.model: no model answered it")
			}
			wantAttrs(t, "successful attempt", second, map[string]any{
				"llmrelay.attempt": int64(2), "gen_ai.response.model": "gpt-test",
				"gen_ai.usage.input_tokens": int64(7), "gen_ai.usage.output_tokens": int64(2),
				"gen_ai.response.finish_reasons": []string{"stop"}, "llmrelay.deltas": int64(2),
			})
			wantAttrs(t, "wait", waits[0], map[string]any{
				"llmrelay.retry.next_attempt": int64(2), "llmrelay.retry.reason": "overloaded",
				"llmrelay.retry.fallback": false, "llmrelay.retry.next_provider": "up", "llmrelay.retry.next_model": "gpt-test",
			})
			for _, s := range spans {
				for _, key := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"} {
					if _, ok := s.Attr(key); ok {
						t.Errorf("%s records %s without capture_content", s.GetName(), key)
					}
				}
			}

			reqs := up.Requests()
			if len(reqs) != 2 {
				t.Fatalf("the upstream saw %d requests, want 2", len(reqs))
			}
			for i, a := range []otlptest.Span{first, second} {
				want := "00-" + clientTraceID + "-" + a.SpanID() + "-01"
				if got := reqs[i].Header.Get("traceparent"); got != want {
					t.Errorf("upstream request %d traceparent %q, want %q (attempt %d's span)", i, got, want, i+1)
				}
			}
		})
	}
}

// TestTraceContentOptIn: with tracing.capture_content the attempt spans
// carry the prompt, the system instructions and the reply in the GenAI
// conventions' shapes.
func TestTraceContentOptIn(t *testing.T) {
	recv, endpoint := otlptest.StartGRPC(t)
	t.Setenv(telemetry.EnvEndpoint, endpoint)
	t.Setenv(telemetry.EnvProtocol, telemetry.ProtocolGRPC)
	in, tr := tracedRelay(t, failOnceUpstream(t), true)
	tracedCall(t, in)
	spans := exported(t, tr, recv, 4)
	for _, s := range spans {
		if n, _ := s.Attr("llmrelay.attempt"); n.GetIntValue() != 2 {
			continue
		}
		wantAttrs(t, "attempt", s, map[string]any{
			"gen_ai.system_instructions": `[{"type":"text","content":"Be brief."}]`,
			"gen_ai.input.messages":      `[{"role":"user","parts":[{"type":"text","content":"Say hello"}]}]`,
			"gen_ai.output.messages":     `[{"role":"assistant","parts":[{"type":"text","content":"Hello world"}],"finish_reason":"stop"}]`,
		})
		return
	}
	t.Fatal("no span of attempt 2")
}

// TestTracingOff: without OTEL_* variables nothing is traced and no trace
// context goes upstream, even when the client sent one.
func TestTracingOff(t *testing.T) {
	for _, v := range []string{telemetry.EnvEndpoint, telemetry.EnvTracesEndpoint, telemetry.EnvTracesExporter} {
		t.Setenv(v, "")
	}
	up := failOnceUpstream(t)
	in, tr := tracedRelay(t, up, true)
	if tr.Enabled() {
		t.Fatal("tracing is on without OTEL_* variables")
	}
	tracedCall(t, in)
	for i, r := range up.Requests() {
		if tp := r.Header.Get("traceparent"); tp != "" {
			t.Errorf("upstream request %d got traceparent %q with tracing off", i, tp)
		}
	}
}

// otlpTracing starts an OTLP receiver over gRPC and tracing set up from
// the environment to export to it, shut down when the test ends.
func otlpTracing(t testing.TB) (*otlptest.Receiver, *telemetry.Tracing) {
	t.Helper()
	recv, endpoint := otlptest.StartGRPC(t)
	t.Setenv(telemetry.EnvEndpoint, endpoint)
	t.Setenv(telemetry.EnvProtocol, telemetry.ProtocolGRPC)
	tr, err := telemetry.Setup(t.Context(), os.Getenv, telemetry.Options{ServiceVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return recv, tr
}

// exported flushes tr's spans and returns what recv received once it has
// at least n.
func exported(t *testing.T, tr *telemetry.Tracing, recv *otlptest.Receiver, n int) []otlptest.Span {
	t.Helper()
	if err := tr.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a guard against hangs only
	defer cancel()
	spans, err := recv.Wait(ctx, func(s []otlptest.Span) bool { return len(s) >= n })
	if err != nil {
		t.Fatalf("%d spans received, want %d: %v", len(spans), n, err)
	}
	return spans
}

// wantAttrs checks span's attributes against want (string, int64, bool or
// []string values).
func wantAttrs(t *testing.T, what string, span otlptest.Span, want map[string]any) {
	t.Helper()
	for key, w := range want {
		v, ok := span.Attr(key)
		if !ok {
			t.Errorf("%s: no attribute %s", what, key)
			continue
		}
		var got any
		switch w.(type) {
		case string:
			got = v.GetStringValue()
		case int64:
			got = v.GetIntValue()
		case bool:
			got = v.GetBoolValue()
		case []string:
			var list []string
			for _, e := range v.GetArrayValue().GetValues() {
				list = append(list, e.GetStringValue())
			}
			if strings.Join(list, ",") != strings.Join(w.([]string), ",") {
				t.Errorf("%s: %s = %v, want %v", what, key, list, w)
			}
			continue
		}
		if got != w {
			t.Errorf("%s: %s = %v, want %v", what, key, got, w)
		}
	}
}

// TestTraceOfAFallback: a route whose first target answers 404 moves the
// call to its second: the wait span says fallback and where the next
// attempt goes, the server span names the route, and the metrics count the
// call under the route with the target that served it.
func TestTraceOfAFallback(t *testing.T) {
	recv, tr := otlpTracing(t)
	gone := providertest.Replay(t, providertest.Reply{Status: http.StatusNotFound, Body: []byte(`{"error":{"message":"no such model","type":"invalid_request_error","code":"model_not_found"}}`)})
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "gone", Kind: "openai", BaseURL: gone.URL + "/v1", Models: []string{"old"}}, {Name: "mock", Kind: "mock"}}
	cfg.Routes = []route.Config{{Name: "smart", Targets: []route.TargetConfig{{Model: "gone/old"}, {Model: "mock/echo"}}}}
	in := servertest.Start(t, cfg, server.WithTracing(tr))

	req := echoRequest("hello there")
	req.Model = "smart"
	if _, err := servertest.Collect(t.Context(), in.Client, req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	spans := exported(t, tr, recv, 4)
	var found bool
	for _, s := range spans {
		switch s.GetName() {
		case telemetry.SpanWait:
			found = true
			wantAttrs(t, "wait", s, map[string]any{
				"llmrelay.retry.fallback": true, "llmrelay.retry.next_provider": "mock", "llmrelay.retry.next_model": "echo",
				"llmrelay.retry.next_attempt": int64(2),
			})
		case "llmrelay.v1.LLMService/Generate":
			wantAttrs(t, "server span", s, map[string]any{
				"llmrelay.route": "smart", "llmrelay.model": "smart", "llmrelay.provider": "mock", "gen_ai.response.model": "echo",
			})
		}
	}
	if !found {
		t.Error("no wait span")
	}
	body := in.Server.Metrics().Text()
	for _, want := range []string{
		`gen_ai_server_request_duration_seconds_count{error_type="",gen_ai_operation_name="chat",interface="grpc",key="",model="echo",provider="mock",route="smart",team=""} 1`,
		`llmrelay_tokens_total{gen_ai_operation_name="chat",interface="grpc",key="",model="echo",provider="mock",route="smart",team="",type="output"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestTracesOfHTTPDoors: a call through an HTTP door has a server span as a
// gRPC call has, continuing the trace context of the request's
// traceparent, named after its route with the HTTP conventions'
// attributes and the call's GenAI ones, and the engine's attempt and wait
// spans are its children. Before, such a call had no server span: its
// attempt spans were roots of traces of their own, the client's trace
// context was dropped, and a refused call left no span at all.
func TestTracesOfHTTPDoors(t *testing.T) {
	recv, endpoint := otlptest.StartGRPC(t)
	t.Setenv(telemetry.EnvEndpoint, endpoint)
	t.Setenv(telemetry.EnvProtocol, telemetry.ProtocolGRPC)
	in, tr := tracedRelay(t, failOnceUpstream(t), false)
	base := in.HTTP(t)

	post := func(key string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/v1/chat/completions",
			strings.NewReader(`{"model":"up/gpt-test","messages":[{"role":"user","content":"Say hello"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("traceparent", "00-"+clientTraceID+"-"+clientSpanID+"-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if status := post(keyFull); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	if status := post("sk-not-a-key"); status != http.StatusUnauthorized {
		t.Fatalf("a wrong key: status %d", status)
	}
	// Two server spans (the call, the refusal), two attempts, one wait.
	spans := exported(t, tr, recv, 5)
	var servers, attempts, waits []otlptest.Span
	for _, s := range spans {
		switch s.GetName() {
		case "POST /v1/chat/completions":
			servers = append(servers, s)
		case "chat gpt-test":
			attempts = append(attempts, s)
		case telemetry.SpanWait:
			waits = append(waits, s)
		default:
			t.Errorf("unexpected span %q", s.GetName())
		}
	}
	if len(servers) != 2 || len(attempts) != 2 || len(waits) != 1 {
		t.Fatalf("%d server spans, %d attempt spans, %d wait spans; want 2, 2, 1", len(servers), len(attempts), len(waits))
	}
	srv, refused := servers[0], servers[1]
	if st, _ := srv.Attr("http.response.status_code"); st.GetIntValue() != http.StatusOK {
		srv, refused = refused, srv
	}
	for _, s := range servers {
		if s.GetKind() != tracepb.Span_SPAN_KIND_SERVER || s.TraceID() != clientTraceID || s.ParentID() != clientSpanID {
			t.Errorf("server span of kind %v in trace %s under %s, want a server span continuing the client's %s under %s",
				s.GetKind(), s.TraceID(), s.ParentID(), clientTraceID, clientSpanID)
		}
	}
	wantAttrs(t, "server span", srv, map[string]any{
		"http.request.method": "POST", "http.route": "/v1/chat/completions", "url.path": "/v1/chat/completions", "url.scheme": "http",
		"http.response.status_code": int64(200), "network.peer.address": "127.0.0.1",
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
		"gen_ai.request.model": "gpt-test", "gen_ai.response.model": "gpt-test",
		"gen_ai.usage.input_tokens": int64(7), "gen_ai.usage.output_tokens": int64(2),
		"gen_ai.response.finish_reasons": []string{"stop"},
		"llmrelay.attempts":              int64(2), "llmrelay.api_key.name": "checkout", "llmrelay.model": "up/gpt-test",
	})
	if srv.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Error("the successful call's span is an error")
	}
	wantAttrs(t, "refused call's span", refused, map[string]any{"http.route": "/v1/chat/completions", "http.response.status_code": int64(401)})
	for _, s := range append(attempts, waits...) {
		if s.TraceID() != clientTraceID || s.ParentID() != srv.SpanID() {
			t.Errorf("%s span in trace %s under %s, want a child of the server span %s", s.GetName(), s.TraceID(), s.ParentID(), srv.SpanID())
		}
	}
}
