package mock

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// scriptOptions decodes provider_options as a request's JSON would.
func scriptOptions(t *testing.T, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// reply streams one attempt and returns its text, its tool calls and its
// finish reason.
func reply(t *testing.T, req *provider.Request) (string, []provider.ToolCall, provider.FinishReason) {
	t.Helper()
	s, err := New().Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var calls []provider.ToolCall
	var finish provider.FinishReason
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return text.String(), calls, finish
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case provider.EventText:
			text.WriteString(ev.Text)
		case provider.EventToolCall:
			d := ev.ToolCall
			for len(calls) <= d.Index {
				calls = append(calls, provider.ToolCall{})
			}
			c := &calls[d.Index]
			c.ID += d.ID
			c.Name += d.Name
			c.Arguments += d.ArgumentsDelta
		case provider.EventFinish:
			finish = ev.FinishReason
		}
	}
}

// TestScriptCallsThenAnswersFromTheResults: a script's turn calls its
// tools; past the script the model answers from the tool results.
func TestScriptCallsThenAnswersFromTheResults(t *testing.T) {
	opts := scriptOptions(t, `{"script": [{"text": "Let me check. ", "tool_calls": [{"name": "everything__echo", "arguments": {"message": "hi"}}]}]}`)
	tools := []provider.Tool{{Name: "everything__echo"}}
	msgs := []provider.Message{{Role: provider.RoleUser, Content: "say hi"}}
	req := &provider.Request{Model: ModelEcho, Messages: msgs, Options: opts, Tools: tools, Attempt: 1}
	text, calls, finish := reply(t, req)
	if text != "Let me check. " || finish != provider.FinishToolCalls || len(calls) != 1 ||
		calls[0] != (provider.ToolCall{ID: "mock_1_0", Name: "everything__echo", Arguments: `{"message":"hi"}`}) {
		t.Fatalf("turn 1: %q %+v %v", text, calls, finish)
	}
	req.Messages = append(msgs,
		provider.Message{Role: provider.RoleAssistant, Content: text, ToolCalls: calls},
		provider.Message{Role: provider.RoleTool, ToolCallID: "mock_1_0", Content: "Echo: hi"})
	req.Attempt = 2
	text, calls, finish = reply(t, req)
	if text != "Echo: hi" || len(calls) != 0 || finish != provider.FinishStop {
		t.Fatalf("turn 2: %q %+v %v", text, calls, finish)
	}
	// A new user message starts the script again.
	req.Messages = append(req.Messages, provider.Message{Role: provider.RoleAssistant, Content: text}, provider.Message{Role: provider.RoleUser, Content: "again"})
	if _, calls, _ = reply(t, req); len(calls) != 1 {
		t.Fatalf("after a new user message: %+v", calls)
	}
}

func TestScriptErrors(t *testing.T) {
	for _, tc := range []struct{ opts, field string }{
		{`{"script": {}}`, "provider_options.script"},
		{`{"script": [{}]}`, "provider_options.script[0]"},
		{`{"script": [{"tool_calls": [{"name": "nosuch"}]}]}`, "provider_options.script[0].tool_calls[0].name"},
		{`{"script": [{"tool_calls": [{"name": "f", "arguments": 3}]}]}`, "provider_options.script[0].tool_calls[0].arguments"},
		{`{"script": [{"tool_calls": [{"name": "f", "id": "x"}]}]}`, "provider_options.script[0].tool_calls[0].id"},
	} {
		req := &provider.Request{Model: ModelEcho, Messages: []provider.Message{{Role: provider.RoleUser, Content: "x"}}, Options: scriptOptions(t, tc.opts), Tools: []provider.Tool{{Name: "f"}}}
		var fe *provider.FieldError
		if err := New().ValidateRequest(req); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a field error on %s", tc.opts, err, tc.field)
		}
	}
}

// TestScriptHonoursAtMostOneCall: a script's turn with two calls calls
// both, or only the first when the request asks for at most one call per
// reply; a fault's calls too.
func TestScriptHonoursAtMostOneCall(t *testing.T) {
	script := scriptOptions(t, `{"script": [{"tool_calls": [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]}]}`)
	fault := scriptOptions(t, `{"faults": [{"tool_calls": [{"id": "x", "name": "a", "arguments": "{}"}, {"id": "y", "name": "b", "arguments": "{}"}]}]}`)
	tests := []struct {
		name   string
		opts   map[string]any
		single bool
		want   []string
	}{
		{"a script", script, false, []string{"a", "b"}},
		{"a script, one call asked", script, true, []string{"a"}},
		{"a fault", fault, false, []string{"a", "b"}},
		{"a fault, one call asked", fault, true, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &provider.Request{Model: ModelEcho, Messages: []provider.Message{{Role: provider.RoleUser, Content: "go"}},
				Options: tc.opts, Tools: []provider.Tool{{Name: "a"}, {Name: "b"}}, Attempt: 1,
				ToolChoice: provider.ToolChoice{DisableParallel: tc.single}}
			_, calls, finish := reply(t, req)
			var names []string
			for _, c := range calls {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tc.want) || finish != provider.FinishToolCalls {
				t.Fatalf("calls %v, finish %v; want %v, tool calls", names, finish, tc.want)
			}
		})
	}
}
