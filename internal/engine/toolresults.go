package engine

import (
	"fmt"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// toolResults checks that a conversation's tool results answer its tool
// calls: each ROLE_TOOL message answers, by tool_call_id, a call of the
// last ROLE_ASSISTANT message before it that no result answered yet, with
// only ROLE_TOOL (and ROLE_SYSTEM) messages between them, in any order;
// and every call of an assistant message is answered before the next
// ROLE_USER or ROLE_ASSISTANT message. A conversation that ends with an
// assistant message's calls, which no message follows, passes.
//
// OpenAI and Anthropic refuse a conversation that breaks either rule, but
// only after a round trip (and a fallback spends more), while Gemini,
// which matches a result to its call by the call's name, may answer it:
// the first broken rule is a *provider.FieldError instead, on the result's
// messages[i].tool_call_id or the unanswered call's
// messages[i].tool_calls[j].id. A conversation without tool calls and
// results costs a pass over its roles, and none allocates.
func toolResults(msgs []*llmrelayv1.Message) error {
	open := -1 // the assistant message whose calls the results answer, -1 for none
	var answered []bool
	var buf [128]bool // tool_calls' max_items: room for any valid message's calls
	for i, m := range msgs {
		switch m.GetRole() {
		case llmrelayv1.Role_ROLE_TOOL:
			id := m.GetToolCallId()
			j := unansweredCall(msgs, open, answered, id)
			if j < 0 {
				return orphanResult(msgs, i, open, id)
			}
			answered[j] = true
		case llmrelayv1.Role_ROLE_USER, llmrelayv1.Role_ROLE_ASSISTANT:
			if open >= 0 {
				for j, ok := range answered {
					if !ok {
						return &provider.FieldError{Field: fmt.Sprintf("messages[%d].tool_calls[%d].id", open, j),
							Description: fmt.Sprintf("%q is the id of a tool call no ROLE_TOOL message answers before messages[%d]: "+
								"every tool call needs its result, in ROLE_TOOL messages right after the assistant message "+
								"(in any order), before the next user or assistant message", msgs[open].GetToolCalls()[j].GetId(), i)}
					}
				}
			}
			open, answered = -1, nil
			if n := len(m.GetToolCalls()); n > 0 {
				open = i
				if n <= len(buf) {
					answered = buf[:n]
					clear(answered)
				} else {
					answered = make([]bool, n)
				}
			}
		}
	}
	return nil
}

// unansweredCall returns the index of the first call of msgs[open] with
// the id that no result answered yet, -1 for none.
func unansweredCall(msgs []*llmrelayv1.Message, open int, answered []bool, id string) int {
	if open < 0 {
		return -1
	}
	for j, c := range msgs[open].GetToolCalls() {
		if !answered[j] && c.GetId() == id {
			return j
		}
	}
	return -1
}

// orphanResult is the error of msgs[i], a tool result with the id that
// answers no open call of msgs[open] (-1: there is none), saying why: it
// has no id, it answers a call answered already, a call of an earlier
// turn, or no call at all.
func orphanResult(msgs []*llmrelayv1.Message, i, open int, id string) error {
	field := fmt.Sprintf("messages[%d].tool_call_id", i)
	if id == "" {
		return &provider.FieldError{Field: field, Description: "is empty: a ROLE_TOOL message is the result of a tool call, and names the call by its id (ToolCall.id)"}
	}
	for k := i - 1; k >= 0; k-- {
		m := msgs[k]
		switch {
		case k > open && m.GetRole() == llmrelayv1.Role_ROLE_TOOL && m.GetToolCallId() == id:
			return &provider.FieldError{Field: field, Description: fmt.Sprintf("%q answers the tool call that messages[%d] answered already: send one result per call", id, k)}
		case m.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT:
			continue
		}
		for _, c := range m.GetToolCalls() {
			if c.GetId() == id {
				return &provider.FieldError{Field: field, Description: fmt.Sprintf("%q is the id of a tool call of messages[%d], but messages[%d] came after that call: "+
					"a tool result goes right after the assistant message that made the call, before the next user or assistant message", id, k, k+1+nextTurn(msgs[k+1:]))}
			}
		}
	}
	return &provider.FieldError{Field: field, Description: fmt.Sprintf("%q is the id of no tool call of an earlier assistant message: "+
		"a ROLE_TOOL message answers a call of the assistant message before it (ToolCall.id)", id)}
}

// nextTurn returns the index in msgs of its first user or assistant
// message, len(msgs) when it has none.
func nextTurn(msgs []*llmrelayv1.Message) int {
	for i, m := range msgs {
		if r := m.GetRole(); r == llmrelayv1.Role_ROLE_USER || r == llmrelayv1.Role_ROLE_ASSISTANT {
			return i
		}
	}
	return len(msgs)
}
