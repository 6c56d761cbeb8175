package engine

import (
	"fmt"
	"slices"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// toolResults checks that a conversation's tool results answer its tool
// calls: each ROLE_TOOL message answers, by tool_call_id, a call of the
// last ROLE_ASSISTANT message before it that no result answered yet, with
// only ROLE_TOOL messages between them, in any order; and every call of
// an assistant message is answered before the next ROLE_USER or
// ROLE_ASSISTANT message. ROLE_SYSTEM messages may come among them (the
// adapters of Anthropic and Gemini send them apart from the
// conversation). A conversation that ends with an assistant message's
// calls, which no message follows, passes: what is left to answer them
// is the caller's to say.
//
// OpenAI and Anthropic refuse a conversation that breaks either rule, but
// only after a round trip (and a fallback spends more), while Gemini,
// which matches a result to its call by the call's name, may answer it:
// the first broken rule is a *provider.FieldError instead, on the result's
// messages[i].tool_call_id or the unanswered call's
// messages[i].tool_calls[j].id. It costs a pass over the roles of a
// conversation without tool calls, and allocates for none that keeps the
// proto's bound of 128 calls a message.
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
							Description: fmt.Sprintf("%q gets no tool result before the next user or assistant message: every tool call needs its result, "+
								"right after the assistant message that made it (the results in any order)", msgs[open].GetToolCalls()[j].GetId())}
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
// turn, or no call at all. The description names no other message: a
// door's client numbers its messages otherwise.
func orphanResult(msgs []*llmrelayv1.Message, i, open int, id string) error {
	fe := &provider.FieldError{Field: fmt.Sprintf("messages[%d].tool_call_id", i)}
	switch {
	case id == "":
		fe.Description = "is empty: a tool result names the tool call it answers by the call's id"
		return fe
	case slices.ContainsFunc(msgs[open+1:i], func(m *llmrelayv1.Message) bool {
		return m.GetRole() == llmrelayv1.Role_ROLE_TOOL && m.GetToolCallId() == id
	}):
		fe.Description = fmt.Sprintf("%q is the id of a tool call that another tool result answered already: send one result per call", id)
		return fe
	}
	for _, m := range msgs[:i] {
		if slices.ContainsFunc(m.GetToolCalls(), func(c *llmrelayv1.ToolCall) bool { return c.GetId() == id }) {
			fe.Description = fmt.Sprintf("%q is the id of a tool call of an earlier turn: a tool result goes right after the assistant message "+
				"that made the call, before the next user or assistant message", id)
			return fe
		}
	}
	fe.Description = fmt.Sprintf("%q is the id of no tool call of an earlier assistant message: "+
		"a tool result answers a call of the assistant message before it, by the call's id", id)
	return fe
}
