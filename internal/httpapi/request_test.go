package httpapi

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// requestCase is one request of a wire format and the engine's request it
// must become, or the wire field the door must name as wrong.
type requestCase struct {
	name string
	body string
	// want is the GenerateRequest, in protojson; stream and includeUsage
	// what the reply must do.
	want         string
	stream       bool
	includeUsage bool
	// wantParam and wantMsg: the request is refused, naming this field.
	wantParam, wantMsg string
}

func runRequestCases(t *testing.T, f format, cases []requestCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, fail := f.decode([]byte(tc.body), nil)
			if tc.wantParam != "" || tc.wantMsg != "" {
				if fail == nil {
					t.Fatalf("decoded %v, want a refusal of %s", got.req, tc.wantParam)
				}
				if fail.param != tc.wantParam || fail.message != tc.wantMsg || fail.status != 400 {
					t.Fatalf("refused %d param %q message %q, want 400 %q %q", fail.status, fail.param, fail.message, tc.wantParam, tc.wantMsg)
				}
				return
			}
			if fail != nil {
				t.Fatalf("refused: %s", fail.message)
			}
			want := &llmrelayv1.GenerateRequest{}
			if err := protojson.Unmarshal([]byte(tc.want), want); err != nil {
				t.Fatalf("the case's want: %v", err)
			}
			if d := cmp.Diff(want, got.req, protocmp.Transform()); d != "" {
				t.Errorf("request (-want +got):\n%s", d)
			}
			if got.stream != tc.stream || got.includeUsage != tc.includeUsage {
				t.Errorf("stream %v include_usage %v, want %v %v", got.stream, got.includeUsage, tc.stream, tc.includeUsage)
			}
		})
	}
}

// TestOpenAIRequest: Chat Completions requests in, the engine's requests
// out; what llmrelay cannot honour is refused by its wire name.
func TestOpenAIRequest(t *testing.T) {
	runRequestCases(t, openAI{}, []requestCase{
		{
			name: "text, streamed with usage",
			body: `{"model":"mock/echo","messages":[{"role":"developer","content":"be brief"},{"role":"user","content":"hi"}],
				"stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":64,"temperature":0.5,"top_p":0.9,"stop":"END"}`,
			want: `{"model":"mock/echo","messages":[{"role":"ROLE_SYSTEM","content":"be brief"},{"role":"ROLE_USER","content":"hi"}],
				"generation":{"maxOutputTokens":64,"temperature":0.5,"topP":0.9,"stop":["END"]}}`,
			stream: true, includeUsage: true,
		},
		{
			name: "content parts are joined",
			body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]}],"max_tokens":5,"stop":["a","b"]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"one\ntwo"}],"generation":{"maxOutputTokens":5,"stop":["a","b"]}}`,
		},
		{
			name: "tool call round trip",
			body: `{"model":"m","messages":[
				{"role":"user","content":"weather in Paris?"},
				{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},
				{"role":"tool","tool_call_id":"call_1","content":"18C"}],
				"tools":[{"type":"function","function":{"name":"weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":true}}],
				"tool_choice":{"type":"function","function":{"name":"weather"}}}`,
			want: `{"model":"m","messages":[
				{"role":"ROLE_USER","content":"weather in Paris?"},
				{"role":"ROLE_ASSISTANT","toolCalls":[{"id":"call_1","name":"weather","arguments":"{\"city\":\"Paris\"}"}]},
				{"role":"ROLE_TOOL","toolCallId":"call_1","content":"18C"}],
				"tools":[{"name":"weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}],
				"toolChoice":{"mode":"TOOL_CHOICE_MODE_TOOL","name":"weather"}}`,
		},
		{
			// What openai-node's parse() and stream() helpers return,
			// sent back as the next request's assistant message.
			name: "a reply's message as the SDK helpers give it back",
			body: `{"model":"m","messages":[{"role":"user","content":"x"},
				{"role":"assistant","content":"ok","refusal":null,"annotations":[],"parsed":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":1}","parsed_arguments":{"x":1}}}]},
				{"role":"tool","tool_call_id":"c1","content":"done"}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"},
				{"role":"ROLE_ASSISTANT","content":"ok","toolCalls":[{"id":"c1","name":"f","arguments":"{\"x\":1}"}]},
				{"role":"ROLE_TOOL","toolCallId":"c1","content":"done"}]}`,
		},
		{
			name: "tool choice required",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"required"}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"toolChoice":{"mode":"TOOL_CHOICE_MODE_REQUIRED"}}`,
		},
		{
			name: "parallel_tool_calls false is at most one tool call per reply",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"parallel_tool_calls":false}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"tools":[{"name":"f"}],"toolChoice":{"disableParallelToolCalls":true}}`,
		},
		{
			name: "parallel_tool_calls false with a tool choice",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],
				"tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":false}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"tools":[{"name":"f"}],
				"toolChoice":{"mode":"TOOL_CHOICE_MODE_TOOL","name":"f","disableParallelToolCalls":true}}`,
		},
		{
			name: "parallel_tool_calls true is the default",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"required","parallel_tool_calls":true}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"toolChoice":{"mode":"TOOL_CHOICE_MODE_REQUIRED"}}`,
		},
		{
			name:      "parallel_tool_calls that is not a boolean",
			body:      `{"model":"m","messages":[{"role":"user","content":"x"}],"parallel_tool_calls":"no"}`,
			wantParam: "parallel_tool_calls", wantMsg: "parallel_tool_calls: must be true or false",
		},
		{
			name: "json_schema is structured output",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"city","strict":true,"schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"responseFormat":{"name":"city","jsonSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`,
		},
		{
			name: "json_object is structured output of any object",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"responseFormat":{"jsonSchema":{"type":"object"}}}`,
		},
		{
			name: "text format is plain text",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"text"}}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}]}`,
		},
		{
			name: "provider parameters become provider_options, defaults are dropped",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"high","seed":7,"store":false,"parallel_tool_calls":true,"n":1,"logprobs":false,"frequency_penalty":0.5}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"providerOptions":{"reasoning_effort":"high","seed":7,"frequency_penalty":0.5}}`,
		},
		{
			// Python's json module writes 0.0 for a float zero and ", "
			// and ": " between members: still the defaults, which a
			// provider that does not know the parameter would refuse.
			name: "defaults as Python writes them are dropped",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"frequency_penalty": 0.0, "presence_penalty": -0.0, "logit_bias": { }, "top_logprobs": 0.0, "logprobs": false}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}]}`,
		},
		{
			name: "user and metadata label the call",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"user":"u-42","metadata":{"team":"search"}}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"metadata":{"user":"u-42","team":"search"}}`,
		},
		{
			name: "assistant reasoning_content and refusal are kept",
			body: `{"model":"m","messages":[{"role":"assistant","content":"ok","reasoning_content":"thought","refusal":"no"},{"role":"user","content":"x"}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_ASSISTANT","content":"ok","refusal":"no","reasoning":[{"text":"thought","format":"openai.reasoning_content"}]},{"role":"ROLE_USER","content":"x"}]}`,
		},
		{
			// OpenAI's assistant content parts are text and refusal parts.
			name: "an assistant's refusal part is its refusal",
			body: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"text","text":"well"},{"type":"refusal","refusal":"I can't help with that."}]},{"role":"user","content":"y"}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"},{"role":"ROLE_ASSISTANT","content":"well","refusal":"I can't help with that."},{"role":"ROLE_USER","content":"y"}]}`,
		},
		{
			name:      "a refusal part in a user message",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"refusal","refusal":"no"}]}]}`,
			wantParam: "messages[0].content[0].type", wantMsg: `messages[0].content[0].type: only assistant messages carry refusal parts`,
		},
		{
			name: "the llmrelay extension",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"seed":1,"llmrelay":{"provider_options":{"faults":[{"status":503},{}]},"fallback_models":["mock/lorem"]}}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"providerOptions":{"seed":1,"faults":[{"status":503},{}]},"fallbackModels":["mock/lorem"]}`,
		},
		{
			name: "nulls are absent",
			body: `{"model":"m","messages":[{"role":"user","content":"x"}],"stop":null,"tools":null,"temperature":null}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}]}`,
		},
		{name: "an image_url written as a string (the Responses API's shape)",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":"https://x/y.png"}]}]}`,
			wantParam: "messages[0].content[0].image_url", wantMsg: "messages[0].content[0].image_url: must not be a JSON string"},
		{name: "n above 1", body: `{"model":"m","n":2}`, wantParam: "n", wantMsg: "n: llmrelay returns one choice: n must be 1"},
		{name: "unknown member", body: `{"model":"m","frobnicate":true}`, wantParam: "frobnicate", wantMsg: "frobnicate: unrecognized request argument"},
		{name: "logprobs", body: `{"model":"m","logprobs":true}`, wantParam: "logprobs", wantMsg: "logprobs: not supported by llmrelay"},
		{name: "audio output", body: `{"model":"m","modalities":["text","audio"]}`, wantParam: "modalities", wantMsg: `modalities: llmrelay replies with text only: modalities must be ["text"]`},
		{
			name: "text and images in order",
			body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Compare "},
				{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}},
				{"type":"text","text":" with "},{"type":"image_url","image_url":{"url":"https://x/y.png"}},{"type":"text","text":"."}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"Compare  with .","parts":[{"text":"Compare "},
				{"image":{"data":"iVBORw0KGgo=","mediaType":"image/png","detail":"IMAGE_DETAIL_LOW"}},
				{"text":" with "},{"image":{"url":"https://x/y.png"}},{"text":"."}]}]}`,
		},
		{
			name: "a data: URL's media type in capitals (MIME types are case-insensitive)",
			body: `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:Image/PNG;BASE64,iVBORw0KGgo="}}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","parts":[{"image":{"data":"iVBORw0KGgo=","mediaType":"image/png"}}]}]}`,
		},
		{
			name: "text parts without images: joined, no parts",
			body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"a\nb"}]}`,
		},
		{
			name:      "image in an assistant message",
			body:      `{"model":"m","messages":[{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`,
			wantParam: "messages[0].content[0].type", wantMsg: `messages[0].content[0].type: only user messages carry image_url parts`,
		},
		{
			name:      "data URL not base64",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,rawbytes"}}]}]}`,
			wantParam: "messages[0].content[0].image_url.url", wantMsg: `messages[0].content[0].image_url.url: a data: URL must be data:<media type>;base64,<data>`,
		},
		{
			name:      "data URL with bad base64",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,!!!"}}]}]}`,
			wantParam: "messages[0].content[0].image_url.url", wantMsg: `messages[0].content[0].image_url.url: the image's data is not base64`,
		},
		{
			name:      "unknown detail",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"ultra"}}]}]}`,
			wantParam: "messages[0].content[0].image_url.detail", wantMsg: `messages[0].content[0].image_url.detail: must be auto, low, high or original`,
		},
		{
			name: "detail original",
			body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Read "},
				{"type":"image_url","image_url":{"url":"https://x/scan.png","detail":"original"}}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"Read ","parts":[{"text":"Read "},
				{"image":{"url":"https://x/scan.png","detail":"IMAGE_DETAIL_ORIGINAL"}}]}]}`,
		},
		{
			name:      "audio part",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}]}`,
			wantParam: "messages[0].content[0].type", wantMsg: `messages[0].content[0].type: "input_audio" parts are not supported by llmrelay: messages carry text, and user messages images (image_url)`,
		},
		{
			name:      "file part",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`,
			wantParam: "messages[0].content[0].type", wantMsg: `messages[0].content[0].type: "file" parts are not supported by llmrelay: messages carry text, and user messages images (image_url)`,
		},
		{name: "unknown role", body: `{"model":"m","messages":[{"role":"function","content":"x"}]}`, wantParam: "messages[0].role", wantMsg: "messages[0].role: must be system, developer, user, assistant or tool"},
		{name: "unknown message member", body: `{"model":"m","messages":[{"role":"user","content":"x","colour":"red"}]}`, wantParam: "messages[0]", wantMsg: `messages[0]: unknown field "colour"`},
		{name: "both token limits", body: `{"model":"m","max_tokens":5,"max_completion_tokens":6}`, wantParam: "max_tokens", wantMsg: "max_tokens: set only one of max_completion_tokens and max_tokens"},
		// The range the engine holds the limit to (the contract's rule), for
		// every value outside it.
		{name: "token limit zero", body: `{"model":"m","max_completion_tokens":0}`, wantParam: "max_completion_tokens", wantMsg: "max_completion_tokens: must be a whole number from 1 to 1000000"},
		{name: "token limit above the engine's", body: `{"model":"m","max_tokens":1000001}`, wantParam: "max_tokens", wantMsg: "max_tokens: must be a whole number from 1 to 1000000"},
		{name: "token limit beyond uint32", body: `{"model":"m","max_completion_tokens":4294967296}`, wantParam: "max_completion_tokens", wantMsg: "max_completion_tokens: must be a whole number from 1 to 1000000"},
		{name: "token limit negative", body: `{"model":"m","max_tokens":-1}`, wantParam: "max_tokens", wantMsg: "max_tokens: must be a whole number from 1 to 1000000"},
		{name: "token limit a fraction", body: `{"model":"m","max_tokens":1.5}`, wantParam: "max_tokens", wantMsg: "max_tokens: must be a whole number from 1 to 1000000"},
		{name: "token limit at the engine's", body: `{"model":"m","max_tokens":1000000}`, want: `{"model":"m","generation":{"maxOutputTokens":1000000}}`},
		{name: "max_tool_turns zero", body: `{"model":"m","llmrelay":{"max_tool_turns":0}}`, wantParam: "llmrelay.max_tool_turns", wantMsg: "llmrelay.max_tool_turns: must be a whole number from 1 to 1000"},
		{name: "max_tool_turns negative", body: `{"model":"m","llmrelay":{"max_tool_turns":-1}}`, wantParam: "llmrelay.max_tool_turns", wantMsg: "llmrelay.max_tool_turns: must be a whole number from 1 to 1000"},
		{name: "max_tool_turns", body: `{"model":"m","llmrelay":{"max_tool_turns":4}}`, want: `{"model":"m","maxToolTurns":4}`},
		{name: "not an object", body: `[1]`, wantMsg: "the request body must not be a JSON array"},
		{name: "not JSON", body: `{"model":`, wantMsg: "the request body is not valid JSON (at byte 9): unexpected end of JSON input"},
		{
			name:      "extension repeats an own option",
			body:      `{"model":"m","seed":1,"llmrelay":{"provider_options":{"seed":2}}}`,
			wantParam: "llmrelay", wantMsg: "llmrelay: provider_options.seed: already set by the request's own seed",
		},
	})
}

// TestAnthropicRequest: Messages requests in, the engine's requests out.
func TestAnthropicRequest(t *testing.T) {
	runRequestCases(t, anthropic{}, []requestCase{
		{
			name: "system, text, streamed",
			body: `{"model":"mock/echo","max_tokens":256,"system":"be brief","messages":[{"role":"user","content":"hi"}],"stream":true,
				"temperature":0.2,"stop_sequences":["END"],"metadata":{"user_id":"u-7"}}`,
			want: `{"model":"mock/echo","messages":[{"role":"ROLE_SYSTEM","content":"be brief"},{"role":"ROLE_USER","content":"hi"}],
				"generation":{"maxOutputTokens":256,"temperature":0.2,"stop":["END"]},"metadata":{"user_id":"u-7"}}`,
			stream: true,
		},
		{
			name: "system as text blocks with cache control",
			body: `{"model":"m","max_tokens":1,"system":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_SYSTEM","content":"a\nb"},{"role":"ROLE_USER","content":"hi"}],"generation":{"maxOutputTokens":1}}`,
		},
		{
			name: "tool use round trip",
			body: `{"model":"m","max_tokens":100,"messages":[
				{"role":"user","content":"weather in Paris?"},
				{"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"18C"},{"type":"text","text":"and tomorrow?"}]}],
				"tools":[{"name":"weather","description":"Weather now","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}],
				"tool_choice":{"type":"any"}}`,
			want: `{"model":"m","messages":[
				{"role":"ROLE_USER","content":"weather in Paris?"},
				{"role":"ROLE_ASSISTANT","content":"Checking.","toolCalls":[{"id":"toolu_1","name":"weather","arguments":"{\"city\":\"Paris\"}"}]},
				{"role":"ROLE_TOOL","toolCallId":"toolu_1","content":"18C"},
				{"role":"ROLE_USER","content":"and tomorrow?"}],
				"tools":[{"name":"weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}],
				"toolChoice":{"mode":"TOOL_CHOICE_MODE_REQUIRED"},"generation":{"maxOutputTokens":100}}`,
		},
		{
			name: "disable_parallel_tool_use is at most one tool call per reply",
			body: `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"object"}}],
				"tool_choice":{"type":"auto","disable_parallel_tool_use":true}}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"tools":[{"name":"f","parameters":{"type":"object"}}],
				"toolChoice":{"mode":"TOOL_CHOICE_MODE_AUTO","disableParallelToolCalls":true},"generation":{"maxOutputTokens":9}}`,
		},
		{
			name: "disable_parallel_tool_use with a forced tool",
			body: `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"object"}}],
				"tool_choice":{"type":"tool","name":"f","disable_parallel_tool_use":true}}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"tools":[{"name":"f","parameters":{"type":"object"}}],
				"toolChoice":{"mode":"TOOL_CHOICE_MODE_TOOL","name":"f","disableParallelToolCalls":true},"generation":{"maxOutputTokens":9}}`,
		},
		{
			name: "thinking blocks come back with their format",
			body: `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"x"},
				{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"EqQB"},{"type":"redacted_thinking","data":"opaque"},
					{"type":"thinking","thinking":"mock thought","signature":"llmrelay/mock/c2ln"},{"type":"text","text":"ok"}]},
				{"role":"user","content":"y"}],
				"thinking":{"type":"enabled","budget_tokens":2048}}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"},
				{"role":"ROLE_ASSISTANT","content":"ok","reasoning":[{"text":"hmm","signature":"EqQB","format":"anthropic"},{"redacted":"opaque","format":"anthropic"},{"text":"mock thought","signature":"c2ln","format":"mock"}]},
				{"role":"ROLE_USER","content":"y"}],
				"generation":{"maxOutputTokens":9},"providerOptions":{"thinking":{"type":"enabled","budget_tokens":2048}}}`,
		},
		{
			// The blocks the door wrote for a Gemini turn: its reasoning's
			// signature, and each call's in a thinking block of its own,
			// which goes on the call; one for a call the message does not
			// have is dropped.
			name: "a call's signature in a thinking block goes on its call",
			body: `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"x"},
				{"role":"assistant","content":[{"type":"thinking","thinking":"","signature":"llmrelay/gemini/Q2lrQg=="},{"type":"text","text":"Checking."},
					{"type":"thinking","thinking":"","signature":"llmrelay/call/Y2FsbF8x/EpwI+/a="},{"type":"tool_use","id":"call_1","name":"weather","input":{"city":"Paris"}},
					{"type":"tool_use","id":"call_2","name":"time","input":{}},{"type":"thinking","thinking":"","signature":"llmrelay/call/Y2FsbF8y/EpwJ/b+="},
					{"type":"thinking","thinking":"","signature":"llmrelay/call/Y2FsbF85/EpwK"}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"},
				{"role":"ROLE_ASSISTANT","content":"Checking.",
				 "reasoning":[{"signature":"Q2lrQg==","format":"gemini"}],
				 "toolCalls":[{"id":"call_1","name":"weather","arguments":"{\"city\":\"Paris\"}","signature":"EpwI+/a="},{"id":"call_2","name":"time","arguments":"{}","signature":"EpwJ/b+="}]}],
				"generation":{"maxOutputTokens":9}}`,
		},
		{
			name: "output_config format is structured output, effort goes to the provider",
			body: `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"x"}],"output_config":{"effort":"low","format":{"type":"json_schema","schema":{"type":"object"}}}}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"generation":{"maxOutputTokens":9},"responseFormat":{"jsonSchema":{"type":"object"}},"providerOptions":{"output_config":{"effort":"low"}}}`,
		},
		{
			name: "defaults are dropped, top_k goes to the provider",
			body: `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"disabled"},"service_tier":"auto","top_k":5}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"generation":{"maxOutputTokens":9},"providerOptions":{"top_k":5}}`,
		},
		{
			name: "defaults as Python writes them are dropped",
			body: `{"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "x"}], "thinking": {"type": "disabled"}, "service_tier": "auto"}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"generation":{"maxOutputTokens":9}}`,
		},
		{
			name: "interleaved thinking and tool use keep their order",
			body: `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"x"},
				{"role":"assistant","content":[{"type":"thinking","thinking":"a","signature":"s1"},{"type":"tool_use","id":"t1","name":"f","input":{}},
					{"type":"thinking","thinking":"b","signature":"s2"},{"type":"text","text":"Then "},{"type":"text","text":"this."},{"type":"tool_use","id":"t2","name":"g","input":{"k":1}}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"},
				{"role":"ROLE_ASSISTANT","content":"Then this.",
				 "reasoning":[{"text":"a","signature":"s1","format":"anthropic"},{"text":"b","signature":"s2","format":"anthropic"}],
				 "toolCalls":[{"id":"t1","name":"f","arguments":"{}"},{"id":"t2","name":"g","arguments":"{\"k\":1}"}],
				 "parts":[{"reasoning":0},{"toolCall":0},{"reasoning":1},{"text":"Then "},{"text":"this."},{"toolCall":1}]}],
				"generation":{"maxOutputTokens":9}}`,
		},
		{
			name: "server tool blocks come back as provider tool blocks",
			body: `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"x"},
				{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},
					{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://a"}],"caller":{"type":"direct"}},{"type":"text","text":"Found."}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"},
				{"role":"ROLE_ASSISTANT","content":"Found.",
				 "providerTools":[{"kind":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":"{\"query\":\"q\"}","format":"anthropic"},
				   {"kind":"web_search_tool_result","id":"srvtoolu_1","result":"[{\"type\":\"web_search_result\",\"url\":\"https://a\"}]","extra":"{\"caller\":{\"type\":\"direct\"}}","format":"anthropic"}],
				 "parts":[{"providerTool":0},{"providerTool":1},{"text":"Found."}]}],
				"generation":{"maxOutputTokens":9}}`,
		},
		{name: "unknown member", body: `{"model":"m","frobnicate":1}`, wantParam: "frobnicate", wantMsg: "frobnicate: Extra inputs are not permitted"},
		{name: "max_tokens zero", body: `{"model":"m","max_tokens":0}`, wantParam: "max_tokens", wantMsg: "max_tokens: must be a whole number from 1 to 1000000"},
		{name: "max_tokens above the engine's", body: `{"model":"m","max_tokens":2000000}`, wantParam: "max_tokens", wantMsg: "max_tokens: must be a whole number from 1 to 1000000"},
		{
			name: "server tools go to provider_options.server_tools",
			body: `{"model":"m","tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5},{"name":"f","input_schema":{"type":"object"}}],"mcp_servers":[{"type":"url","url":"https://mcp.example","name":"ex"}]}`,
			want: `{"model":"m","tools":[{"name":"f","parameters":{"type":"object"}}],
				"providerOptions":{"server_tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5}],"mcp_servers":[{"type":"url","url":"https://mcp.example","name":"ex"}]}}`,
		},
		{
			name: "text and image blocks in order",
			body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Compare "},
				{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="},"cache_control":{"type":"ephemeral"}},
				{"type":"text","text":" with "},{"type":"image","source":{"type":"url","url":"https://x/y.png"}},{"type":"text","text":"."}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"Compare  with .","parts":[{"text":"Compare "},
				{"image":{"data":"iVBORw0KGgo=","mediaType":"image/png"}},
				{"text":" with "},{"image":{"url":"https://x/y.png"}},{"text":"."}]}]}`,
		},
		{
			name: "an image after a tool result",
			body: `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"q"},{"role":"ROLE_ASSISTANT","toolCalls":[{"id":"t1","name":"f","arguments":"{}"}]},
				{"role":"ROLE_TOOL","toolCallId":"t1","content":"done"},{"role":"ROLE_USER","parts":[{"image":{"url":"https://x/y.png"}}]}]}`,
		},
		{
			name:      "image block from the Files API",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"file_1"}}]}]}`,
			wantParam: "messages[0].content[0].source.type", wantMsg: `messages[0].content[0].source.type: "file" image sources are not supported by llmrelay: use base64 or url`,
		},
		{
			name:      "image block by url without its url",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"url"}}]}]}`,
			wantParam: "messages[0].content[0].source.url", wantMsg: `messages[0].content[0].source.url: is required`,
		},
		{
			name: "image by url without its url in a tool result",
			body: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"screenshot","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"url","url":""}}]}]}]}`,
			wantParam: "messages[2].content[0].content[0].source.url", wantMsg: `messages[2].content[0].content[0].source.url: is required`,
		},
		{
			name:      "image block with bad base64",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"!!!"}}]}]}`,
			wantParam: "messages[0].content[0].source.data", wantMsg: `messages[0].content[0].source.data: the image's data is not base64`,
		},
		{
			name:      "image in an assistant message",
			body:      `{"model":"m","messages":[{"role":"assistant","content":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}]}`,
			wantParam: "messages[0].content[0].type", wantMsg: `messages[0].content[0].type: "image" blocks are not supported in assistant messages by llmrelay`,
		},
		{
			name:      "document block",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}]}]}`,
			wantParam: "messages[0].content[0].type", wantMsg: `messages[0].content[0].type: "document" blocks are not supported in user messages by llmrelay`,
		},
		{
			name:      "tool_use in a user message",
			body:      `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`,
			wantParam: "messages[0].content[0].type", wantMsg: `messages[0].content[0].type: "tool_use" blocks are not supported in user messages by llmrelay`,
		},
		{name: "system role in messages", body: `{"model":"m","messages":[{"role":"system","content":"x"}]}`, wantParam: "messages[0].role", wantMsg: "messages[0].role: must be user or assistant"},
		{name: "context management", body: `{"model":"m","context_management":{"edits":[]}}`, wantParam: "context_management", wantMsg: "context_management: not supported by llmrelay"},
		{name: "system block of another type", body: `{"model":"m","system":[{"type":"image"}]}`, wantParam: "system[0].type", wantMsg: `system[0].type: "image" blocks are not supported here by llmrelay: only text`},
		{
			name: "text and images in a tool result, in order",
			body: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"screenshot","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"Screen: "},
				{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"text","text":" and "},
				{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"},{"role":"ROLE_ASSISTANT","toolCalls":[{"id":"t1","name":"screenshot","arguments":"{}"}]},
				{"role":"ROLE_TOOL","toolCallId":"t1","content":"Screen:  and ","parts":[{"text":"Screen: "},{"image":{"data":"iVBORw0KGgo=","mediaType":"image/png"}},
				{"text":" and "},{"image":{"url":"https://x/y.png"}}]}]}`,
		},
		{
			name: "text blocks of a tool result without images are joined by newlines",
			body: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"},{"role":"ROLE_ASSISTANT","toolCalls":[{"id":"t1","name":"f","arguments":"{}"}]},
				{"role":"ROLE_TOOL","toolCallId":"t1","content":"a\nb"}]}`,
		},
		{
			name: "document in a tool result",
			body: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}]}]}]}`,
			wantParam: "messages[2].content[0].content[0].type", wantMsg: `messages[2].content[0].content[0].type: "document" blocks are not supported in a tool_result by llmrelay: only text and image`,
		},
		{
			name: "image from the Files API in a tool result",
			body: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"screenshot","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"file","file_id":"file_1"}}]}]}]}`,
			wantParam: "messages[2].content[0].content[0].source.type", wantMsg: `messages[2].content[0].content[0].source.type: "file" image sources are not supported by llmrelay: use base64 or url`,
		},
	})
}

// TestParam: the engine's field paths, in a refusal, name the member the
// client wrote.
func TestParam(t *testing.T) {
	oa, f := openAI{}.decode([]byte(`{"model":"m","max_tokens":3,"seed":1,"messages":[{"role":"user","content":"x"}]}`), nil)
	if f != nil {
		t.Fatal(f.message)
	}
	an, f := anthropic{}.decode([]byte(`{"model":"m","system":"s","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"r"},{"type":"tool_result","tool_use_id":"b","content":"r"}]}],"top_k":2}`), nil)
	if f != nil {
		t.Fatal(f.message)
	}
	oi, f := openAI{}.decode([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`), nil)
	if f != nil {
		t.Fatal(f.message)
	}
	ri, f := responses{}.decode([]byte(`{"model":"m","instructions":"s","input":[{"role":"user","content":[
		{"type":"input_text","text":"a"},{"type":"input_image","image_url":"https://x/y.png"}]}]}`), nil)
	if f != nil {
		t.Fatal(f.message)
	}
	for _, tc := range []struct {
		t           *translated
		field, want string
	}{
		{oa, "generation.max_output_tokens", "max_tokens"},
		{oa, "generation.stop[1]", "stop"},
		{oa, "generation.temperature", "temperature"},
		{oa, "messages[0].content", "messages[0].content"},
		{oa, "messages[2].tool_calls[0].arguments", "messages[2].tool_calls[0].function.arguments"},
		{oa, "messages[2].reasoning[0].signature", "messages[2].reasoning_content"},
		{oa, "tools[1].name", "tools[1].function.name"},
		{oa, "tool_choice.name", "tool_choice.function.name"},
		{oa, "tool_choice.disable_parallel_tool_calls", "parallel_tool_calls"},
		{oa, "response_format.json_schema", "response_format.json_schema.schema"},
		{oa, "provider_options.seed", "seed"},
		{oa, "provider_options.faults[0]", "llmrelay.provider_options.faults[0]"},
		{oa, "fallback_models[0]", "llmrelay.fallback_models[0]"},
		{oa, "model", "model"},
		// A user message's parts are its content parts, one for one.
		{oi, "messages[0].parts[1].image.url", "messages[0].content[1].image_url.url"},
		{oi, "messages[0].parts[1].image.media_type", "messages[0].content[1].image_url.url"},
		{oi, "messages[0].parts[1].image.detail", "messages[0].content[1].image_url.detail"},
		{oi, "messages[0].parts[0].text", "messages[0].content[0].text"},
		{ri, "messages[1].parts[1].image.url", "input[0].content[1].image_url"},
		{ri, "messages[1].parts[1].image.media_type", "input[0].content[1].image_url"},
		{ri, "messages[1].parts[1].image.detail", "input[0].content[1].detail"},
		{ri, "messages[1].parts[0].text", "input[0].content[0].text"},
		{ri, "messages[1].content", "input[0]"},
		{ri, "messages[0].content", "instructions"},
		{an, "messages[0].content", "system"},
		{an, "messages[1].content", "messages[0]"},
		{an, "messages[2].tool_calls[0].name", "messages[1]"},
		{an, "messages[4].tool_call_id", "messages[2].content[1]"},
		{an, "generation.max_output_tokens", "max_tokens"},
		{an, "generation.stop[0]", "stop_sequences"},
		{an, "tools[0].parameters", "tools[0].input_schema"},
		{an, "response_format.json_schema", "output_config.format.schema"},
		{an, "provider_options.top_k", "top_k"},
		{an, "tool_choice.disable_parallel_tool_calls", "tool_choice.disable_parallel_tool_use"},
		{an, "provider_options.server_tools[0]", "tools"},
	} {
		if got := tc.t.param(tc.field); got != tc.want {
			t.Errorf("%s param(%q) = %q, want %q", tc.t.format.name(), tc.field, got, tc.want)
		}
	}
}

// TestAnthropicBetaHeader: the anthropic-beta header's names, from every
// line, each once, in order; a value that is not a list of names is the
// client's error, naming the header.
func TestAnthropicBetaHeader(t *testing.T) {
	const body = `{"model":"mock/echo","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name  string
		lines []string
		want  []string
		fails bool
	}{
		{"none", nil, nil, false},
		{"one", []string{"interleaved-thinking-2025-05-14"}, []string{"interleaved-thinking-2025-05-14"}, false},
		{"a list, spaces and empty items", []string{" a-1 , ,b_2.x"}, []string{"a-1", "b_2.x"}, false},
		{"several lines, a name twice", []string{"a", "b,a"}, []string{"a", "b"}, false},
		{"a space inside a name", []string{"a b"}, nil, true},
		{"a semicolon", []string{"a;b"}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, l := range tc.lines {
				h.Add("anthropic-beta", l)
			}
			tr, fail := anthropic{}.decode([]byte(body), h)
			if tc.fails {
				if fail == nil || fail.status != http.StatusBadRequest || fail.param != "anthropic-beta" {
					t.Fatalf("failure %+v, want a 400 naming anthropic-beta", fail)
				}
				return
			}
			if fail != nil || !slices.Equal(tr.betas, tc.want) {
				t.Fatalf("betas %q, failure %+v; want %q", tr.betas, fail, tc.want)
			}
		})
	}
}

// TestMetadataLabelParam: a refused metadata label names the member the
// client wrote it in: OpenAI's user member (the label "user") as user,
// not as metadata["user"], which the client never sent; a label the
// metadata member set keeps its name; Anthropic's metadata.user_id as
// metadata.user_id.
func TestMetadataLabelParam(t *testing.T) {
	decode := func(f format, body string) *translated {
		t.Helper()
		tr, fail := f.decode([]byte(body), nil)
		if fail != nil {
			t.Fatal(fail.message)
		}
		return tr
	}
	chatUser := decode(openAI{}, `{"model":"m","messages":[{"role":"user","content":"x"}],"user":"u"}`)
	chatMetadata := decode(openAI{}, `{"model":"m","messages":[{"role":"user","content":"x"}],"metadata":{"user":"u"}}`)
	respUser := decode(responses{}, `{"model":"m","input":"x","user":"u"}`)
	msgUser := decode(anthropic{}, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"metadata":{"user_id":"u"}}`)
	for _, tc := range []struct {
		name        string
		t           *translated
		field, want string
	}{
		{"chat user", chatUser, `metadata["user"]`, "user"},
		{"chat metadata", chatMetadata, `metadata["user"]`, `metadata["user"]`},
		{"responses user", respUser, `metadata["user"]`, "user"},
		{"anthropic user_id", msgUser, `metadata["user_id"]`, "metadata.user_id"},
	} {
		if got := tc.t.param(tc.field); got != tc.want {
			t.Errorf("%s: param(%q) = %q, want %q", tc.name, tc.field, got, tc.want)
		}
	}
}
