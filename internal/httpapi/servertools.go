package httpapi

import (
	"slices"
	"strings"

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

// clientFinal returns f as a reply that is not streamed shows it: the
// text and reasoning of every turn, as a streamed reply shows them
// (withEarlierTurns), without the tool calls the server ran (its
// transcript's results name them), and without any at max_tool_turns. f
// itself is not changed.
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
	withEarlierTurns(m, f.GetTranscript())
	return out
}

// withEarlierTurns puts the text and reasoning of the turns before the
// last, which a streamed reply shows as they come, before m's own (the
// last turn's, whose reply ends the transcript): its content is every
// turn's text, concatenated, its reasoning every turn's blocks, and its
// parts say where each turn's blocks go, each turn's text a block of its
// own (as Anthropic's format and OpenAI Responses stream it: a content
// block, a message item), in the usual order: reasoning,
// text, then m's provider tool blocks and tool calls. m is left as it is
// when the earlier turns said nothing.
func withEarlierTurns(m *llmrelayv1.Message, transcript []*llmrelayv1.Message) {
	var earlier []*llmrelayv1.Message
	for _, t := range transcript {
		if t.GetRole() == llmrelayv1.Role_ROLE_ASSISTANT {
			earlier = append(earlier, t)
		}
	}
	if len(earlier) == 0 {
		return
	}
	earlier = earlier[:len(earlier)-1] // m's turn
	if !slices.ContainsFunc(earlier, func(t *llmrelayv1.Message) bool { return t.GetContent() != "" || len(t.GetReasoning()) > 0 }) {
		return
	}
	var content strings.Builder
	var reasoning []*llmrelayv1.Reasoning
	var parts []*llmrelayv1.Part
	turn := func(text string, rs []*llmrelayv1.Reasoning) {
		for _, r := range rs {
			parts = append(parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_Reasoning{Reasoning: uint32(len(reasoning))}})
			reasoning = append(reasoning, r)
		}
		if text != "" {
			parts = append(parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_Text{Text: text}})
			content.WriteString(text)
		}
	}
	for _, t := range earlier {
		turn(t.GetContent(), t.GetReasoning())
	}
	turn(m.GetContent(), m.GetReasoning())
	for i := range m.GetProviderTools() {
		parts = append(parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_ProviderTool{ProviderTool: uint32(i)}})
	}
	for i := range m.GetToolCalls() {
		parts = append(parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_ToolCall{ToolCall: uint32(i)}})
	}
	m.Content, m.Reasoning, m.Parts = content.String(), reasoning, parts
}
