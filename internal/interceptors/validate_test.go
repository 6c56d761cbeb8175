package interceptors

import (
	"slices"
	"strings"
	"testing"

	"buf.build/go/protovalidate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
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
		{"route name with a dot", func(r *llmrelayv1.GenerateRequest) { r.Model = "gpt-4.1" }, "model"},
		{"fallback model with spaces", func(r *llmrelayv1.GenerateRequest) { r.FallbackModels = []string{"mock/echo", "mock/echo please"} }, "fallback_models[1]"},
		{"nine fallback models", func(r *llmrelayv1.GenerateRequest) { r.FallbackModels = slices.Repeat([]string{"mock/echo"}, 9) }, "fallback_models"},
		{"model with spaces", func(r *llmrelayv1.GenerateRequest) { r.Model = "mock/echo please" }, "model"},
		{"model too long", func(r *llmrelayv1.GenerateRequest) { r.Model = "mock/" + strings.Repeat("e", 300) }, "model"},
		{"no messages", func(r *llmrelayv1.GenerateRequest) { r.Messages = nil }, "messages"},
		{"unspecified role", func(r *llmrelayv1.GenerateRequest) { r.Messages[0].Role = 0 }, "messages[0].role"},
		{"undefined role", func(r *llmrelayv1.GenerateRequest) { r.Messages[0].Role = 42 }, "messages[0].role"},
		{"model over 256 characters", func(r *llmrelayv1.GenerateRequest) { r.Model = "mock/" + strings.Repeat("x", 252) }, "model"},
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
			v := findDetail[*errdetails.BadRequest](st)
			if v == nil || len(v.GetFieldViolations()) == 0 {
				t.Fatalf("no google.rpc.BadRequest in %v", st)
			}
			if got := v.GetFieldViolations()[0].GetField(); got != tt.wantField {
				t.Errorf("violation on %q, want %q", got, tt.wantField)
			}
		})
	}
	t.Run("unary", func(t *testing.T) {
		_, err := c.llm.ListModels(testCtx(t), &llmrelayv1.ListModelsRequest{Provider: strings.Repeat("p", 64)})
		wantStatus(t, err, codes.InvalidArgument, ReasonInvalidRequest)
	})
	t.Run("valid request passes", func(t *testing.T) {
		req := validRequest()
		req.RequestId = "0b5e4a8e-8f5c-4d69-9a43-3f7b1e7e2a10"
		req.Model = "ollama/llama3.1:8b"
		if _, err := c.generate(testCtx(t), req); err != nil {
			t.Fatal(err)
		}
		req.Model, req.FallbackModels = "smart", []string{"fast_eu", "openai/gpt-4.1"}
		if _, err := c.generate(testCtx(t), req); err != nil {
			t.Fatalf("a route name with fallback models: %v", err)
		}
	})
}

// TestValidationMessages pins the messages a person reads where
// protovalidate's own would show a regular expression or say two things
// about one mistake: each mistake is exactly one violation, in words.
func TestValidationMessages(t *testing.T) {
	const modelMsg = "must be a route name like smart, or <provider>/<model> like mock/echo or openai/gpt-4o: a lower-case name, " +
		"and for a provider's model a slash, then the provider's model name (letters, digits and . _ : / @ + -)"
	const roleMsg = "must be ROLE_SYSTEM, ROLE_USER, ROLE_ASSISTANT or ROLE_TOOL"
	c := serve(t, &fakeService{}, Validate(newValidator(t)))
	tests := []struct {
		name        string
		mutate      func(*llmrelayv1.GenerateRequest)
		field, rule string
		message     string
	}{
		{"empty model", func(r *llmrelayv1.GenerateRequest) { r.Model = "" }, "model", "required", "value is required"},
		{"route name with a dot", func(r *llmrelayv1.GenerateRequest) { r.Model = "gpt-4.1" }, "model", "model.format", modelMsg},
		{"fallback model with a space", func(r *llmrelayv1.GenerateRequest) { r.FallbackModels = []string{"mock/echo please"} }, "fallback_models[0]", "fallback_models.format",
			"must be a route name like smart, or <provider>/<model> like mock/echo or openai/gpt-4o"},
		{"upper-case provider", func(r *llmrelayv1.GenerateRequest) { r.Model = "OpenAI/gpt-4o" }, "model", "model.format", modelMsg},
		{"model with a space", func(r *llmrelayv1.GenerateRequest) { r.Model = "mock/echo please" }, "model", "model.format", modelMsg},
		{"unspecified role", func(r *llmrelayv1.GenerateRequest) { r.Messages[0].Role = 0 }, "messages[0].role", "role.defined", roleMsg},
		{"undefined role", func(r *llmrelayv1.GenerateRequest) { r.Messages[0].Role = 42 }, "messages[0].role", "role.defined", roleMsg},
		{"tool name with a space", func(r *llmrelayv1.GenerateRequest) {
			r.Tools = []*llmrelayv1.Tool{{Name: "get weather"}}
		}, "tools[0].name", "tool.name", "must be 1 to 64 letters, digits, _ or -, like get_weather"},
		{"schema name with a dot", func(r *llmrelayv1.GenerateRequest) {
			r.ResponseFormat = &llmrelayv1.ResponseFormat{JsonSchema: &structpb.Struct{}, Name: "weather.report"}
		}, "response_format.name", "response_format.name", "must be up to 64 letters, digits, _ or -, like weather_report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := validRequest()
			tt.mutate(req)
			_, err := c.generate(testCtx(t), req)
			st := wantStatus(t, err, codes.InvalidArgument, ReasonInvalidRequest)
			vs := findDetail[*errdetails.BadRequest](st).GetFieldViolations()
			if len(vs) != 1 {
				t.Fatalf("%d violations, want exactly one: %v", len(vs), vs)
			}
			v := vs[0]
			if v.GetField() != tt.field || v.GetReason() != tt.rule || v.GetDescription() != tt.message {
				t.Errorf("violation %s [%s] %q\nwant      %s [%s] %q", v.GetField(), v.GetReason(), v.GetDescription(), tt.field, tt.rule, tt.message)
			}
			if strings.Contains(st.Message(), "^[") {
				t.Errorf("the status message shows a regular expression: %s", st.Message())
			}
		})
	}
}
