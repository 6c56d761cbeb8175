package httpapi

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// TestResponsesRequest: Responses requests in, the engine's requests out;
// what llmrelay cannot honour, and what needs state it does not keep, is
// refused by its wire name.
func TestResponsesRequest(t *testing.T) {
	runRequestCases(t, responses{}, []requestCase{
		{name: "an image_url written as an object (the Chat Completions shape)",
			body:      `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":{"url":"https://x/y.png"}}]}]}`,
			wantParam: "input[0].content[0].image_url", wantMsg: "input[0].content[0].image_url: must not be a JSON object"},
		{
			name: "a string input, instructions first whatever the order of the members",
			body: `{"model":"mock/echo","input":"hi","instructions":"be brief","stream":true,"max_output_tokens":64,"temperature":0.5,"top_p":0.9,
				"store":true,"metadata":{"team":"a"},"user":"u1","include":["reasoning.encrypted_content"],"stream_options":{"include_obfuscation":false}}`,
			want: `{"model":"mock/echo","messages":[{"role":"ROLE_SYSTEM","content":"be brief"},{"role":"ROLE_USER","content":"hi"}],
				"generation":{"maxOutputTokens":64,"temperature":0.5,"topP":0.9},"metadata":{"team":"a","user":"u1"}}`,
			stream: true,
		},
		{
			name: "message items, their type left out or not, content parts joined",
			body: `{"model":"m","input":[{"role":"developer","content":"rules"},
				{"type":"message","role":"user","content":[{"type":"input_text","text":"one"},{"type":"input_text","text":"two"}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_SYSTEM","content":"rules"},{"role":"ROLE_USER","content":"one\ntwo"}]}`,
		},
		{
			// A reply's items sent back as the SDKs give them (ToParam):
			// the reasoning, the message and the calls of one turn are one
			// assistant message; each output is a tool message.
			name: "a function call round trip",
			body: `{"model":"m","input":[
				{"role":"user","content":"weather in Paris and Rome?"},
				{"id":"rs_1","type":"reasoning","status":"completed","summary":[],"content":[{"type":"reasoning_text","text":"two calls"}],
				 "encrypted_content":"llmrelay:eyJmIjoibW9jayIsInMiOiJzaWcifQ"},
				{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Checking.","annotations":[],"logprobs":[]}]},
				{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"weather","arguments":"{\"city\":\"Paris\"}"},
				{"id":"fc_2","type":"function_call","status":"completed","call_id":"call_2","name":"weather","arguments":"{\"city\":\"Rome\"}"},
				{"type":"function_call_output","call_id":"call_1","output":"18C"},
				{"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"21C"}]}],
				"tools":[{"type":"function","name":"weather","description":"Weather now","parameters":{"type":"object"},"strict":true}],
				"tool_choice":{"type":"function","name":"weather"},"parallel_tool_calls":false}`,
			want: `{"model":"m","messages":[
				{"role":"ROLE_USER","content":"weather in Paris and Rome?"},
				{"role":"ROLE_ASSISTANT","content":"Checking.","reasoning":[{"text":"two calls","format":"mock","signature":"sig"}],
				 "toolCalls":[{"id":"call_1","name":"weather","arguments":"{\"city\":\"Paris\"}"},{"id":"call_2","name":"weather","arguments":"{\"city\":\"Rome\"}"}]},
				{"role":"ROLE_TOOL","toolCallId":"call_1","content":"18C"},
				{"role":"ROLE_TOOL","toolCallId":"call_2","content":"21C"}],
				"tools":[{"name":"weather","description":"Weather now","parameters":{"type":"object"}}],
				"toolChoice":{"mode":"TOOL_CHOICE_MODE_TOOL","name":"weather","disableParallelToolCalls":true}}`,
		},
		{
			// The npm SDK's responses.stream and responses.parse give a
			// reply's function calls parsed_arguments (null unless the tool
			// is strict) and its text parts parsed; a Codex-style loop sends
			// the items back as they came.
			name: "a reply's items as the SDKs' parse and stream helpers give them",
			body: `{"model":"m","input":[{"role":"user","content":"weather?"},
				{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Checking.","annotations":[],"logprobs":[],"parsed":null}]},
				{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"weather","arguments":"{\"city\":\"Paris\"}","parsed_arguments":{"city":"Paris"}},
				{"id":"fc_2","type":"function_call","status":"completed","call_id":"call_2","name":"time","arguments":"{}","parsed_arguments":null},
				{"type":"function_call_output","call_id":"call_1","output":"18C"},{"type":"function_call_output","call_id":"call_2","output":"noon"}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"weather?"},
				{"role":"ROLE_ASSISTANT","content":"Checking.","toolCalls":[{"id":"call_1","name":"weather","arguments":"{\"city\":\"Paris\"}"},{"id":"call_2","name":"time","arguments":"{}"}]},
				{"role":"ROLE_TOOL","toolCallId":"call_1","content":"18C"},{"role":"ROLE_TOOL","toolCallId":"call_2","content":"noon"}]}`,
		},
		{
			name: "OpenAI's own encrypted reasoning is dropped, its text kept",
			body: `{"model":"m","input":[{"role":"user","content":"x"},{"type":"reasoning","id":"rs_x","summary":[{"type":"summary_text","text":"thought"}],"encrypted_content":"gAAAA"},
				{"role":"assistant","content":"ok"}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"},{"role":"ROLE_ASSISTANT","content":"ok","reasoning":[{"text":"thought"}]}]}`,
		},
		{
			name: "json_schema text format is structured output",
			body: `{"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"city","strict":true,"schema":{"type":"object"}},"verbosity":"low"}}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"responseFormat":{"name":"city","jsonSchema":{"type":"object"}},"providerOptions":{"verbosity":"low"}}`,
		},
		{
			name: "json_object text format, reasoning effort",
			body: `{"model":"m","input":"x","text":{"format":{"type":"json_object"}},"reasoning":{"effort":"high","summary":"auto"}}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"responseFormat":{"jsonSchema":{"type":"object"}},"providerOptions":{"reasoning_effort":"high"}}`,
		},
		{
			name: "defaults of what llmrelay refuses are accepted",
			body: `{"model":"m","input":"x","background":false,"truncation":"disabled","top_logprobs":0,"service_tier":"auto","tool_choice":"none"}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"x"}],"toolChoice":{"mode":"TOOL_CHOICE_MODE_NONE"}}`,
		},
		{name: "previous_response_id", body: `{"model":"m","input":"x","previous_response_id":"resp_1"}`, wantParam: "previous_response_id",
			wantMsg: "previous_response_id: llmrelay keeps no response state (it is stateless, and stores nothing): send the whole conversation in input"},
		{name: "conversation", body: `{"model":"m","input":"x","conversation":"conv_1"}`, wantParam: "conversation",
			wantMsg: "conversation: llmrelay keeps no response state (it is stateless, and stores nothing): send the whole conversation in input"},
		{name: "an item reference", body: `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, wantParam: "input[0]",
			wantMsg: "input[0]: llmrelay keeps no response state (it is stateless, and stores nothing): send the whole conversation in input"},
		{name: "a built-in tool", body: `{"model":"m","input":"x","tools":[{"type":"file_search","vector_store_ids":["vs"]}]}`, wantParam: "tools[0].type",
			wantMsg: `tools[0].type: "file_search" tools are not supported by llmrelay: only function tools`},
		{
			name: "text and input_image parts in order",
			body: `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"Compare "},
				{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"},
				{"type":"input_text","text":" with "},{"type":"input_image","image_url":"https://x/y.png","detail":"auto"},{"type":"input_text","text":"."}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","content":"Compare  with .","parts":[{"text":"Compare "},
				{"image":{"data":"iVBORw0KGgo=","mediaType":"image/png","detail":"IMAGE_DETAIL_LOW"}},
				{"text":" with "},{"image":{"url":"https://x/y.png","detail":"IMAGE_DETAIL_AUTO"}},{"text":"."}]}]}`,
		},
		{name: "an image by file_id", body: `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1","detail":"auto"}]}]}`,
			wantParam: "input[0].content[0].file_id",
			wantMsg:   `input[0].content[0].file_id: llmrelay has no Files API: send the image in image_url, an https URL or a data: URL`},
		{name: "an image without its URL", body: `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","detail":"auto"}]}]}`,
			wantParam: "input[0].content[0].image_url", wantMsg: `input[0].content[0].image_url: is required`},
		{name: "an image's data URL with bad base64", body: `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,!!!"}]}]}`,
			wantParam: "input[0].content[0].image_url", wantMsg: `input[0].content[0].image_url: the image's data is not base64`},
		{name: "an image's unknown detail", body: `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x/y.png","detail":"ultra"}]}]}`,
			wantParam: "input[0].content[0].detail", wantMsg: `input[0].content[0].detail: must be auto, low, high or original`},
		{name: "an image of detail original", body: `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x/scan.png","detail":"original"}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_USER","parts":[{"image":{"url":"https://x/scan.png","detail":"IMAGE_DETAIL_ORIGINAL"}}]}]}`},
		{name: "an image of detail original in a function call's output", body: `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"https://x/scan.png","detail":"original"}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_TOOL","toolCallId":"c","parts":[{"image":{"url":"https://x/scan.png","detail":"IMAGE_DETAIL_ORIGINAL"}}]}]}`},
		{name: "an image in an assistant message", body: `{"model":"m","input":[{"role":"assistant","content":[{"type":"input_image","image_url":"https://x/y.png"}]}]}`,
			wantParam: "input[0].content[0].type", wantMsg: `input[0].content[0].type: only user messages and function call outputs carry input_image parts`},
		{
			name: "text and input_image parts in a function call's output, in order",
			body: `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"Screen: "},
				{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"high"},{"type":"input_image","image_url":"https://x/y.png"}]}]}`,
			want: `{"model":"m","messages":[{"role":"ROLE_TOOL","toolCallId":"c","content":"Screen: ","parts":[{"text":"Screen: "},
				{"image":{"data":"iVBORw0KGgo=","mediaType":"image/png","detail":"IMAGE_DETAIL_HIGH"}},{"image":{"url":"https://x/y.png"}}]}]}`,
		},
		{name: "an image by file_id in a function call's output", body: `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","file_id":"file-1"}]}]}`,
			wantParam: "input[0].output[0].file_id",
			wantMsg:   `input[0].output[0].file_id: llmrelay has no Files API: send the image in image_url, an https URL or a data: URL`},
		{name: "a file in a function call's output", body: `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_file","file_id":"file-1"}]}]}`,
			wantParam: "input[0].output[0].type",
			wantMsg:   `input[0].output[0].type: "input_file" parts are not supported by llmrelay: messages carry text, and user messages and function call outputs images (input_image)`},
		{name: "a file part", body: `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]}`, wantParam: "input[0].content[0].type",
			wantMsg: `input[0].content[0].type: "input_file" parts are not supported by llmrelay: messages carry text, and user messages and function call outputs images (input_image)`},
		{name: "another item", body: `{"model":"m","input":[{"type":"web_search_call","id":"ws_1","action":{}}]}`, wantParam: "input[0].type",
			wantMsg: `input[0].type: "web_search_call" items are not supported by llmrelay: input holds message, function_call, function_call_output and reasoning items`},
		{name: "an unknown member of an item", body: `{"model":"m","input":[{"role":"user","content":"x","author":"bob"}]}`, wantParam: "input[0]",
			wantMsg: "input[0]: unknown field \"author\""},
		{name: "background", body: `{"model":"m","input":"x","background":true}`, wantParam: "background", wantMsg: "background: not supported by llmrelay"},
		{name: "logprobs", body: `{"model":"m","input":"x","include":["message.output_text.logprobs"]}`, wantParam: "include[0]",
			wantMsg: "include[0]: not supported by llmrelay: its replies carry no logprobs"},
		{name: "an unknown member", body: `{"model":"m","input":"x","temprature":1}`, wantParam: "temprature", wantMsg: "temprature: unknown parameter"},
		{name: "a json_schema without its schema", body: `{"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"n"}}}`,
			wantParam: "text.format.schema", wantMsg: "text.format.schema: required with type json_schema"},
	})
}

// TestResponsesParam: the engine's field paths name the Responses
// request's members, input items by their place in input.
func TestResponsesParam(t *testing.T) {
	tr, fail := responses{}.decode([]byte(`{"model":"m","instructions":"s","input":[{"role":"user","content":"a"},
		{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"r"}]}`), nil)
	if fail != nil {
		t.Fatal(fail.message)
	}
	for field, want := range map[string]string{
		"messages[0].content":          "instructions",
		"messages[2].tool_calls[0]":    "input[1]",
		"messages[3].tool_call_id":     "input[2]",
		"generation.max_output_tokens": "max_output_tokens",
		"tools[1].parameters":          "tools[1].parameters",
		"response_format.json_schema":  "text.format.schema",
		"tool_choice.name":             "tool_choice.name",
		"provider_options.faults[0]":   "llmrelay.provider_options.faults[0]",
	} {
		if got := tr.param(field); got != want {
			t.Errorf("param(%q) = %q, want %q", field, got, want)
		}
	}
	if got := len(tr.req.GetMessages()); got != 4 || tr.req.GetMessages()[2].GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
		t.Errorf("messages %v", tr.req.GetMessages())
	}
}

// TestResponsesOptionParam: a provider option the request's own members
// set is named by the member the client wrote: reasoning.effort and
// text.verbosity, not the option's name (reasoning_effort, verbosity),
// which is the Chat Completions member.
func TestResponsesOptionParam(t *testing.T) {
	tr, fail := responses{}.decode([]byte(`{"model":"m","input":"x","reasoning":{"effort":"high"},"text":{"verbosity":"low"},"service_tier":"flex"}`), nil)
	if fail != nil {
		t.Fatal(fail.message)
	}
	for field, want := range map[string]string{
		"provider_options.reasoning_effort": "reasoning.effort",
		"provider_options.verbosity":        "text.verbosity",
		"provider_options.service_tier":     "service_tier",
	} {
		if got := tr.param(field); got != want {
			t.Errorf("param(%q) = %q, want %q", field, got, want)
		}
	}
}

// TestResponsesToolImageParam: the engine's paths into a function call
// output's images name its output parts' members.
func TestResponsesToolImageParam(t *testing.T) {
	tr, fail := responses{}.decode([]byte(`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},
		{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"http://x/y.png","detail":"low"}]}]}`), nil)
	if fail != nil {
		t.Fatal(fail.message)
	}
	for field, want := range map[string]string{
		"messages[1].parts[1].image.url":    "input[1].output[1].image_url",
		"messages[1].parts[1].image.detail": "input[1].output[1].detail",
		"messages[1].parts[0].text":         "input[1].output[0].text",
	} {
		if got := tr.param(field); got != want {
			t.Errorf("param(%q) = %q, want %q", field, got, want)
		}
	}
}
