package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

func echoRequest(text string) *llmrelayv1.GenerateRequest {
	return &llmrelayv1.GenerateRequest{
		Model:    "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: text}},
	}
}

func withOptions(t *testing.T, req *llmrelayv1.GenerateRequest, opts map[string]any) *llmrelayv1.GenerateRequest {
	t.Helper()
	s, err := structpb.NewStruct(opts)
	if err != nil {
		t.Fatal(err)
	}
	req.ProviderOptions = s
	return req
}

func TestGenerateStreamsDeltasThenOneFinal(t *testing.T) {
	in := servertest.Start(t, nil)
	const input = "hello brave new world"
	events, err := servertest.Collect(t.Context(), in.Client, echoRequest(input))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(events) != 5 {
		t.Fatalf("got %d events, want 4 deltas and a final: %v", len(events), events)
	}
	var text strings.Builder
	for i, ev := range events {
		if ev.GetSequence() != uint64(i+1) {
			t.Errorf("event %d has sequence %d, want %d", i, ev.GetSequence(), i+1)
		}
		if ev.GetAttempt() != 1 {
			t.Errorf("event %d has attempt %d, want 1", i, ev.GetAttempt())
		}
		if i < 4 {
			if ev.GetDelta() == nil {
				t.Fatalf("event %d is %T, want a delta", i, ev.GetEvent())
			}
			text.WriteString(ev.GetDelta().GetText())
		}
	}
	if text.String() != input {
		t.Errorf("deltas concatenate to %q, want %q", text.String(), input)
	}
	final := events[4].GetFinal()
	if final == nil {
		t.Fatalf("last event is %T, want final", events[4].GetEvent())
	}
	if got := final.GetMessage().GetContent(); got != input {
		t.Errorf("final content %q, want %q", got, input)
	}
	if final.GetMessage().GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
		t.Errorf("final role %v, want assistant", final.GetMessage().GetRole())
	}
	if final.GetAttempts() != 1 || final.GetProvider() != "mock" || final.GetModel() != "echo" {
		t.Errorf("final attempts/provider/model = %d/%q/%q, want 1/mock/echo", final.GetAttempts(), final.GetProvider(), final.GetModel())
	}
	if final.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("finish reason %v, want STOP", final.GetFinishReason())
	}
	if u := final.GetUsage(); u.GetInputTokens() != 4 || u.GetOutputTokens() != 4 {
		t.Errorf("usage %v, want 4 in, 4 out", u)
	}
}

func TestGenerateLorem(t *testing.T) {
	in := servertest.Start(t, nil)
	req := withOptions(t, echoRequest("anything"), map[string]any{"words": 7})
	req.Model = "mock/lorem"
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatal(err)
	}
	final := events[len(events)-1].GetFinal()
	if got := len(strings.Fields(final.GetMessage().GetContent())); got != 7 || len(events) != 8 {
		t.Errorf("lorem with words=7 gave %d words in %d events, want 7 words in 8 events", got, len(events))
	}
}

func TestGenerateRejectsBadRequestsWithTypedErrors(t *testing.T) {
	in := servertest.Start(t, nil)
	tests := []struct {
		name      string
		req       *llmrelayv1.GenerateRequest
		reason    string
		wantField string
	}{
		{"unknown provider", &llmrelayv1.GenerateRequest{Model: "nope/x", Messages: echoRequest("x").Messages}, "UNKNOWN_PROVIDER", "model"},
		{"unknown mock model", &llmrelayv1.GenerateRequest{Model: "mock/gpt-5", Messages: echoRequest("x").Messages}, "UNKNOWN_MODEL", "model"},
		{"malformed fault list", withOptions(t, echoRequest("x"), map[string]any{"faults": []any{map[string]any{"status": 503}, map[string]any{"drop_after": -1}}}), "INVALID_PROVIDER_OPTIONS", "provider_options.faults[1].drop_after"},
		{"faults not a list", withOptions(t, echoRequest("x"), map[string]any{"faults": "503"}), "INVALID_PROVIDER_OPTIONS", "provider_options.faults"},
		{"unknown option", withOptions(t, echoRequest("x"), map[string]any{"fautls": []any{}}), "INVALID_PROVIDER_OPTIONS", "provider_options.fautls"},
		{"parts on a system message", &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_SYSTEM, Content: "x",
			Parts: []*llmrelayv1.Part{{Part: &llmrelayv1.Part_Text{Text: "x"}}}}, echoRequest("x").Messages[0]}}, "INVALID_REQUEST", "messages[0]"},
		{"a tool call part on a user message", &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "x",
			Parts: []*llmrelayv1.Part{{Part: &llmrelayv1.Part_Text{Text: "x"}}, {Part: &llmrelayv1.Part_ToolCall{}}}}}}, "INVALID_REQUEST", "messages[0]"},
		{"an image on an assistant message", &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{echoRequest("x").Messages[0],
			{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Part: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/a.png"}}}}}}}}, "INVALID_REQUEST", "messages[1]"},
		{"a user message with an image whose text parts fall short of its content", &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "look",
			Parts: []*llmrelayv1.Part{{Part: &llmrelayv1.Part_Text{Text: "lo"}}, {Part: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/a.png"}}}}}}}}, "INVALID_REQUEST", "messages[0].parts"},
		{"a provider tool block on a user message", &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "x",
			ProviderTools: []*llmrelayv1.ProviderToolBlock{{Kind: "server_tool_use", Format: "anthropic"}}}}}, "INVALID_REQUEST", "messages[0]"},
		{"parts that do not add up to the content", &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{echoRequest("x").Messages[0],
			{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: "hello", Parts: []*llmrelayv1.Part{{Part: &llmrelayv1.Part_Text{Text: "hell"}}}}}}, "INVALID_REQUEST", "messages[1].parts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			events, err := servertest.Collect(t.Context(), in.Client, tc.req)
			if len(events) != 0 {
				t.Errorf("got %d events before the error, want none", len(events))
			}
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument {
				t.Fatalf("code %v (%v), want InvalidArgument", st.Code(), err)
			}
			var info *errdetails.ErrorInfo
			var br *errdetails.BadRequest
			for _, d := range st.Details() {
				switch d := d.(type) {
				case *errdetails.ErrorInfo:
					info = d
				case *errdetails.BadRequest:
					br = d
				}
			}
			if info == nil || info.GetReason() != tc.reason || info.GetDomain() != "llmrelay" {
				t.Errorf("ErrorInfo %v, want reason %s in domain llmrelay", info, tc.reason)
			}
			if br == nil || len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != tc.wantField {
				t.Errorf("BadRequest %v, want one violation of %s", br, tc.wantField)
			}
		})
	}
}

// TestUnknownModelErrorsNameOnlyWhatWasAskedFor: resolution errors do not
// list the configured providers or models, which a caller's key may not be
// allowed to see.
func TestUnknownModelErrorsNameOnlyWhatWasAskedFor(t *testing.T) {
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "mock", Kind: "mock"}, {Name: "internal-finance", Kind: "mock", Models: []string{"echo"}}}
	in := servertest.Start(t, cfg)
	for _, model := range []string{"nope/x", "mock/gpt-5", "internal-finance/lorem"} {
		req := echoRequest("x")
		req.Model = model
		_, err := servertest.Collect(t.Context(), in.Client, req)
		msg := status.Convert(err).Message()
		if !strings.Contains(msg, strings.SplitN(model, "/", 2)[0]) {
			t.Errorf("%s: message %q does not name what was asked for", model, msg)
		}
		for _, secret := range []string{"echo", "lorem", "internal-finance"} {
			if !strings.Contains(model, secret) && strings.Contains(msg, secret) {
				t.Errorf("%s: message %q names %q, which the caller did not ask for", model, msg, secret)
			}
		}
	}
}

func TestHealthAndReflection(t *testing.T) {
	in := servertest.Start(t, nil)
	hc := healthpb.NewHealthClient(in.Conn)
	for _, svc := range []string{"", "llmrelay.v1.LLMService"} {
		resp, err := hc.Check(t.Context(), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health of %q: %v, %v; want SERVING", svc, resp.GetStatus(), err)
		}
	}
	rc, err := rpb.NewServerReflectionClient(in.Conn).ServerReflectionInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	rc.CloseSend()
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	for _, want := range []string{"llmrelay.v1.LLMService", "grpc.health.v1.Health"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("reflection lists %v, missing %s", names, want)
		}
	}
}

func TestListModels(t *testing.T) {
	in := servertest.Start(t, nil)
	resp, err := in.Client.ListModels(t.Context(), &llmrelayv1.ListModelsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range resp.GetModels() {
		ids = append(ids, m.GetId())
	}
	if strings.Join(ids, ",") != "mock/echo,mock/lorem,mock/think" {
		t.Errorf("models %v, want mock/echo, mock/lorem and mock/think", ids)
	}
}

// slowEcho asks for an echo paced at delay per word.
func slowEcho(t *testing.T, words int, delay time.Duration) *llmrelayv1.GenerateRequest {
	req := withOptions(t, echoRequest(strings.Repeat("w ", words)), map[string]any{"chunk_delay_ms": delay.Milliseconds()})
	return req
}

func TestShutdownDrainsInFlightStreams(t *testing.T) {
	cfg := config.Default()
	cfg.ShutdownGrace = 30 * time.Second
	in := servertest.Start(t, cfg)
	stream, err := in.Client.Generate(t.Context(), slowEcho(t, 10, 30*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil { // the call is in flight
		t.Fatal(err)
	}
	watchCtx, stopWatch := context.WithCancel(t.Context())
	watch, err := healthpb.NewHealthClient(in.Conn).Watch(watchCtx, &healthpb.HealthCheckRequest{Service: "llmrelay.v1.LLMService"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := watch.Recv(); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health before shutdown: %v, %v", st.GetStatus(), err)
	}
	done := make(chan struct{})
	go func() {
		in.Server.Shutdown(context.Background())
		close(done)
	}()

	// Health turns NOT_SERVING while the stream still runs.
	if st, err := watch.Recv(); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health after shutdown began: %v, %v; want NOT_SERVING", st.GetStatus(), err)
	}
	stopWatch()

	var final *llmrelayv1.Final
	for {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("in-flight stream ended with %v before its final", err)
		}
		if final = ev.GetFinal(); final != nil {
			break
		}
	}
	if !strings.HasPrefix(final.GetMessage().GetContent(), "w w w") {
		t.Errorf("final %q, want the whole echo", final.GetMessage().GetContent())
	}
	<-done
	// New calls are refused once the server stopped.
	_, err = servertest.Collect(t.Context(), in.Client, echoRequest("late"))
	if status.Code(err) != codes.Unavailable {
		t.Errorf("call after shutdown: %v, want Unavailable", err)
	}
}

func TestShutdownCutsOffStreamsAfterGrace(t *testing.T) {
	cfg := config.Default()
	cfg.ShutdownGrace = 50 * time.Millisecond
	in := servertest.Start(t, cfg)
	stream, err := in.Client.Generate(t.Context(), slowEcho(t, 1000, 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { in.Server.Shutdown(context.Background()) })
	var end error
	for end == nil {
		var ev *llmrelayv1.GenerateEvent
		ev, end = stream.Recv()
		if ev.GetFinal() != nil {
			t.Fatal("got a final from a stream that cannot finish within the grace period")
		}
	}
	wg.Wait()
	st := status.Convert(end)
	if st.Code() != codes.Unavailable {
		t.Fatalf("stream ended with %v, want Unavailable", end)
	}
	var reason string
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			reason = info.GetReason()
		}
	}
	if reason != "SERVER_SHUTTING_DOWN" {
		t.Errorf("reason %q, want SERVER_SHUTTING_DOWN", reason)
	}
}
