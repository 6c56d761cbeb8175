package httpapi

import (
	"slices"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// Server tools (GenerateRequest.server_tools, from the llmrelay request
// member or a route's defaults) make a call a loop of model turns, with
// llmrelay running the tools between them. Neither vendor format has a
// place for tools the server ran: a client that saw their calls would take
// them for its own. So the doors show a call with server tools as one
// reply: each turn's text and reasoning as they stream, and only the tool
// calls left to the client (a call that ends with FINISH_REASON_TOOL_CALLS
// may have some beside the server's). The tool calls of such a call are
// held until it is known which ran at the server: a tool_result says so
// for its call; a later turn, for every call of the turns before it.
// tool_progress shows as the format's keep-alive.

// toolTurns holds a streamed call's tool-call deltas while server tools
// may run.
type toolTurns struct {
	// turn is the turn of the deltas held.
	turn uint32
	held []*llmrelayv1.GenerateEvent
	// ids are the held calls' ids by their index in the turn; ran the ids
	// of the calls a server tool answered.
	ids map[uint32]string
	ran map[string]bool
}

// hold keeps a tool-call delta of turn.
func (t *toolTurns) hold(ev *llmrelayv1.GenerateEvent) {
	t.next(ev.GetTurn())
	tc := ev.GetDelta().GetToolCall()
	if tc.GetId() != "" {
		if t.ids == nil {
			t.ids = map[uint32]string{}
		}
		t.ids[tc.GetIndex()] = tc.GetId()
	}
	t.held = append(t.held, proto.Clone(ev).(*llmrelayv1.GenerateEvent))
}

// next drops what was held of a turn before turn: its calls ran at the
// server (or the call would have ended).
func (t *toolTurns) next(turn uint32) {
	if turn != t.turn {
		t.turn, t.held = turn, t.held[:0]
		clear(t.ids)
	}
}

// discard drops the held deltas of an attempt that failed.
func (t *toolTurns) discard() {
	t.held = t.held[:0]
	clear(t.ids)
}

// ranAtServer records that a server tool answered the call id.
func (t *toolTurns) ranAtServer(id string) {
	if t.ran == nil {
		t.ran = map[string]bool{}
	}
	t.ran[id] = true
}

// left returns the held deltas of the calls left to the client, once the
// call ended with f: none when it ended at max_tool_turns (its calls are
// server tools llmrelay did not run).
func (t *toolTurns) left(f *llmrelayv1.Final) []*llmrelayv1.GenerateEvent {
	if f.GetFinishReason() == llmrelayv1.FinishReason_FINISH_REASON_MAX_TOOL_TURNS {
		return nil
	}
	left := slices.DeleteFunc(t.held, func(ev *llmrelayv1.GenerateEvent) bool {
		return t.ran[t.ids[ev.GetDelta().GetToolCall().GetIndex()]]
	})
	// The client's calls are numbered from 0, in the order they came.
	renumber := map[uint32]uint32{}
	for _, ev := range left {
		tc := ev.GetDelta().GetToolCall()
		n, ok := renumber[tc.GetIndex()]
		if !ok {
			n = uint32(len(renumber))
			renumber[tc.GetIndex()] = n
		}
		tc.Index = n
	}
	return left
}

// clientFinal returns f as a reply that is not streamed shows it: without
// the tool calls the server ran (its transcript's results name them), and
// without any at max_tool_turns. f itself is not changed.
func clientFinal(f *llmrelayv1.Final) *llmrelayv1.Final {
	if len(f.GetTranscript()) == 0 && f.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_MAX_TOOL_TURNS {
		return f // no server tools ran
	}
	ran := map[string]bool{}
	for _, m := range f.GetTranscript() {
		if m.GetServerTool() != "" {
			ran[m.GetToolCallId()] = true
		}
	}
	out := proto.Clone(f).(*llmrelayv1.Final)
	m := out.GetMessage()
	maxTurns := f.GetFinishReason() == llmrelayv1.FinishReason_FINISH_REASON_MAX_TOOL_TURNS
	m.ToolCalls = slices.DeleteFunc(m.ToolCalls, func(tc *llmrelayv1.ToolCall) bool { return maxTurns || ran[tc.GetId()] })
	m.Parts = nil // the blocks' order, with the server's calls gone, is the usual one
	return out
}
