package engine

import (
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// A provider may send a tool call's arguments, or a signature or redacted
// reasoning, in as many fragments as the output limit lets it (2 MiB by
// default: two million one-byte fragments). Each fragment must cost about
// its own size: appended to a string, each copied everything before it,
// and a hostile or broken upstream held a core for minutes (200,000
// fragments took 13 s). Counted in allocations, not time: a string append
// allocates once a fragment, a builder a few dozen times in all.
func TestReplyOfManyFragmentsIsAssembledInLinearTime(t *testing.T) {
	const n = 20000
	var res attemptResult
	allocs := testing.AllocsPerRun(1, func() {
		res = attemptResult{}
		for range n {
			res.addToolCall(provider.ToolCallDelta{Index: 0, ArgumentsDelta: "a", Signature: "s"})
			res.addReasoning(provider.ReasoningDelta{Index: 0, Signature: "s", Redacted: "r"})
		}
	})
	if allocs > 1000 {
		t.Errorf("assembling %d fragments of each field allocated %.0f times, want a few dozen (fragments copied what came before)", n, allocs)
	}
	msg := finalMessage(&res)
	if len(msg.GetToolCalls()) != 1 || len(msg.GetReasoning()) != 1 {
		t.Fatalf("final message %d tool calls, %d reasoning blocks; want 1 each", len(msg.GetToolCalls()), len(msg.GetReasoning()))
	}
	tc, r := msg.GetToolCalls()[0], msg.GetReasoning()[0]
	if tc.GetArguments() != strings.Repeat("a", n) || tc.GetSignature() != strings.Repeat("s", n) {
		t.Errorf("tool call arguments %d bytes, signature %d bytes; want %d each", len(tc.GetArguments()), len(tc.GetSignature()), n)
	}
	if r.GetSignature() != strings.Repeat("s", n) || r.GetRedacted() != strings.Repeat("r", n) {
		t.Errorf("reasoning signature %d bytes, redacted %d bytes; want %d each", len(r.GetSignature()), len(r.GetRedacted()), n)
	}
	if got := res.providerMessage().ToolCalls[0].Arguments; got != tc.GetArguments() {
		t.Errorf("the message sent back to a provider has %d bytes of arguments, want %d", len(got), n)
	}
}
