package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

func decode(body string) pt.Result { return pt.Decode(body, "", &decoder{}) }

func event(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

func TestToolWithoutArgumentsGetsAnEmptyObject(t *testing.T) {
	r := decode(event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"now","input":{}}}`) +
		event("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`) +
		event("message_stop", `{"type":"message_stop"}`))
	if r.Err != nil || len(r.ToolCalls) != 1 || r.ToolCalls[0].Arguments != "{}" || r.Finish != provider.FinishToolCalls {
		t.Errorf("got %+v finish %d err %v, want one call with {} arguments", r.ToolCalls, r.Finish, r.Err)
	}
}

func TestUnrelayedBlocksAndUnknownEventsAreSkipped(t *testing.T) {
	r := decode(event("message_start", `{"type":"message_start","message":{"usage":{"input_tokens":3,"cache_read_input_tokens":7,"output_tokens":1}}}`) +
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`) +
		event("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"hi"}}`) +
		event("some_future_event", `{"type":"some_future_event"}`) +
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":2}}`) +
		event("message_stop", `{"type":"message_stop"}`))
	if r.Err != nil || r.Text != "hi" || r.Finish != provider.FinishLength {
		t.Errorf("got %q finish %d err %v, want the text only", r.Text, r.Finish, r.Err)
	}
	if r.Usage != (provider.Usage{InputTokens: 10, OutputTokens: 2, CachedInputTokens: 7}) {
		t.Errorf("usage %+v, want cached input counted and the last output count", r.Usage)
	}
}

func TestErrorEventTypes(t *testing.T) {
	for typ, status := range map[string]int{
		"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429, "invalid_request_error": 400,
		"authentication_error": 401, "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
		"timeout_error": 504, "billing_error": 402, "brand_new_error": 0,
	} {
		r := decode(event("error", `{"type": "error", "error": {"type": "`+typ+`", "message": "m"}}`))
		pe := pt.ProviderError(r.Err)
		if pe == nil || pe.Kind != provider.KindInStream || pe.Status != status || pe.Type != typ || pe.Message != "m" {
			t.Errorf("%s: got %+v, want in-stream status %d", typ, pe, status)
		}
	}
}

func TestErrorBody(t *testing.T) {
	var e provider.Error
	parseErrorBody([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`), &e)
	if e.Type != "overloaded_error" || e.Message != "Overloaded" {
		t.Errorf("got %+v", e)
	}
}

func TestToolChoiceAndMerging(t *testing.T) {
	for mode, want := range map[provider.ToolChoiceMode]string{
		provider.ToolChoiceAuto: `{"type":"auto"}`, provider.ToolChoiceNone: `{"type":"none"}`,
		provider.ToolChoiceRequired: `{"type":"any"}`, provider.ToolChoiceTool: `{"type":"tool","name":"f"}`,
	} {
		if got, _ := json.Marshal(newToolChoice(provider.ToolChoice{Mode: mode, Name: "f"})); string(got) != want {
			t.Errorf("mode %d = %s, want %s", mode, got, want)
		}
	}
	r, err := newRequest(pt.RichRequest("m"))
	if err != nil {
		t.Fatal(err)
	}
	roles := ""
	for _, m := range r.Messages {
		roles += m.Role[:1]
	}
	// user, assistant, then the two tool results and the follow-up merged into one user turn
	if roles != "uau" || len(r.Messages[2].Content) != 3 || r.System != "You are terse.\n\nAnswer in English." {
		t.Errorf("roles %q, last turn %d blocks, system %q", roles, len(r.Messages[2].Content), r.System)
	}
	if r.MaxTokens != 256 {
		t.Errorf("max_tokens = %d, want the request's 256", r.MaxTokens)
	}
	if plain, _ := newRequest(pt.NewRequest("m")); plain.MaxTokens != DefaultMaxTokens {
		t.Errorf("max_tokens without a bound = %d, want the required default %d", plain.MaxTokens, DefaultMaxTokens)
	}
}

func TestRefusalStopReasonIsARefusal(t *testing.T) {
	r := decode(event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"refusal"},"usage":{"output_tokens":2}}`) +
		event("message_stop", `{"type":"message_stop"}`))
	if r.Err != nil || r.Finish != provider.FinishRefusal {
		t.Errorf("finish %v err %v, want FinishRefusal", r.Finish, r.Err)
	}
}

func TestEventsThatDoNotFitTheSchemaAreProtocolErrors(t *testing.T) {
	for _, data := range []string{`{"type": 5}`, `{"type":"content_block_delta","index":"zero"}`, `{"type":"error"}`, `[1]`} {
		r := decode(event("x", data))
		if pe := pt.ProviderError(r.Err); pe == nil || pe.Kind != provider.KindProtocol {
			t.Errorf("%s: %v, want a protocol error", data, r.Err)
		}
	}
}

// TestErrorEventNamedOnlyByItsEventName: a compatible server's `event:
// error` whose data has no "type" fails the call with the error it
// carries, classified by its error object; it was skipped, and the stream
// then failed as a transport error and was retried.
func TestErrorEventNamedOnlyByItsEventName(t *testing.T) {
	r := decode(event("message_start", `{"type":"message_start","message":{"usage":{"input_tokens":3}}}`) +
		event("error", `{"error":{"type":"overloaded_error","message":"Overloaded"}}`))
	pe := pt.ProviderError(r.Err)
	if pe == nil || pe.Kind != provider.KindInStream || pe.Class != provider.ClassOverloaded || pe.Status != 529 || pe.Message != "Overloaded" {
		t.Errorf("got %v (%+v), want the in-stream overloaded_error", r.Err, pe)
	}
	r = decode(event("error", `{"message":"no error object"}`))
	if pe := pt.ProviderError(r.Err); pe == nil || pe.Kind != provider.KindProtocol {
		t.Errorf("an error event without its error object: %v, want a protocol error", r.Err)
	}
}

// TestToolUseStartInput: a tool_use block's arguments are its
// input_json_deltas, exactly; a compatible server that sends the whole
// input in content_block_start and no delta gets that input as the
// arguments, not {}.
func TestToolUseStartInput(t *testing.T) {
	start := func(input string) string {
		return event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get","input":`+input+`}}`)
	}
	delta := func(partial string) string {
		return event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+partial+`}}`)
	}
	end := event("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`) +
		event("message_stop", `{"type":"message_stop"}`)
	for _, tc := range []struct{ name, body, want string }{
		{"empty start, then deltas", start(`{}`) + delta(`"{\"city\": "`) + delta(`"\"Paris\"}"`) + end, `{"city": "Paris"}`},
		{"empty start with spaces, then deltas", start(`{ }`) + delta(`"{\"a\":1}"`) + end, `{"a":1}`},
		{"whole input in the start", start(`{"city": "Paris", "days": [1, 2]}`) + end, `{"city":"Paris","days":[1,2]}`},
		{"input in the start and deltas: the deltas", start(`{"city":"Paris"}`) + delta(`"{\"city\":\"Rome\"}"`) + end, `{"city":"Rome"}`},
		{"empty start, no delta", start(`{}`) + end, `{}`},
		{"null input, no delta", start(`null`) + end, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := decode(tc.body)
			if r.Err != nil || len(r.ToolCalls) != 1 || r.ToolCalls[0].Arguments != tc.want {
				t.Errorf("got %+v err %v, want one call with arguments %s", r.ToolCalls, r.Err, tc.want)
			}
		})
	}
}
