package httpapi_test

import (
	"strings"
	"testing"
)

// TestWholeNumbersWrittenAsFloats: JSON has one kind of number, so a
// whole number written 1000.0, 1e3 or 1.0e3 (Python clients that compute
// a limit as a float send 1000.0) is taken wherever the doors take a
// whole number, with its value; a fraction, a number past the range, -0
// where 0 is out of range, and strings are still refused, naming the
// member.
func TestWholeNumbersWrittenAsFloats(t *testing.T) {
	base, _ := doors(t, nil)
	const user = `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name, path, body string
		// want is what the reply's body holds: the value as applied
		// (echoed), or the refusal's message.
		status int
		want   string
	}{
		{"chat: max_completion_tokens 1000.0", "/v1/chat/completions",
			`{"model":"mock/echo","max_completion_tokens":1000.0,` + user + `}`, 200, `"choices"`},
		{"chat: max_tokens 1e3", "/v1/chat/completions",
			`{"model":"mock/echo","max_tokens":1e3,` + user + `}`, 200, `"choices"`},
		{"chat: n 1.0", "/v1/chat/completions",
			`{"model":"mock/echo","n":1.0,` + user + `}`, 200, `"choices"`},
		{"chat: llmrelay.max_tool_turns 2.0", "/v1/chat/completions",
			`{"model":"mock/echo","llmrelay":{"max_tool_turns":2.0},` + user + `}`, 200, `"choices"`},
		{"messages: max_tokens 1.0e3", "/v1/messages",
			`{"model":"mock/echo","max_tokens":1.0e3,` + user + `}`, 200, `"content"`},
		{"messages: max_tokens 10.0", "/v1/messages",
			`{"model":"mock/echo","max_tokens":10.0,` + user + `}`, 200, `"content"`},
		{"responses: max_output_tokens and max_tool_calls as floats", "/v1/responses",
			`{"model":"mock/echo","max_output_tokens":1000.0,"max_tool_calls":5e0,"input":"hi"}`, 200, `"max_output_tokens":1000,"max_tool_calls":5,`},
		{"embeddings: dimensions 16.0", "/v1/embeddings",
			`{"model":"mock/echo","dimensions":16.0,"input":"hi"}`, 200, `"embedding"`},

		{"chat: max_tokens 10.5", "/v1/chat/completions",
			`{"model":"mock/echo","max_tokens":10.5,` + user + `}`, 400, "max_tokens: must be a whole number from 1 to 1000000"},
		{"chat: max_tokens 1e400", "/v1/chat/completions",
			`{"model":"mock/echo","max_tokens":1e400,` + user + `}`, 400, "max_tokens: must be a whole number from 1 to 1000000"},
		{"chat: max_tokens a float64 would round to 1", "/v1/chat/completions",
			`{"model":"mock/echo","max_tokens":1.00000000000000001,` + user + `}`, 400, "max_tokens: must be a whole number from 1 to 1000000"},
		{"chat: max_tokens -0", "/v1/chat/completions",
			`{"model":"mock/echo","max_tokens":-0,` + user + `}`, 400, "max_tokens: must be a whole number from 1 to 1000000"},
		{"chat: max_tokens a string", "/v1/chat/completions",
			`{"model":"mock/echo","max_tokens":"1000",` + user + `}`, 400, "max_tokens: must be a whole number from 1 to 1000000"},
		{"chat: max_tokens NaN", "/v1/chat/completions",
			`{"model":"mock/echo","max_tokens":"NaN",` + user + `}`, 400, "max_tokens: must be a whole number from 1 to 1000000"},
		{"chat: n 1.5", "/v1/chat/completions",
			`{"model":"mock/echo","n":1.5,` + user + `}`, 400, "n: llmrelay returns one choice: n must be 1"},
		{"messages: max_tokens 1e-3", "/v1/messages",
			`{"model":"mock/echo","max_tokens":1e-3,` + user + `}`, 400, "max_tokens: must be a whole number from 1 to 1000000"},
		{"responses: max_tool_calls 2.5", "/v1/responses",
			`{"model":"mock/echo","max_tool_calls":2.5,"input":"hi"}`, 400, "max_tool_calls: must be a whole number"},
		{"embeddings: dimensions 4.5", "/v1/embeddings",
			`{"model":"mock/echo","dimensions":4.5,"input":"hi"}`, 400, "dimensions: must be a whole number from 1 to 65536"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, base, request{path: tc.path, key: sdkKey, body: tc.body})
			if r.status != tc.status || !strings.Contains(r.body, tc.want) {
				t.Errorf("%d %s\nwant %d holding %s", r.status, r.body, tc.status, tc.want)
			}
		})
	}
}
