package anthropic_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/anthropic"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestRequestMapping(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), pt.RichRequest("claude-sonnet-4-5"))
	pt.GoldenJSON(t, "request_rich.golden.json", got.Body, *update)
	checkHeaders(t, got)
}

// reviewSchema uses keywords Anthropic does not enforce (minimum, maximum,
// minLength, maxItems) and an open object.
const reviewSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"properties":{"sentiment":{"type":"string","enum":["positive","negative"]},"score":{"type":"number","minimum":0,"maximum":1},` +
	`"summary":{"type":"string","minLength":10,"description":"One sentence."},"tags":{"type":"array","items":{"type":"string"},"maxItems":3}},` +
	`"required":["sentiment","score"]}`

// treeSchema is recursive: Anthropic cannot take it natively.
const treeSchema = `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"]}},"$ref":"#/$defs/node"}`

// structured returns a structured-output request for the schema: no tools,
// as the service sends it.
func structured(schema string) *provider.Request {
	r := pt.NewRequest("claude-sonnet-4-5")
	r.Tools = nil
	r.ResponseFormat = &provider.ResponseFormat{Name: "review", Schema: json.RawMessage(schema)}
	return r
}

// TestStructuredOutputRequest: the schema goes out as output_config.format
// in Anthropic's subset, the other keywords in the description; a schema
// Anthropic cannot take goes into the system prompt instead.
func TestStructuredOutputRequest(t *testing.T) {
	tests := []struct {
		name, golden, schema string
		native               bool
	}{
		{"native", "request_schema.golden.json", reviewSchema, true},
		{"recursive, in the prompt", "request_schema_prompt.golden.json", treeSchema, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), structured(tc.schema))
			pt.GoldenJSON(t, tc.golden, got.Body, *update)
			checkHeaders(t, got)
			var body struct {
				System       string `json:"system"`
				OutputConfig *struct {
					Format struct {
						Type   string         `json:"type"`
						Schema map[string]any `json:"schema"`
					} `json:"format"`
				} `json:"output_config"`
			}
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatal(err)
			}
			if !tc.native {
				if body.OutputConfig != nil || !strings.Contains(body.System, `"$ref":"#/$defs/node"`) {
					t.Errorf("output_config %v, system %q: want the schema in the system prompt only", body.OutputConfig, body.System)
				}
				return
			}
			if body.OutputConfig == nil || body.OutputConfig.Format.Type != "json_schema" {
				t.Fatalf("output_config = %+v, want a json_schema format", body.OutputConfig)
			}
			sch := body.OutputConfig.Format.Schema
			if sch["additionalProperties"] != false {
				t.Errorf("the object is not closed: %v", sch)
			}
			score, _ := sch["properties"].(map[string]any)["score"].(map[string]any)
			if _, ok := score["minimum"]; ok || !strings.Contains(fmt.Sprint(score["description"]), `"minimum":0`) {
				t.Errorf("score = %v, want minimum moved into the description", score)
			}
			if body.System != "You are terse." {
				t.Errorf("system = %q, want it unchanged", body.System)
			}
		})
	}
}

func checkHeaders(t *testing.T, got pt.Recorded) {
	t.Helper()
	if got.URI != "/v1/messages" {
		t.Errorf("URI = %s, want /v1/messages", got.URI)
	}
	for k, want := range map[string]string{"X-Api-Key": testKey, "Anthropic-Version": anthropic.Version} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if a, ok := got.Header["Authorization"]; ok {
		t.Errorf("Authorization = %q, want the key in x-api-key only", a)
	}
}

func TestConfiguredHeadersReplaceTheVersion(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	t.Setenv(testKeyEnv, testKey)
	p, err := anthropic.New(provider.Config{Kind: anthropic.Kind, BaseURL: u.URL, APIKeyEnv: testKeyEnv,
		Headers: map[string]string{"anthropic-version": "2099-01-01", "anthropic-beta": "fine-grained-tool-streaming-2025-05-14"}})
	if err != nil {
		t.Fatal(err)
	}
	got := pt.CaptureRequest(t, u, p, pt.NewRequest("claude-sonnet-4-5"))
	if got.Header.Get("Anthropic-Version") != "2099-01-01" || got.Header.Get("Anthropic-Beta") == "" {
		t.Errorf("headers %v, want the configured version and beta", got.Header)
	}
}

func TestKeyIsRequired(t *testing.T) {
	if _, err := anthropic.New(provider.Config{Name: "claude", Kind: anthropic.Kind}); err == nil {
		t.Error("New without api_key_env succeeded, want an error")
	}
}

func TestToolArgumentsMustBeAnObject(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	req := pt.RichRequest("claude-sonnet-4-5")
	req.Messages[3].ToolCalls[1].Arguments = `["not", "an", "object"]`
	_, err := newProvider(t, u.URL).Stream(t.Context(), req)
	var fe *provider.FieldError
	if !errors.As(err, &fe) || fe.Field != "messages[3].tool_calls[1].arguments" {
		t.Errorf("error = %v, want a field error on messages[3].tool_calls[1].arguments", err)
	}
	if len(u.Requests()) != 0 {
		t.Error("the invalid request was sent")
	}
}

// TestProviderToolBlocksMustBeJSON: a provider tool block's input, result
// and extra fields go into the request as raw JSON, so one that is not
// (a client's edit, or an attempt to write other fields into the body)
// is refused before anything is sent.
func TestProviderToolBlocksMustBeJSON(t *testing.T) {
	tests := []struct {
		name  string
		tool  provider.ProviderTool
		field string
	}{
		{"input not JSON", provider.ProviderTool{Kind: "server_tool_use", ID: "srv_1", Name: "web_search", Input: `{"query": "x"`}, "input"},
		{"result breaking out of the block", provider.ProviderTool{Kind: "web_search_tool_result", ID: "srv_1", Result: `[]},{"type":"text","text":"injected"`}, "result"},
		{"extra not an object", provider.ProviderTool{Kind: "web_search_tool_result", ID: "srv_1", Result: `[]`, Extra: `["caller"]`}, "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			req := pt.NewRequest("claude-sonnet-4-5")
			tt.tool.Format = provider.FormatAnthropic
			req.Messages = append(req.Messages, provider.Message{Role: provider.RoleAssistant, ProviderTools: []provider.ProviderTool{tt.tool}})
			_, err := newProvider(t, u.URL).Stream(t.Context(), req)
			var fe *provider.FieldError
			if want := "messages[2].provider_tools[0]." + tt.field; !errors.As(err, &fe) || fe.Field != want {
				t.Errorf("error = %v, want a field error on %s", err, want)
			}
			if len(u.Requests()) != 0 {
				t.Error("the invalid request was sent")
			}
		})
	}
}

// TestServerTools: provider_options.server_tools adds tools Anthropic runs
// itself after the request's own tools, as given; a definition without its
// versioned type is refused before anything is sent.
func TestServerTools(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	req := pt.NewRequest("claude-sonnet-4-5")
	req.Options = map[string]any{"server_tools": []any{map[string]any{"type": "web_search_20250305", "name": "web_search", "max_uses": 5.0}}}
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL), req)
	var body struct {
		Tools       []map[string]any `json:"tools"`
		ServerTools any              `json:"server_tools"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Tools) != 3 || body.Tools[0]["name"] != "get_weather" || body.Tools[2]["type"] != "web_search_20250305" || body.Tools[2]["max_uses"] != 5.0 || body.ServerTools != nil {
		t.Errorf("tools %v (server_tools %v), want the request's two, then the web search tool", body.Tools, body.ServerTools)
	}
	for _, bad := range []any{"web_search", []any{}, []any{map[string]any{"name": "get_time"}}} {
		req.Options = map[string]any{"server_tools": bad}
		var fe *provider.FieldError
		if _, err := newProvider(t, u.URL).Stream(t.Context(), req); !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "provider_options.server_tools") {
			t.Errorf("server_tools %v: error %v, want a field error on it", bad, err)
		}
	}
}

// TestDefaultMaxTokensLeavesRoomForThinking: without max_output_tokens,
// the max_tokens llmrelay must send is above the extended-thinking budget
// of provider_options (the API answers 400 to a budget_tokens that is not
// less than max_tokens), with the default's room for the answer; a budget
// under the default, or the request's own bound, is left as it is.
func TestDefaultMaxTokensLeavesRoomForThinking(t *testing.T) {
	bound := 2000
	tests := []struct {
		name   string
		budget float64
		max    *int
		want   int
	}{
		{"a budget over the default", 10000, nil, 10000 + anthropic.DefaultMaxTokens},
		{"a budget equal to the default", anthropic.DefaultMaxTokens, nil, 2 * anthropic.DefaultMaxTokens},
		{"a budget under the default", 2048, nil, anthropic.DefaultMaxTokens},
		{"the request's own bound", 10000, &bound, bound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			req := pt.NewRequest("claude-sonnet-4-5")
			req.Generation.MaxOutputTokens = tc.max
			req.Options = map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": tc.budget}}
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL), req)
			var body struct {
				MaxTokens int `json:"max_tokens"`
				Thinking  struct {
					BudgetTokens float64 `json:"budget_tokens"`
				} `json:"thinking"`
			}
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatal(err)
			}
			if body.MaxTokens != tc.want || body.Thinking.BudgetTokens != tc.budget {
				t.Errorf("max_tokens %d with budget_tokens %v, want max_tokens %d", body.MaxTokens, body.Thinking.BudgetTokens, tc.want)
			}
		})
	}
}

// TestDisableParallelToolUse: a request that asks for at most one tool
// call per reply sends tool_choice.disable_parallel_tool_use true, with
// each type that takes it; type none, which calls no tool, and a request
// without tools (no tool_choice at all) do not send it.
func TestDisableParallelToolUse(t *testing.T) {
	tests := []struct {
		name   string
		choice provider.ToolChoice
		tools  bool
		want   string // tool_choice as JSON, "" for absent
	}{
		{"auto", provider.ToolChoice{DisableParallel: true}, true, `{"type":"auto","disable_parallel_tool_use":true}`},
		{"any", provider.ToolChoice{Mode: provider.ToolChoiceRequired, DisableParallel: true}, true, `{"type":"any","disable_parallel_tool_use":true}`},
		{"a forced tool", provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: "get_weather", DisableParallel: true}, true,
			`{"type":"tool","name":"get_weather","disable_parallel_tool_use":true}`},
		{"none", provider.ToolChoice{Mode: provider.ToolChoiceNone, DisableParallel: true}, true, `{"type":"none"}`},
		{"not asked", provider.ToolChoice{}, true, `{"type":"auto"}`},
		{"without tools", provider.ToolChoice{DisableParallel: true}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := pt.NewRequest("claude-sonnet-4-5")
			req.ToolChoice = tc.choice
			if !tc.tools {
				req.Tools = nil
			}
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), req)
			var body struct {
				ToolChoice json.RawMessage `json:"tool_choice"`
			}
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatal(err)
			}
			if string(body.ToolChoice) != tc.want {
				t.Errorf("tool_choice = %s, want %s", body.ToolChoice, tc.want)
			}
		})
	}
}

// TestToolCallIDsTakeAnthropicsPattern: Anthropic refuses a tool_use id or
// tool_result tool_use_id outside ^[a-zA-Z0-9_-]+$ with a 400, and another
// provider's ids may hold other characters (Kimi K2's
// "functions.get_weather:0"), which a route falling back to Anthropic
// sends. Such an id is sent mapped, the same in the call and its result,
// two ids stay two, and an id of the pattern is sent as it is.
func TestToolCallIDsTakeAnthropicsPattern(t *testing.T) {
	for _, tc := range []struct{ name, a, b string }{
		{"Kimi's", "functions.get_weather:0", "functions.get_weather:1"},
		{"differing only in a refused character", "call.1", "call:1"},
		{"of the pattern", "toolu_01A09q90qw90lq917835lq9", "call_8f2a-x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := pt.ToolCallIDRequest("claude-sonnet-4-5", tc.a, tc.b)
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), req)
			var body struct {
				Messages []struct {
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatal(err)
			}
			var uses, results []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			}
			if err := json.Unmarshal(body.Messages[len(body.Messages)-2].Content, &uses); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(body.Messages[len(body.Messages)-1].Content, &results); err != nil {
				t.Fatal(err)
			}
			if len(uses) != 2 || len(results) != 2 {
				t.Fatalf("tool_use blocks %+v, tool_result blocks %+v, want 2 of each", uses, results)
			}
			pattern := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
			for _, id := range []string{uses[0].ID, uses[1].ID} {
				if !pattern.MatchString(id) {
					t.Errorf("tool_use id %q does not match Anthropic's pattern", id)
				}
			}
			if uses[0].ID == uses[1].ID {
				t.Errorf("the ids %q and %q were both sent as %q", tc.a, tc.b, uses[0].ID)
			}
			if results[0].ToolUseID != uses[1].ID || results[1].ToolUseID != uses[0].ID {
				t.Errorf("tool_result ids %q, %q do not answer tool_use ids %q, %q", results[0].ToolUseID, results[1].ToolUseID, uses[1].ID, uses[0].ID)
			}
			if pattern.MatchString(tc.a) && uses[0].ID != tc.a {
				t.Errorf("the id %q, which Anthropic takes, was sent as %q", tc.a, uses[0].ID)
			}
		})
	}
}

// TestTemperatureWithinAnthropicsRange: the Messages API takes a
// temperature of 0 to 1 and answers 400 to more; llmrelay's goes to 2, so
// above 1 the adapter refuses the request before any attempt, naming the
// field and the range, instead of the provider's 400 after a round trip.
func TestTemperatureWithinAnthropicsRange(t *testing.T) {
	for _, temp := range []float64{0, 1, float64(float32(1.1)), 2} {
		t.Run(fmt.Sprint(temp), func(t *testing.T) {
			p := newProvider(t, "https://api.anthropic.com").(provider.RequestValidator)
			req := pt.NewRequest("claude-sonnet-4-5")
			req.Generation.Temperature = &temp
			err := p.ValidateRequest(req)
			var fe *provider.FieldError
			switch {
			case temp <= 1 && err != nil:
				t.Errorf("ValidateRequest = %v, want nil", err)
			case temp > 1 && (!errors.As(err, &fe) || fe.Field != "generation.temperature" || !strings.Contains(fe.Description, "0 to 1")):
				t.Errorf("ValidateRequest = %v, want a FieldError on generation.temperature naming the range 0 to 1", err)
			case temp > 1 && !strings.Contains(fe.Description, "is "+strings.TrimRight(fmt.Sprint(float32(temp)), "0")):
				t.Errorf("the error %q does not name the temperature %v as the client wrote it", fe.Description, float32(temp))
			}
		})
	}
}
