package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// TestReasoningFormatIsAName: a reasoning block's format is a short
// lower-case name, as llmrelay writes them. One a client wrote that could
// break up the final's comma-separated reasoning.dropped annotation, or
// carry control characters into logs, is refused before any attempt:
// INVALID_ARGUMENT naming messages[1].reasoning[0].format over gRPC, a 400
// invalid_request_error naming messages[1] through the Anthropic door
// (where a foreign block's format travels in its signature,
// "llmrelay/<format>/..."). A
// well-formed format the mock does not take is sent on and named in the
// annotation as it is.
func TestReasoningFormatIsAName(t *testing.T) {
	in := servertest.Start(t, nil)
	base := in.HTTP(t)
	request := func(format string) *llmrelayv1.GenerateRequest {
		return &llmrelayv1.GenerateRequest{
			Model: "mock/echo",
			Messages: []*llmrelayv1.Message{
				{Role: llmrelayv1.Role_ROLE_USER, Content: "Hello?"},
				{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: "Hello.", Reasoning: []*llmrelayv1.Reasoning{{Text: "Greet back.", Format: format}}},
				{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"},
			},
		}
	}
	for name, format := range map[string]string{
		"a comma":             "anthropic,gemini",
		"a space":             "gemini ",
		"a control character": "gemini\x1b[2J",
		"a newline":           "gemini\nlevel=error",
		"upper case":          "Gemini",
		"65 characters":       strings.Repeat("a", 65),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := servertest.Collect(t.Context(), in.Client, request(format))
			st := status.Convert(err)
			if field, want := fieldOf(st), "messages[1].reasoning[0].format"; st.Code() != codes.InvalidArgument || reasonOf(st) != "INVALID_REQUEST" || field != want {
				t.Errorf("gRPC: error %v (field %q), want INVALID_ARGUMENT INVALID_REQUEST on %s", err, field, want)
			}

			sig, _ := json.Marshal("llmrelay/" + format + "/c2ln")
			body := `{"model":"mock/echo","max_tokens":64,"messages":[{"role":"user","content":"Hello?"},` +
				`{"role":"assistant","content":[{"type":"thinking","thinking":"Greet back.","signature":` + string(sig) + `},{"type":"text","text":"Hello."}]},` +
				`{"role":"user","content":"hi"}]}`
			code, body := postMessagesBody(t, base, body)
			if typ, msg := anthropicError(t, code, body); code != http.StatusBadRequest || typ != "invalid_request_error" || !strings.HasPrefix(msg, "messages[1]: ") {
				t.Errorf("/v1/messages: %d %s %q, want 400 invalid_request_error naming messages[1]", code, typ, msg)
			}
		})
	}
	t.Run("a well-formed format", func(t *testing.T) {
		events, err := servertest.Collect(t.Context(), in.Client, request("acme.thoughts-v2"))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if got := final(t, events).GetAnnotations()[engine.AnnotationReasoningDropped]; got != "acme.thoughts-v2" {
			t.Errorf("%s %q, want the block's format", engine.AnnotationReasoningDropped, got)
		}
	})
}
