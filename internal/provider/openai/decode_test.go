package openai

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

func decode(body string) pt.Result { return pt.Decode(body, "error", &decoder{}) }

func TestDecodeCompatibleServerQuirks(t *testing.T) {
	t.Run("every call at index 0 with its own id", func(t *testing.T) {
		r := decode(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{\"x\":1}"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`)
		if r.Err != nil || len(r.ToolCalls) != 2 || r.ToolCalls[0].ID != "a" || r.ToolCalls[1].ID != "b" || r.ToolCalls[1].Arguments != `{"x":1}` {
			t.Errorf("calls %+v, err %v; want two calls a and b", r.ToolCalls, r.Err)
		}
		if len(r.Violations) > 0 {
			t.Errorf("contract: %v", r.Violations)
		}
	})
	t.Run("id and name repeated on every fragment", func(t *testing.T) {
		r := decode(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":":1}"}}]}}]}

data: [DONE]

`)
		if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "f" || r.ToolCalls[0].Arguments != `{"x":1}` || len(r.Violations) > 0 {
			t.Errorf("calls %+v, violations %v; want one call f", r.ToolCalls, r.Violations)
		}
	})
	t.Run("llama.cpp error line", func(t *testing.T) {
		r := decode("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\nerror: {\"code\":500,\"message\":\"the request exceeds the available context size\",\"type\":\"server_error\"}\n\ndata: [DONE]\n\n")
		pe := pt.ProviderError(r.Err)
		if r.Text != "a" || pe == nil || pe.Kind != provider.KindInStream || pe.Status != 500 || pe.Type != "server_error" {
			t.Errorf("got %q, %v; want the text, then an in-stream 500 server_error", r.Text, r.Err)
		}
	})
	t.Run("other choices are ignored", func(t *testing.T) {
		r := decode("data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"x\"}},{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
		if r.Text != "a" || r.Finish != provider.FinishLength {
			t.Errorf("got %q finish %d, want choice 0 only", r.Text, r.Finish)
		}
	})
}

func TestInStreamErrors(t *testing.T) {
	tests := []struct {
		name, data       string
		status           int
		typ, code, msgIn string
	}{
		{"openai server_error", `{"error":{"message":"boom","type":"server_error","param":null,"code":null}}`, 500, "server_error", "", "boom"},
		{"openai quota", `{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`, 429, "insufficient_quota", "insufficient_quota", "quota"},
		{"openrouter numeric code", `{"error":{"code":502,"message":"Provider returned error"}}`, 502, "", "502", "Provider returned error"},
		{"openrouter named code", `{"error":{"code":"server_error","message":"upstream died"}}`, 500, "server_error", "server_error", "upstream died"},
		{"unknown", `{"error":{"message":"odd","type":"odd_error"}}`, 0, "odd_error", "", "odd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := decode("data: " + tc.data + "\n\n")
			pe := pt.ProviderError(r.Err)
			if pe == nil || pe.Kind != provider.KindInStream || pe.Status != tc.status || pe.Type != tc.typ || pe.Code != tc.code || pe.Message != tc.msgIn {
				t.Errorf("got %+v, want in-stream status %d type %q code %q message %q", pe, tc.status, tc.typ, tc.code, tc.msgIn)
			}
		})
	}
}

func TestErrorBodies(t *testing.T) {
	tests := []struct {
		name, body     string
		typ, code, msg string
	}{
		{"openai", `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, "insufficient_quota", "insufficient_quota", "You exceeded your current quota"},
		{"ollama native", `{"error":"model \"llama9\" not found, try pulling it first"}`, "", "", `model "llama9" not found, try pulling it first`},
		{"vllm top level", `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`, "BadRequestError", "400", "max_tokens is too large"},
		{"not json", `upstream connect error`, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e provider.Error
			parseErrorBody([]byte(tc.body), &e)
			if e.Type != tc.typ || e.Code != tc.code || e.Message != tc.msg {
				t.Errorf("got type %q code %q message %q, want %q %q %q", e.Type, e.Code, e.Message, tc.typ, tc.code, tc.msg)
			}
		})
	}
}

func TestToolChoice(t *testing.T) {
	tests := []struct {
		c    provider.ToolChoice
		want string
	}{
		{provider.ToolChoice{}, `"auto"`},
		{provider.ToolChoice{Mode: provider.ToolChoiceNone}, `"none"`},
		{provider.ToolChoice{Mode: provider.ToolChoiceRequired}, `"required"`},
		{provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: "f"}, `{"type":"function","function":{"name":"f"}}`},
	}
	for _, tc := range tests {
		if got, _ := json.Marshal(toolChoice(tc.c)); string(got) != tc.want {
			t.Errorf("tool choice %+v = %s, want %s", tc.c, got, tc.want)
		}
	}
}

// TestMaxTokensField: the output bound goes as max_completion_tokens to
// OpenAI and Azure OpenAI (whose reasoning models refuse max_tokens), as
// max_tokens to other compatible servers (older vLLM and others know only
// that), and as options.max_tokens_field says when it is set.
func TestMaxTokensField(t *testing.T) {
	n := 100
	req := &provider.Request{Model: "o3-mini", Generation: provider.Generation{MaxOutputTokens: &n}}
	tests := []struct {
		name, base, option, want string
	}{
		{"OpenAI by default", "", "", "max_completion_tokens"},
		{"OpenAI named", "https://API.openai.com/v1", "", "max_completion_tokens"},
		{"Azure OpenAI", "https://myres.openai.azure.com/openai/v1", "", "max_completion_tokens"},
		{"Azure OpenAI on a cognitiveservices host", "https://myres.cognitiveservices.azure.com/openai/v1", "", "max_completion_tokens"},
		{"Azure AI Foundry models on a cognitiveservices host", "https://myres.cognitiveservices.azure.com/models", "", "max_tokens"},
		{"a local server", "http://127.0.0.1:11434/v1", "", "max_tokens"},
		{"a host that only looks like Azure", "https://openai.azure.com.example.net/v1", "", "max_tokens"},
		{"a local server told to", "http://127.0.0.1:8000/v1", "max_completion_tokens", "max_completion_tokens"},
		{"OpenAI told otherwise", "", "max_tokens", "max_tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := provider.Config{Kind: Kind, BaseURL: tc.base}
			if tc.option != "" {
				cfg.Options = map[string]any{"max_tokens_field": tc.option}
			}
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			body, err := p.(*Provider).request(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(body)
			other := "max_tokens"
			if tc.want == other {
				other = "max_completion_tokens"
			}
			if !strings.Contains(string(b), `"`+tc.want+`":100`) || strings.Contains(string(b), `"`+other+`"`) {
				t.Errorf("body %s, want %s alone", b, tc.want)
			}
		})
	}
}

func TestMaxTokensFieldOptionIsChecked(t *testing.T) {
	for _, opts := range []map[string]any{
		{"max_tokens_field": "max_output_tokens"},
		{"max_tokens_field": 5},
		{"max_token_field": "max_tokens"},
		{"tool_call_ids": "anthropic"},
		{"tool_call_ids": 9},
	} {
		_, err := New(provider.Config{Kind: Kind, Options: opts})
		var cp *provider.ConfigProblem
		if !errors.As(err, &cp) || !strings.HasPrefix(cp.Field, "options.") {
			t.Errorf("options %v: error %v, want a *provider.ConfigProblem naming the option", opts, err)
		}
	}
	_, err := provider.NewSet([]provider.Config{{Name: "o", Kind: Kind, Options: map[string]any{"max_tokens_field": "max_tokenz"}}})
	if err == nil || !strings.Contains(err.Error(), "providers[0].options.max_tokens_field: max_tokenz is neither max_tokens nor max_completion_tokens") {
		t.Errorf("NewSet: error %v, want the option named under its provider", err)
	}
}

func TestFinishReasons(t *testing.T) {
	for in, want := range map[string]provider.FinishReason{
		"stop": provider.FinishStop, "length": provider.FinishLength, "tool_calls": provider.FinishToolCalls,
		"function_call": provider.FinishToolCalls, "content_filter": provider.FinishContentFilter, "error": provider.FinishOther,
	} {
		if got := finishReason(in); got != want {
			t.Errorf("finishReason(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestDecodeToolCallsWaitForTheirName(t *testing.T) {
	t.Run("calls go out in the order their names arrive", func(t *testing.T) {
		r := decode(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{\"x\""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":":1}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]
`)
		if r.Err != nil || len(r.Violations) > 0 || len(r.ToolCalls) != 2 {
			t.Fatalf("calls %+v, err %v, violations %v", r.ToolCalls, r.Err, r.Violations)
		}
		if c := r.ToolCalls[0]; c.ID != "b" || c.Name != "g" || c.Arguments != "{}" {
			t.Errorf("first call %+v, want b/g", c)
		}
		if c := r.ToolCalls[1]; c.ID != "a" || c.Name != "f" || c.Arguments != `{"x":1}` {
			t.Errorf("second call %+v, want a/f with all its arguments", c)
		}
	})
	t.Run("a call that never gets its name goes out at the finish", func(t *testing.T) {
		r := decode(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]
`)
		if len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "a" || r.ToolCalls[0].Arguments != "{}" || r.Events[len(r.Events)-1].Kind != provider.EventFinish {
			t.Errorf("calls %+v, events %+v; want the call before the finish", r.ToolCalls, r.Events)
		}
	})
}

func TestDecodeContentParts(t *testing.T) {
	tests := []struct {
		name, data, text, reasoning string
		protocolErr                 bool
	}{
		{"parts of unknown types are skipped", `{"choices":[{"index":0,"delta":{"content":[{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"a"}]}}]}`, "a", "", false},
		{"thinking as a string", `{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":"hm"}]}}]}`, "", "hm", false},
		{"a content that is a number", `{"choices":[{"index":0,"delta":{"content":5}}]}`, "", "", true},
		{"reasoning_content wins over a duplicate reasoning", `{"choices":[{"index":0,"delta":{"reasoning_content":"r","reasoning":"r"}}]}`, "", "r", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := decode("data: " + tc.data + "\n\ndata: [DONE]\n\n")
			if pe := pt.ProviderError(r.Err); tc.protocolErr != (pe != nil && pe.Kind == provider.KindProtocol) {
				t.Fatalf("error %v, want a protocol error: %v", r.Err, tc.protocolErr)
			}
			reasoning := ""
			for _, b := range r.Reasoning {
				reasoning += b.Text
			}
			if r.Text != tc.text || reasoning != tc.reasoning {
				t.Errorf("text %q reasoning %q, want %q and %q", r.Text, reasoning, tc.text, tc.reasoning)
			}
		})
	}
}

// TestFailedFinishReasonsFailTheAttempt: a finish reason that says the
// server gave up midway (DeepSeek's insufficient_system_resource, from its
// API reference's finish_reason list; Mistral's error, from its API's
// FinishReason enum) ends the attempt with a retried in-stream error, the
// reply's usage still reported, instead of a cut reply passed off as a
// success with FINISH_REASON_OTHER.
func TestFailedFinishReasonsFailTheAttempt(t *testing.T) {
	tests := []struct {
		reason string
		class  provider.Class
		status int
	}{
		{"insufficient_system_resource", provider.ClassOverloaded, 503},
		{"error", provider.ClassServerError, 500},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			r := decode(`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"The answer is"}}]}

data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":"` + tc.reason + `"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}

data: [DONE]

`)
			pe := pt.ProviderError(r.Err)
			if pe == nil || pe.Kind != provider.KindInStream || pe.Class != tc.class || pe.Status != tc.status || pe.Type != tc.reason {
				t.Fatalf("err %v, finish %v: want an in-stream %d %v error of type %s", r.Err, r.Finish, tc.status, tc.class, tc.reason)
			}
			if !pe.Class.Transient() {
				t.Errorf("class %v is not retried", pe.Class)
			}
			if r.Finish != provider.FinishUnspecified {
				t.Errorf("finish %v: a cut reply has no finish reason", r.Finish)
			}
			if r.Text != "The answer is" || !r.HasUsage || r.Usage.InputTokens != 12 || r.Usage.OutputTokens != 3 {
				t.Errorf("text %q, usage %+v (%v): want the text so far and the usage", r.Text, r.Usage, r.HasUsage)
			}
		})
	}
}

// TestDecodeToolCallsWithoutTheirID: a call whose name comes before its id,
// or that never gets one (vLLM: vllm-project/vllm#18412, the name on every
// fragment and no id; some Mistral and DeepSeek deployments),
// goes out with the upstream's id when it sends one, else with a generated
// one; no fragment is lost or goes to another call.
func TestDecodeToolCallsWithoutTheirID(t *testing.T) {
	const finish = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]
`
	tests := []struct {
		name, body string
		// want: the calls; an id "*" is a generated one.
		want []provider.ToolCall
	}{
		{"the id after the name", `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"x\""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_up","function":{"arguments":":1}"}}]}}]}

` + finish, []provider.ToolCall{{ID: "*", Name: "f", Arguments: `{"x":1}`}}},
		{"no id at all", `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"x\""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}

` + finish, []provider.ToolCall{{ID: "*", Name: "f", Arguments: `{"x":1}`}}},
		{"two calls without ids, name repeated on every fragment", `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"x\""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":":1}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"g","arguments":"{}"}}]}}]}

` + finish, []provider.ToolCall{{ID: "*", Name: "f", Arguments: `{"x":1}`}, {ID: "*", Name: "g", Arguments: "{}"}}},
		{"two calls without ids at index 0", `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"g","arguments":"{\"y\":2}"}}]}}]}

` + finish, []provider.ToolCall{{ID: "*", Name: "f", Arguments: "{}"}, {ID: "*", Name: "g", Arguments: `{"y":2}`}}},
		{"a call with its id, then one whose id comes late", `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"g","arguments":"{\"y\""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"arguments":":2}"}}]}}]}

` + finish, []provider.ToolCall{{ID: "a", Name: "f", Arguments: "{}"}, {ID: "*", Name: "g", Arguments: `{"y":2}`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := decode(tc.body)
			if r.Err != nil || len(r.Violations) > 0 || len(r.ToolCalls) != len(tc.want) {
				t.Fatalf("calls %+v, err %v, violations %v; want %+v", r.ToolCalls, r.Err, r.Violations, tc.want)
			}
			ids := map[string]bool{}
			for i, want := range tc.want {
				got := r.ToolCalls[i]
				if got.Name != want.Name || got.Arguments != want.Arguments ||
					want.ID == "*" && !strings.HasPrefix(got.ID, "call_") || want.ID != "*" && got.ID != want.ID {
					t.Errorf("call %d = %+v, want %+v (id * is a generated one)", i, got, want)
				}
				if ids[got.ID] {
					t.Errorf("call %d: id %q given twice", i, got.ID)
				}
				ids[got.ID] = true
			}
		})
	}
	t.Run("recorded shape: two calls, name on every fragment, no id", func(t *testing.T) {
		body, err := os.ReadFile(filepath.Join("testdata", "recorded", "tool_calls_without_id.handwritten.sse"))
		if err != nil {
			t.Fatal(err)
		}
		r := decode(string(body))
		if r.Err != nil || len(r.Violations) > 0 || len(r.ToolCalls) != 2 || r.Finish != provider.FinishToolCalls {
			t.Fatalf("calls %+v, finish %d, err %v, violations %v", r.ToolCalls, r.Finish, r.Err, r.Violations)
		}
		for i, want := range []provider.ToolCall{{Name: "get_current_weather", Arguments: `{"location": "Paris"}`}, {Name: "get_time", Arguments: `{"timezone": "Europe/Paris"}`}} {
			if got := r.ToolCalls[i]; got.Name != want.Name || got.Arguments != want.Arguments || len(got.ID) != len("call_")+24 || !strings.HasPrefix(got.ID, "call_") {
				t.Errorf("call %d = %+v, want %s(%s) with a generated id", i, got, want.Name, want.Arguments)
			}
		}
		if r.ToolCalls[0].ID == r.ToolCalls[1].ID {
			t.Errorf("both calls have id %q", r.ToolCalls[0].ID)
		}
	})
	t.Run("a call without an id streams its arguments", func(t *testing.T) {
		// Its first fragment sends it, with a generated id; each later
		// fragment is an arguments delta of its own.
		d := &decoder{}
		var ids []string
		var args []string
		for _, chunk := range []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"x\""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":":1}"}}]}}]}`,
		} {
			var out []provider.Event
			if _, err := d.Decode(httpx.Event{Data: []byte(chunk)}, &out); err != nil {
				t.Fatal(err)
			}
			if len(out) != 1 || out[0].Kind != provider.EventToolCall {
				t.Fatalf("chunk %s: events %+v, want one tool-call event", chunk, out)
			}
			ids, args = append(ids, out[0].ToolCall.ID), append(args, out[0].ToolCall.ArgumentsDelta)
		}
		if !strings.HasPrefix(ids[0], "call_") || ids[1] != "" || args[0] != `{"x"` || args[1] != ":1}" {
			t.Errorf("ids %q, arguments %q; want a generated id first, then the fragments one by one", ids, args)
		}
	})
	t.Run("generated ids differ from reply to reply", func(t *testing.T) {
		body := tests[1].body
		a, b := decode(body), decode(body)
		if len(a.ToolCalls) != 1 || len(b.ToolCalls) != 1 || a.ToolCalls[0].ID == b.ToolCalls[0].ID {
			t.Errorf("calls %+v and %+v, want one call each with ids of their own", a.ToolCalls, b.ToolCalls)
		}
	})
}

// A hostile or broken server cannot make a reply's tool calls hold memory
// or CPU without bound: arguments waiting for a name are metered against
// no output limit, and every fragment looks for its call among the
// reply's calls. Past either bound the attempt fails as a protocol error.
func TestDecodeToolCallsAreBounded(t *testing.T) {
	fragment := func(index int, args string) string {
		return `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + strconv.Itoa(index) +
			`,"function":{"arguments":"` + args + `"}}]}}]}` + "\n\n"
	}
	tests := []struct {
		name string
		body func() string
		want string
	}{
		{"arguments that never get their name", func() string {
			var b strings.Builder
			for range maxWaiting/(1<<20) + 1 {
				b.WriteString(fragment(0, strings.Repeat("x", 1<<20)))
			}
			return b.String()
		}, "waiting for their names"},
		{"calls that never get their names", func() string {
			var b strings.Builder
			for i := range provider.MaxToolCalls + 1 {
				b.WriteString(fragment(i, ""))
			}
			return b.String()
		}, "more than 1024 tool calls"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := decode(tc.body() + "data: [DONE]\n")
			var pe *provider.Error
			if !errors.As(r.Err, &pe) || pe.Kind != provider.KindProtocol || !errors.Is(r.Err, httpx.ErrMalformed) || !strings.Contains(r.Err.Error(), tc.want) {
				t.Fatalf("err %v, want a protocol error saying %q", r.Err, tc.want)
			}
			if len(r.ToolCalls) != 0 {
				t.Errorf("%d tool calls went out, want none", len(r.ToolCalls))
			}
		})
	}
	t.Run("calls within the bounds", func(t *testing.T) {
		var b strings.Builder
		for i := range provider.MaxToolCalls {
			b.WriteString(fragment(i, "{}"))
		}
		r := decode(b.String() + "data: [DONE]\n")
		if r.Err != nil || len(r.ToolCalls) != provider.MaxToolCalls {
			t.Fatalf("err %v, %d calls; want %d", r.Err, len(r.ToolCalls), provider.MaxToolCalls)
		}
	})
}

// Arguments that wait for their call's name are kept as a builder keeps
// text: a server that sent them a byte at a time copied everything before
// each byte (quadratic, within maxWaiting: hours of CPU). Counted in
// allocations, not time.
func TestDecodeWaitingArgumentsCostTheirSize(t *testing.T) {
	const n = 20000
	var one toolCallDelta
	one.Function.Arguments = "a"
	var events []provider.Event
	allocs := testing.AllocsPerRun(1, func() {
		d := &decoder{newID: func() string { return "id" }}
		for range n {
			if err := d.toolCall(&one, &events); err != nil {
				t.Fatal(err)
			}
		}
		events = events[:0]
		d.flushCalls(&events)
	})
	if allocs > 1000 {
		t.Errorf("%d fragments waiting for a name allocated %.0f times, want a few dozen", n, allocs)
	}
	if len(events) != 1 || events[0].ToolCall.ArgumentsDelta != strings.Repeat("a", n) {
		t.Errorf("events %d, want one call with all %d bytes of its arguments", len(events), n)
	}
}
