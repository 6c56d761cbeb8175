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
// conversation without tool calls, and allocates for none whose messages
// have at most 128 calls each. A result looks for its call among them;
// past 128 (a message may have provider.MaxToolCalls, as many as a reply)
// it finds it by an index of the message's calls instead, so that a
// thousand results cost a thousand lookups, not a million comparisons.
func toolResults(msgs []*llmrelayv1.Message) error {
	open := -1 // the assistant message whose calls the results answer, -1 for none
	var answered []bool
	var buf [128]bool // room for the calls of most messages
	var byID *callIndex
	for i, m := range msgs {
		switch m.GetRole() {
		case llmrelayv1.Role_ROLE_TOOL:
			id := m.GetToolCallId()
			var j int
			if byID != nil {
				j = byID.take(id)
			} else {
				j = unansweredCall(msgs, open, answered, id)
			}
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
			open, answered, byID = -1, nil, nil
			if n := len(m.GetToolCalls()); n > 0 {
				open = i
				if n <= len(buf) {
					answered = buf[:n]
					clear(answered)
				} else {
					answered = make([]bool, n)
					byID = indexCalls(m.GetToolCalls())
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

// callIndex finds the unanswered calls of a message by their ids, each
// id's calls in the message's order.
type callIndex struct {
	first map[string]int // an id's first unanswered call
	next  []int          // the call with the same id after each, -1 for none
}

func indexCalls(calls []*llmrelayv1.ToolCall) *callIndex {
	x := &callIndex{first: make(map[string]int, len(calls)), next: make([]int, len(calls))}
	for j := len(calls) - 1; j >= 0; j-- {
		id := calls[j].GetId()
		x.next[j] = -1
		if k, ok := x.first[id]; ok {
			x.next[j] = k
		}
		x.first[id] = j
	}
	return x
}

// take returns the index of the first unanswered call with the id and
// marks it answered, -1 for none, as unansweredCall finds it.
func (x *callIndex) take(id string) int {
	j, ok := x.first[id]
	if !ok {
		return -1
	}
	if x.next[j] < 0 {
		delete(x.first, id)
	} else {
		x.first[id] = x.next[j]
	}
	return j
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
