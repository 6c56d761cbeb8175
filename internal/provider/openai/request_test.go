package openai_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/openai"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestRequestMapping(t *testing.T) {
	tests := []struct {
		name   string
		golden string
		req    *provider.Request
	}{
		{"every field", "request_rich.golden.json", pt.RichRequest("gpt-4o-mini")},
		{"plain", "request_plain.golden.json", func() *provider.Request {
			r := pt.NewRequest("llama3.1:8b")
			r.Tools = nil
			return r
		}()},
		{"a schema in the strict subset", "request_schema_strict.golden.json", structured("gpt-4o-mini", strictSchema)},
		{"a schema outside the strict subset", "request_schema_loose.golden.json", structured("gpt-4o-mini", looseSchema)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), tc.req)
			pt.GoldenJSON(t, tc.golden, got.Body, *update)
			if got.URI != "/v1/chat/completions" {
				t.Errorf("URI = %s, want /v1/chat/completions", got.URI)
			}
			if a := got.Header.Get("Authorization"); a != "Bearer "+testKey {
				t.Errorf("Authorization = %q, want the bearer key", a)
			}
		})
	}
}

// TestNoKeyForLocalServers: Ollama, vLLM and llama.cpp need no key, so a
// provider without api_key_env sends no Authorization header.
func TestNoKeyForLocalServers(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	p, err := openai.New(provider.Config{Name: "ollama", Kind: openai.Kind, BaseURL: u.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	got := pt.CaptureRequest(t, u, p, pt.NewRequest("llama3.1:8b"))
	if a, ok := got.Header["Authorization"]; ok {
		t.Errorf("Authorization = %q sent without a key", a)
	}
}

// TestListModelsReportsConfiguredModels: the models a provider's
// configuration lists are what ListModels reports and all requests may use.
func TestListModelsReportsConfiguredModels(t *testing.T) {
	set, err := provider.NewSet([]provider.Config{{Name: "ollama", Kind: openai.Kind, BaseURL: "http://127.0.0.1:11434/v1", Models: []string{"llama3.1:8b", "qwen2.5:7b"}}})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := set.Get("ollama")
	if len(e.Models) != 2 || e.Models[0] != "llama3.1:8b" || e.Models[1] != "qwen2.5:7b" {
		t.Errorf("models = %v, want the configured ones", e.Models)
	}
	if _, _, err := set.Resolve("ollama/mistral"); err == nil {
		t.Error("a model outside the configured list was allowed")
	}
}

// strictSchema fits OpenAI's strict subset: every object closed with all
// its properties required, the optional one nullable.
const strictSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"properties":{"sentiment":{"type":"string","enum":["positive","negative"]},"score":{"type":"number","minimum":0,"maximum":1},` +
	`"note":{"type":["string","null"]}},"required":["sentiment","score","note"],"additionalProperties":false}`

// looseSchema does not: score is optional and the object is open.
const looseSchema = `{"type":"object","properties":{"sentiment":{"type":"string","enum":["positive","negative"]},` +
	`"score":{"type":"number"},"summary":{"type":"string","minLength":10}},"required":["sentiment"]}`

// structured returns a structured-output request for the schema: no tools,
// as the service sends it.
func structured(model, schema string) *provider.Request {
	r := pt.NewRequest(model)
	r.Tools = nil
	r.ResponseFormat = &provider.ResponseFormat{Name: "review", Schema: json.RawMessage(schema)}
	return r
}

func TestResponseFormatStrictDecision(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		strict bool
	}{
		{"strict subset", strictSchema, true},
		{"an optional property", looseSchema, false},
		{"an open object", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, false},
		{"allOf", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false,"allOf":[{"required":["a"]}]}`, false},
		{"a root that is not an object", `{"type":"array","items":{"type":"string"}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), structured("gpt-4o-mini", tc.schema))
			var body struct {
				ResponseFormat struct {
					Type       string `json:"type"`
					JSONSchema struct {
						Name   string          `json:"name"`
						Schema json.RawMessage `json:"schema"`
						Strict *bool           `json:"strict"`
					} `json:"json_schema"`
				} `json:"response_format"`
				Tools []any `json:"tools"`
			}
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatal(err)
			}
			rf := body.ResponseFormat
			if rf.Type != "json_schema" || rf.JSONSchema.Name != "review" || len(rf.JSONSchema.Schema) == 0 {
				t.Errorf("response_format = %+v, want json_schema named review with the schema", rf)
			}
			if rf.JSONSchema.Strict == nil || *rf.JSONSchema.Strict != tc.strict {
				t.Errorf("strict = %v, want %v", rf.JSONSchema.Strict, tc.strict)
			}
			if strings.Contains(string(rf.JSONSchema.Schema), "$schema") {
				t.Errorf("the schema keeps $schema: %s", rf.JSONSchema.Schema)
			}
			if body.Tools != nil {
				t.Errorf("tools %v sent with a response format", body.Tools)
			}
		})
	}
}

func TestResponseFormatThatIsNotJSON(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	_, err := newProvider(t, u.URL).Stream(t.Context(), structured("gpt-4o-mini", `{"type":`))
	var fe *provider.FieldError
	if !errors.As(err, &fe) || fe.Field != "response_format.json_schema" {
		t.Errorf("error = %v, want a field error on response_format.json_schema", err)
	}
	if len(u.Requests()) != 0 {
		t.Error("the invalid request was sent")
	}
}

// TestReasoningGoesBackWhereItCameFrom: an assistant turn's reasoning is
// sent back under the name it arrived in (DeepSeek requires
// reasoning_content after tool calls), Mistral's thinking as content parts
// before the text, and reasoning of other providers' formats not at all.
func TestReasoningGoesBackWhereItCameFrom(t *testing.T) {
	turn := func(rs ...provider.Reasoning) *provider.Request {
		req := pt.NewRequest("deepseek-reasoner")
		req.Messages = append(req.Messages,
			provider.Message{Role: provider.RoleAssistant, Content: "Checking.", Reasoning: rs,
				ToolCalls: []provider.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			provider.Message{Role: provider.RoleTool, ToolCallID: "call_1", Content: "18°C"})
		return req
	}
	tests := []struct {
		name string
		req  *provider.Request
		want string // the assistant message as sent
	}{
		{"reasoning_content", turn(provider.Reasoning{Text: "The user wants", Format: provider.FormatReasoningContent}, provider.Reasoning{Text: " the weather.", Format: provider.FormatReasoningContent}),
			`{"role":"assistant","content":"Checking.","reasoning_content":"The user wants the weather.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`},
		{"reasoning", turn(provider.Reasoning{Text: "Think.", Format: provider.FormatReasoning}),
			`{"role":"assistant","content":"Checking.","reasoning":"Think.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`},
		{"mistral thinking parts", turn(provider.Reasoning{Text: "Think.", Format: provider.FormatMistralThinking}),
			`{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Think."}]},{"type":"text","text":"Checking."}],"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`},
		{"another provider's signed thinking is left out", turn(provider.Reasoning{Text: "Think.", Signature: "sig", Format: provider.FormatAnthropic}),
			`{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL), tc.req)
			var body struct {
				Messages []json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatal(err)
			}
			if n := len(body.Messages); n != 4 || string(body.Messages[2]) != tc.want {
				t.Errorf("assistant message\n %s\nwant\n %s", body.Messages[2], tc.want)
			}
		})
	}
}

// TestProviderOptionsReachTheBody: provider_options are merged into the
// chat completion request; keys the adapter sets itself are refused before
// anything is sent; extra_headers become headers.
func TestProviderOptionsReachTheBody(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	p := newProvider(t, u.URL)
	req := pt.NewRequest("o3-mini")
	req.Options = map[string]any{"reasoning_effort": "high", "seed": 7.0, "extra_headers": map[string]any{"X-Title": "app"}}
	got := pt.CaptureRequest(t, u, p, req)
	pt.GoldenJSON(t, "request_options.golden.json", got.Body, *update)
	if got.Header.Get("X-Title") != "app" || got.Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("headers %v, want the extra header and the key", got.Header)
	}
	for key, field := range map[string]string{"model": "provider_options.model", "messages": "provider_options.messages", "stream": "provider_options.stream",
		"tools": "provider_options.tools", "response_format": "provider_options.response_format"} {
		req := pt.NewRequest("o3-mini")
		req.Options = map[string]any{key: "x"}
		err := p.(provider.RequestValidator).ValidateRequest(req)
		var fe *provider.FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: ValidateRequest = %v, want a field error on %s", key, err, field)
		}
	}
}

// TestParallelToolCalls: a request that asks for at most one tool call
// per reply sends parallel_tool_calls false, with tools only (OpenAI
// refuses it without); otherwise the field is absent, the API's default,
// and provider_options may set it, unless the request sets it too.
func TestParallelToolCalls(t *testing.T) {
	withTools := func(c provider.ToolChoice, opts map[string]any) *provider.Request {
		r := pt.NewRequest("gpt-4o-mini")
		r.ToolChoice, r.Options = c, opts
		return r
	}
	tests := []struct {
		name string
		req  *provider.Request
		want any // parallel_tool_calls, nil for absent
	}{
		{"auto", withTools(provider.ToolChoice{DisableParallel: true}, nil), false},
		{"required", withTools(provider.ToolChoice{Mode: provider.ToolChoiceRequired, DisableParallel: true}, nil), false},
		{"a forced tool", withTools(provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: "get_weather", DisableParallel: true}, nil), false},
		{"not asked", withTools(provider.ToolChoice{}, nil), nil},
		{"without tools", func() *provider.Request {
			r := withTools(provider.ToolChoice{DisableParallel: true}, nil)
			r.Tools = nil
			return r
		}(), nil},
		{"provider_options alone", withTools(provider.ToolChoice{}, map[string]any{"parallel_tool_calls": false}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), tc.req)
			var body map[string]any
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatal(err)
			}
			if v, ok := body["parallel_tool_calls"]; v != tc.want || (tc.want == nil && ok) {
				t.Errorf("parallel_tool_calls = %v (present %v), want %v", v, ok, tc.want)
			}
		})
	}
	t.Run("set both ways", func(t *testing.T) {
		req := withTools(provider.ToolChoice{DisableParallel: true}, map[string]any{"parallel_tool_calls": false})
		err := newProvider(t, "http://127.0.0.1:1/v1").(provider.RequestValidator).ValidateRequest(req)
		var fe *provider.FieldError
		if !errors.As(err, &fe) || fe.Field != "provider_options.parallel_tool_calls" {
			t.Fatalf("ValidateRequest = %v, want a field error on provider_options.parallel_tool_calls", err)
		}
	})
}

// TestToolCallIDsFitOpenAIsLimit: OpenAI answers 400 ("string too long.
// Expected a string with maximum length 40") to a tool_calls[].id or
// tool_call_id longer than 40 characters, and a client's ids (up to 256
// characters) or another provider's may be longer, which a route falling
// back to OpenAI sends. Such an id is sent cut to fit, the same in the call
// and its result, two ids stay two even when they differ only past the
// cut, the cut falls between characters, and an id that fits is sent as it is.
func TestToolCallIDsFitOpenAIsLimit(t *testing.T) {
	long := strings.Repeat("x", 250)
	for _, tc := range []struct{ name, a, b string }{
		{"a client's, differing past the cut", long + "-first", long + "-second"},
		{"OpenAI's own Responses web search", "ws_689e2d4880a0819d98acca37694989b00b15d90494fc6b87", "ws_689e2d4880a0819d98acca37694989b00b15d90494fc6b88"},
		{"cut inside a character", strings.Repeat("é", 30), strings.Repeat("é", 31)},
		{"that fit", "call_abc123", strings.Repeat("y", 40)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := pt.ToolCallIDRequest("gpt-4o-mini", tc.a, tc.b)
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), req)
			var body struct {
				Messages []struct {
					ToolCalls []struct {
						ID string `json:"id"`
					} `json:"tool_calls"`
					ToolCallID string `json:"tool_call_id"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatal(err)
			}
			n := len(body.Messages)
			calls, r1, r2 := body.Messages[n-3].ToolCalls, body.Messages[n-2].ToolCallID, body.Messages[n-1].ToolCallID
			if len(calls) != 2 {
				t.Fatalf("tool_calls %+v, want 2", calls)
			}
			for _, id := range []string{calls[0].ID, calls[1].ID} {
				if n := len([]rune(id)); n > 40 || !utf8.ValidString(id) {
					t.Errorf("tool call id %q (%d characters) is longer than OpenAI's 40 or not UTF-8", id, n)
				}
			}
			if calls[0].ID == calls[1].ID {
				t.Errorf("the ids %q and %q were both sent as %q", tc.a, tc.b, calls[0].ID)
			}
			if r1 != calls[1].ID || r2 != calls[0].ID {
				t.Errorf("tool_call_ids %q, %q do not answer the calls %q, %q", r1, r2, calls[1].ID, calls[0].ID)
			}
			for i, id := range []string{tc.a, tc.b} {
				switch sent := calls[i].ID; {
				case len(id) <= 40 && sent != id:
					t.Errorf("the id %q, which OpenAI takes, was sent as %q", id, sent)
				case len(id) > 40 && (len(sent) < 9 || !strings.HasPrefix(id, sent[:len(sent)-9])):
					t.Errorf("the id %q was sent as %q, which is not a whole-character start of it and a hash", id, sent)
				}
			}
		})
	}
}

// TestStopSequencesWithinOpenAIsBound: OpenAI's (and Azure OpenAI's) Chat
// Completions takes up to 4 stop sequences and answers 400 to more, after
// a round trip; the request allows 16. More than 4 for OpenAI's API is
// refused before any attempt, naming generation.stop and the bound. Other
// compatible servers (vLLM, llama.cpp's) have bounds of their own, or
// none: they get what the request has.
func TestStopSequencesWithinOpenAIsBound(t *testing.T) {
	stops := func(n int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("<stop%d>", i)
		}
		return s
	}
	for _, tc := range []struct {
		name, baseURL string
		stops         int
		refused       bool
	}{
		{"OpenAI, 4", "https://api.openai.com/v1", 4, false},
		{"OpenAI, 5", "https://api.openai.com/v1", 5, true},
		{"Azure OpenAI, 5", "https://example.openai.azure.com/openai/v1", 5, true},
		{"another server, 16", "http://127.0.0.1:8000/v1", 16, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, tc.baseURL).(provider.RequestValidator)
			req := pt.NewRequest("gpt-4o-mini")
			req.Generation.Stop = stops(tc.stops)
			err := p.ValidateRequest(req)
			var fe *provider.FieldError
			switch {
			case !tc.refused && err != nil:
				t.Errorf("ValidateRequest = %v, want nil", err)
			case tc.refused && (!errors.As(err, &fe) || fe.Field != "generation.stop" || !strings.Contains(fe.Description, "at most 4")):
				t.Errorf("ValidateRequest = %v, want a FieldError on generation.stop naming the bound 4", err)
			}
		})
	}
}
