package interceptors

import (
	"strings"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
)

func newValidator(t testing.TB) protovalidate.Validator {
	t.Helper()
	v, err := protovalidate.New()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestValidate(t *testing.T) {
	c := serve(t, &fakeService{}, Validate(newValidator(t)))
	tests := []struct {
		name      string
		mutate    func(*llmrelayv1.GenerateRequest)
		wantField string // the first violation's field path
	}{
		{"empty model", func(r *llmrelayv1.GenerateRequest) { r.Model = "" }, "model"},
		{"model without provider", func(r *llmrelayv1.GenerateRequest) { r.Model = "gpt-4o" }, "model"},
		{"model with spaces", func(r *llmrelayv1.GenerateRequest) { r.Model = "mock/echo please" }, "model"},
		{"model too long", func(r *llmrelayv1.GenerateRequest) { r.Model = "mock/" + strings.Repeat("e", 300) }, "model"},
		{"no messages", func(r *llmrelayv1.GenerateRequest) { r.Messages = nil }, "messages"},
		{"unspecified role", func(r *llmrelayv1.GenerateRequest) { r.Messages[0].Role = 0 }, "messages[0].role"},
		{"undefined role", func(r *llmrelayv1.GenerateRequest) { r.Messages[0].Role = 42 }, "messages[0].role"},
		{"content over 1 MiB", func(r *llmrelayv1.GenerateRequest) { r.Messages[0].Content = strings.Repeat("x", 1<<20+1) }, "messages[0].content"},
		{"max_attempts 50", func(r *llmrelayv1.GenerateRequest) { r.Retry = &llmrelayv1.RetryPolicy{MaxAttempts: 50} }, "retry.max_attempts"},
		{"negative backoff", func(r *llmrelayv1.GenerateRequest) {
			r.Retry = &llmrelayv1.RetryPolicy{InitialBackoff: durationpb.New(-1)}
		}, "retry.initial_backoff"},
		{"idle timeout over an hour", func(r *llmrelayv1.GenerateRequest) {
			r.StreamIdleTimeout = &durationpb.Duration{Seconds: 3601}
		}, "stream_idle_timeout"},
		{"request_id not a UUID", func(r *llmrelayv1.GenerateRequest) { r.RequestId = "req-1" }, "request_id"},
		{"too many metadata pairs", func(r *llmrelayv1.GenerateRequest) {
			r.Metadata = map[string]string{}
			for i := range 65 {
				r.Metadata[strings.Repeat("k", i+1)] = "v"
			}
		}, "metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := validRequest()
			tt.mutate(req)
			_, err := c.generate(testCtx(t), req)
			st := wantStatus(t, err, codes.InvalidArgument, ReasonInvalidRequest)
			v := findDetail[*validate.Violations](st)
			if v == nil || len(v.GetViolations()) == 0 {
				t.Fatalf("no buf.validate.Violations in %v", st)
			}
			if got := protovalidate.FieldPathString(v.GetViolations()[0].GetField()); got != tt.wantField {
				t.Errorf("violation on %q, want %q", got, tt.wantField)
			}
		})
	}
	t.Run("valid request passes", func(t *testing.T) {
		req := validRequest()
		req.RequestId = "0b5e4a8e-8f5c-4d69-9a43-3f7b1e7e2a10"
		req.Model = "ollama/llama3.1:8b"
		if _, err := c.generate(testCtx(t), req); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unary", func(t *testing.T) {
		_, err := c.llm.ListModels(testCtx(t), &llmrelayv1.ListModelsRequest{Provider: strings.Repeat("p", 64)})
		wantStatus(t, err, codes.InvalidArgument, ReasonInvalidRequest)
	})
}
