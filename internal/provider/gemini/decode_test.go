package gemini

import (
	"encoding/json"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// decode decodes body with generated call ids numbered (numberedIDs).
func decode(body string) pt.Result { return pt.Decode(body, "", &decoder{newID: numberedIDs()}) }

// numberedIDs makes a decoder's generated call ids call_0, call_1, ...,
// for tests that compare a decoding with a fixed one.
func numberedIDs() func() string {
	n := 0
	return func() string { n++; return "call_" + strconv.Itoa(n-1) }
}

// idLessCalls is a reply with two function calls, sent without ids as
// Gemini sends them.
const idLessCalls = `data: {"candidates": [{"content": {"parts": [{"functionCall": {"name": "f","args": {"a": 1}}},{"functionCall": {"name": "g"}}],"role": "model"},"finishReason": "STOP","index": 0}]}` + "\n\n"

// generatedID is a generated call id (provider.NewCallID).
var generatedID = regexp.MustCompile(`^call_[0-9a-f]{24}$`)

// TestGeneratedCallIDsAreUniqueAcrossReplies: Gemini sends no call ids; a
// reply's calls get ids unique across the turns of a conversation, not
// call_0 in every reply, which Anthropic refuses (tool_use ids must be
// unique) when a route falls back there with the conversation so far. The
// id a call's event carries is the one the assembled call (the Final's)
// has.
func TestGeneratedCallIDsAreUniqueAcrossReplies(t *testing.T) {
	seen := map[string]bool{}
	for turn := range 3 {
		r := pt.Decode(idLessCalls, "", &decoder{})
		if r.Err != nil || len(r.ToolCalls) != 2 {
			t.Fatalf("turn %d: calls %+v, err %v", turn, r.ToolCalls, r.Err)
		}
		var evIDs []string
		for _, ev := range r.Events {
			if ev.Kind == provider.EventToolCall && ev.ToolCall.ID != "" {
				evIDs = append(evIDs, ev.ToolCall.ID)
			}
		}
		for i, c := range r.ToolCalls {
			if !generatedID.MatchString(c.ID) {
				t.Errorf("turn %d, call %d: id %q, want call_ and 24 hex digits", turn, i, c.ID)
			}
			if seen[c.ID] {
				t.Errorf("turn %d, call %d: id %q repeats an earlier call's", turn, i, c.ID)
			}
			seen[c.ID] = true
			if i >= len(evIDs) || evIDs[i] != c.ID {
				t.Errorf("turn %d, call %d: the events' ids %q, the call's %q", turn, i, evIDs, c.ID)
			}
		}
	}
	// An id Gemini sends is kept.
	r := pt.Decode(`data: {"candidates": [{"content": {"parts": [{"functionCall": {"id": "fc-7", "name": "f"}}],"role": "model"},"finishReason": "STOP","index": 0}]}`+"\n\n", "", &decoder{})
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "fc-7" {
		t.Errorf("calls %+v, want Gemini's id fc-7 kept", r.ToolCalls)
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		text   string
		calls  []provider.ToolCall
		finish provider.FinishReason
	}{
		{"calls without ids get generated ones, thoughts skipped",
			`data: {"candidates": [{"content": {"parts": [{"text": "plan", "thought": true},{"functionCall": {"name": "f","args": {"a": 1}}},{"functionCall": {"name": "g"}}],"role": "model"},"finishReason": "STOP","index": 0}]}` + "\n\n",
			"", []provider.ToolCall{{ID: "call_0", Name: "f", Arguments: `{"a": 1}`}, {ID: "call_1", Name: "g", Arguments: "{}"}}, provider.FinishToolCalls},
		{"max tokens",
			`data: {"candidates": [{"content": {"parts": [{"text": "cut"}],"role": "model"},"finishReason": "MAX_TOKENS","index": 0}]}` + "\n\n",
			"cut", nil, provider.FinishLength},
		{"safety",
			`data: {"candidates": [{"content": {"parts": [],"role": "model"},"finishReason": "SAFETY","index": 0}]}` + "\n\n",
			"", nil, provider.FinishContentFilter},
		{"image filter",
			`data: {"candidates": [{"content": {"parts": [{"text": "Here"}],"role": "model"},"finishReason": "IMAGE_PROHIBITED_CONTENT","index": 0}]}` + "\n\n",
			"Here", nil, provider.FinishContentFilter},
		{"blocked prompt ends the stream",
			`data: {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},"usageMetadata": {"promptTokenCount": 8}}` + "\n\n",
			"", nil, provider.FinishContentFilter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := decode(tc.body)
			if r.Err != nil || r.Text != tc.text || r.Finish != tc.finish || len(r.ToolCalls) != len(tc.calls) {
				t.Fatalf("got %q %+v finish %d err %v", r.Text, r.ToolCalls, r.Finish, r.Err)
			}
			for i := range tc.calls {
				if r.ToolCalls[i] != tc.calls[i] {
					t.Errorf("call %d = %+v, want %+v", i, r.ToolCalls[i], tc.calls[i])
				}
			}
		})
	}
}

func TestErrorBodies(t *testing.T) {
	tests := []struct {
		name, body string
		typ, code  string
		hint       time.Duration
		hasHint    bool
	}{
		{"retry info", `{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34.4s"}]}}`, "RESOURCE_EXHAUSTED", "", 34400 * time.Millisecond, true},
		{"array body from the streaming endpoint", `[{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}]}}]`, "RESOURCE_EXHAUSTED", "", time.Second, true},
		{"error info reason", `{"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}`, "INVALID_ARGUMENT", "API_KEY_INVALID", 0, false},
		{"bad delay ignored", `{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "soon"}]}}`, "RESOURCE_EXHAUSTED", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e provider.Error
			parseErrorBody([]byte(tc.body), &e)
			if e.Type != tc.typ || e.Code != tc.code || e.RetryAfter != tc.hint || e.HasRetryAfter != tc.hasHint {
				t.Errorf("got %+v, want type %q code %q hint %v (%v)", e, tc.typ, tc.code, tc.hint, tc.hasHint)
			}
		})
	}
}

func TestInStreamErrorCarriesItsStatusAndHint(t *testing.T) {
	r := decode(`data: {"candidates": [{"content": {"parts": [{"text": "a"}],"role": "model"},"index": 0}]}` + "\r\n\r\n" +
		`data: {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3s"}]}}` + "\r\n\r\n")
	pe := pt.ProviderError(r.Err)
	if r.Text != "a" || pe == nil || pe.Kind != provider.KindInStream || pe.Status != 429 || pe.Type != "RESOURCE_EXHAUSTED" || pe.RetryAfter != 3*time.Second {
		t.Errorf("got %q, %+v", r.Text, pe)
	}
}

func TestRequestMapsRolesToolsAndChoice(t *testing.T) {
	r, err := newRequest(pt.RichRequest("m"))
	if err != nil {
		t.Fatal(err)
	}
	roles := ""
	for _, c := range r.Contents {
		roles += c.Role[:1]
	}
	if roles != "umu" {
		t.Errorf("roles %q, want user, model, user (tool results merged with the follow-up)", roles)
	}
	fr := r.Contents[2].Parts[0].FunctionResponse
	if fr == nil || fr.Name != "get_weather" || string(fr.Response) != `{"output":"18°C and sunny"}` {
		t.Errorf("first function response %+v, want get_weather with the text as output", fr)
	}
	if fr2 := r.Contents[2].Parts[1].FunctionResponse; fr2 == nil || string(fr2.Response) != `{"time":"14:05"}` {
		t.Errorf("second function response %+v, want the JSON object as it is", fr2)
	}
	for mode, want := range map[provider.ToolChoiceMode]string{
		provider.ToolChoiceAuto: `{"functionCallingConfig":{"mode":"AUTO"}}`, provider.ToolChoiceNone: `{"functionCallingConfig":{"mode":"NONE"}}`,
		provider.ToolChoiceRequired: `{"functionCallingConfig":{"mode":"ANY"}}`, provider.ToolChoiceTool: `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}}`,
	} {
		if got, _ := json.Marshal(newToolConfig(provider.ToolChoice{Mode: mode, Name: "f"})); string(got) != want {
			t.Errorf("mode %d = %s, want %s", mode, got, want)
		}
	}
	plain, _ := newRequest(&provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "hi"}}})
	if plain.GenerationConfig != nil || plain.SystemInstruction != nil || plain.Tools != nil {
		t.Errorf("a plain request sends %+v, want no generation config, system or tools", plain)
	}
}

// TestFailedFinishReasons: a candidate that ends because the model's own
// output failed (MALFORMED_FUNCTION_CALL, with the call it wrote in
// finishMessage, in the wire format of the Gemini API reference's
// Candidate; UNEXPECTED_TOOL_CALL) is an in-stream error of
// ClassInvalidOutput, which the retry plan retries once per call, and one
// the request caused (MISSING_THOUGHT_SIGNATURE) a rejection, each with
// its usage counted; before, each was a success with FINISH_REASON_OTHER
// and an empty reply.
func TestFailedFinishReasons(t *testing.T) {
	tests := []struct {
		reason, message string
		class           provider.Class
	}{
		{"MALFORMED_FUNCTION_CALL", "Malformed function call: print(default_api.get_weather(city=Paris))", provider.ClassInvalidOutput},
		{"UNEXPECTED_TOOL_CALL", "", provider.ClassInvalidOutput},
		{"MISSING_THOUGHT_SIGNATURE", "", provider.ClassRejected},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			msg := ""
			if tc.message != "" {
				msg = `,"finishMessage": "` + tc.message + `"`
			}
			r := decode("data: {\"candidates\": [{\"content\": {},\"finishReason\": \"" + tc.reason + "\"" + msg + ",\"index\": 0}]," +
				"\"usageMetadata\": {\"promptTokenCount\": 40,\"candidatesTokenCount\": 0,\"thoughtsTokenCount\": 25,\"totalTokenCount\": 65}}\r\n\r\n")
			pe := pt.ProviderError(r.Err)
			if pe == nil || pe.Kind != provider.KindInStream || pe.Class != tc.class || pe.Type != tc.reason || pe.Message != tc.message {
				t.Fatalf("err %v, finish %v: want an in-stream %v error %s with its finish message", r.Err, r.Finish, tc.class, tc.reason)
			}
			if r.Finish != provider.FinishUnspecified || !r.HasUsage || r.Usage.InputTokens != 40 || r.Usage.OutputTokens != 25 {
				t.Errorf("finish %v, usage %+v (%v): want no finish and the usage", r.Finish, r.Usage, r.HasUsage)
			}
		})
	}
}
