package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// Messages of the conversations below.
func userSays(text string) *llmrelayv1.Message {
	return &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Content: text}
}

func callsOf(ids ...string) *llmrelayv1.Message {
	m := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, &llmrelayv1.ToolCall{Id: id, Name: "lookup", Arguments: "{}"})
	}
	return m
}

func resultOf(id string) *llmrelayv1.Message {
	return &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: id, Content: "found"}
}

// TestToolResultsMustAnswerTheirCalls: a conversation whose tool result
// answers no call of the assistant message before it, or whose tool call
// gets no result before the next user or assistant message, is
// INVALID_ARGUMENT before any attempt (OpenAI and Anthropic refused it
// only after one, over the route's fallback too, and Gemini, which
// matches results by name, might have answered it), naming the field
// with a message a user can act on; results in any order, a system
// message among them, the results of server tools, ids llmrelay made up
// and a conversation that ends with the calls still pass.
func TestToolResultsMustAnswerTheirCalls(t *testing.T) {
	eng := newEngine(t)
	system := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_SYSTEM, Content: "be brief"}
	serverResult := resultOf("srv_1")
	serverResult.ServerTool = "everything/echo"
	made := provider.NewCallID()
	// A message of as many calls as a reply may hold, each id twice, and
	// their results, last call first: past 128 calls a result finds its
	// call by an index, which must answer as the search does.
	var ids []string
	for i := range provider.MaxToolCalls / 2 {
		ids = append(ids, fmt.Sprintf("call_%d", i), fmt.Sprintf("call_%d", i))
	}
	manyCalls := callsOf(ids...)
	answers := func(skip int) []*llmrelayv1.Message {
		var out []*llmrelayv1.Message
		for i := len(ids) - 1; i >= 0; i-- {
			if i != skip {
				out = append(out, resultOf(ids[i]))
			}
		}
		return out
	}
	conversation := func(msgs ...[]*llmrelayv1.Message) []*llmrelayv1.Message { return slices.Concat(msgs...) }
	for _, tc := range []struct {
		name      string
		messages  []*llmrelayv1.Message
		field     string // "": the call runs
		described string
	}{
		{"no tools", []*llmrelayv1.Message{userSays("hi"), {Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: "hello"}, userSays("bye")}, "", ""},
		{"results in the calls' order", []*llmrelayv1.Message{userSays("q"), callsOf("a", "b"), resultOf("a"), resultOf("b")}, "", ""},
		{"results in another order", []*llmrelayv1.Message{userSays("q"), callsOf("a", "b", "c"), resultOf("c"), resultOf("a"), resultOf("b"), userSays("thanks")}, "", ""},
		{"a system message among the results", []*llmrelayv1.Message{userSays("q"), callsOf("a", "b"), resultOf("a"), system, resultOf("b")}, "", ""},
		{"a server tool's result and the client's", []*llmrelayv1.Message{userSays("q"), callsOf("srv_1", "cli_1"), serverResult, resultOf("cli_1")}, "", ""},
		{"an id llmrelay made up", []*llmrelayv1.Message{userSays("q"), callsOf(made), resultOf(made)}, "", ""},
		{"two turns of calls", []*llmrelayv1.Message{userSays("q"), callsOf("a"), resultOf("a"), callsOf("b"), resultOf("b")}, "", ""},
		{"ids repeated across turns", []*llmrelayv1.Message{userSays("q"), callsOf("call_0"), resultOf("call_0"), userSays("again"), callsOf("call_0"), resultOf("call_0")}, "", ""},
		{"ending with the calls", []*llmrelayv1.Message{userSays("q"), callsOf("a")}, "", ""},
		{"as many calls as a reply holds, answered last first", conversation([]*llmrelayv1.Message{userSays("q"), manyCalls}, answers(-1), []*llmrelayv1.Message{userSays("thanks")}), "", ""},

		{"a result of no call", []*llmrelayv1.Message{userSays("q"), callsOf("a"), resultOf("a"), resultOf("zzz")},
			"messages[3].tool_call_id", `"zzz" is the id of no tool call of an earlier assistant message`},
		{"a result before any call", []*llmrelayv1.Message{userSays("q"), resultOf("a")},
			"messages[1].tool_call_id", `"a" is the id of no tool call`},
		{"a result without an id", []*llmrelayv1.Message{userSays("q"), callsOf("a"), resultOf("")},
			"messages[2].tool_call_id", "is empty"},
		{"a result after the next user message", []*llmrelayv1.Message{userSays("q"), callsOf("a"), resultOf("a"), userSays("and?"), resultOf("a")},
			"messages[4].tool_call_id", `"a" is the id of a tool call that another tool result answered already`},
		{"a result of an earlier turn's call", []*llmrelayv1.Message{userSays("q"), callsOf("a", "b"), resultOf("a"), resultOf("b"), userSays("more"), callsOf("c"), resultOf("a")},
			"messages[6].tool_call_id", `"a" is the id of a tool call of an earlier turn: a tool result goes right after the assistant message`},
		{"a call answered twice", []*llmrelayv1.Message{userSays("q"), callsOf("a", "b"), resultOf("a"), resultOf("a")},
			"messages[3].tool_call_id", "answered already: send one result per call"},
		{"a call unanswered before the user", []*llmrelayv1.Message{userSays("q"), callsOf("a", "b"), resultOf("b"), userSays("well?")},
			"messages[1].tool_calls[0].id", `"a" gets no tool result before the next user or assistant message`},
		{"one of many calls answered three times", conversation([]*llmrelayv1.Message{userSays("q"), manyCalls}, answers(-1), []*llmrelayv1.Message{resultOf("call_7")}),
			fmt.Sprintf("messages[%d].tool_call_id", 2+len(ids)), `"call_7" is the id of a tool call that another tool result answered already`},
		{"one of many calls unanswered", conversation([]*llmrelayv1.Message{userSays("q"), manyCalls}, answers(len(ids)-1), []*llmrelayv1.Message{userSays("well?")}),
			fmt.Sprintf("messages[1].tool_calls[%d].id", len(ids)-1), fmt.Sprintf("%q gets no tool result", ids[len(ids)-1])},
		{"a call unanswered before the next reply", []*llmrelayv1.Message{userSays("q"), callsOf("a"), callsOf("b"), resultOf("b")},
			"messages[1].tool_calls[0].id", `"a" gets no tool result`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &llmrelayv1.GenerateRequest{Model: "smart", Messages: tc.messages}
			rec, err := generate(t, eng, engine.Caller{}, req)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("error %v, want the call to run", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("the call ran (%v), want it refused on %s", render(rec.Events()), tc.field)
			}
			e := apierr.FromError(err)
			if e.Kind != apierr.InvalidArgument || e.Reason != apierr.ReasonInvalidRequest || len(e.FieldViolations) != 1 {
				t.Fatalf("error %v (%v, %s), want INVALID_ARGUMENT, INVALID_REQUEST with one field violation", err, e.Kind, e.Reason)
			}
			if v := e.FieldViolations[0]; v.GetField() != tc.field || !strings.Contains(v.GetDescription(), tc.described) {
				t.Errorf("field violation %s: %s, want %s: ...%s...", v.GetField(), v.GetDescription(), tc.field, tc.described)
			}
			if evs := rec.Events(); len(evs) > 0 {
				t.Errorf("the call sent %d events (%v), want it refused before any attempt", len(evs), render(evs))
			}
		})
	}
}
