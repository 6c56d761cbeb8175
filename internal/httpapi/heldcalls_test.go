package httpapi

import (
	"bytes"
	"strconv"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// turnTakingCalls is what an upstream that interleaves its parallel calls
// can stream: the calls start, then their arguments come a fragment of
// each in turns, then each call's last fragment, which makes it whole, in
// turn. It returns those deltas, and the same calls one after another.
func turnTakingCalls(calls, fragments int) (interleaved, sequential []*llmrelayv1.Delta) {
	call := func(index int, id, args string) *llmrelayv1.Delta {
		return &llmrelayv1.Delta{ToolCall: &llmrelayv1.ToolCallDelta{Index: uint32(index), Id: id, Name: id, ArgumentsDelta: args}}
	}
	id := func(index int) string { return "call_" + strconv.Itoa(index) }
	for i := range calls {
		interleaved = append(interleaved, call(i, id(i), `{"q":"`))
	}
	for range fragments {
		for i := range calls {
			interleaved = append(interleaved, call(i, "", "xxxxxxxxx"))
		}
	}
	for i := range calls {
		interleaved = append(interleaved, call(i, "", `"}`))
	}
	for i := range calls {
		sequential = append(sequential, call(i, id(i), `{"q":"`))
		for range fragments {
			sequential = append(sequential, call(i, "", "xxxxxxxxx"))
		}
		sequential = append(sequential, call(i, "", `"}`))
	}
	return interleaved, sequential
}

// streamMessages writes deltas as the Messages door's stream does, through
// a final, and returns the stream and what it wrote.
func streamMessages(deltas []*llmrelayv1.Delta) (*messagesStream, []byte) {
	s := anthropic{}.stream(&replyInfo{requestID: "r", model: "m"}).(*messagesStream)
	var out []byte
	for _, d := range deltas {
		out = s.delta(out, d, 1)
	}
	out, _ = s.final(out, &llmrelayv1.Final{Message: &llmrelayv1.Message{}})
	return s, out
}

// TestMessagesStreamReplaysHeldCallsOnce: the Messages door's stream holds
// the deltas of the calls that interleave behind the open call's block,
// and the client sees each call whole in its block, as if the calls had
// come one after another, while the stream copies and replays each held
// delta once. It replayed, and copied to hold again, every delta that
// waited each time a call closed: for a thousand calls of a hundred
// fragments, 53 million copies and seconds of a core for one reply.
func TestMessagesStreamReplaysHeldCallsOnce(t *testing.T) {
	interleaved, sequential := turnTakingCalls(128, 16)
	var s *messagesStream
	var got []byte
	allocs := testing.AllocsPerRun(1, func() { s, got = streamMessages(interleaved) })
	if _, want := streamMessages(sequential); !bytes.Equal(got, want) {
		t.Errorf("interleaved calls streamed\n%s\nwant them as if they came one after another\n%s", got, want)
	}
	if s.replayed > len(interleaved) {
		t.Errorf("replayed %d held deltas for %d streamed: %.1f times each", s.replayed, len(interleaved), float64(s.replayed)/float64(len(interleaved)))
	}
	// A held delta is copied once; the output and the held list grow by
	// doubling.
	if allocs > 2*float64(len(interleaved)) {
		t.Errorf("%.0f allocations for %d deltas: %.1f each", allocs, len(interleaved), allocs/float64(len(interleaved)))
	}
}

// BenchmarkMessagesStreamHeldCalls streams a thousand interleaved calls
// of a hundred fragments each (1 MiB of arguments, 104K deltas), each
// finishing in turn, through the Messages door's stream.
func BenchmarkMessagesStreamHeldCalls(b *testing.B) {
	deltas, _ := turnTakingCalls(1024, 100)
	size := 0
	for _, d := range deltas {
		size += len(d.GetToolCall().GetArgumentsDelta())
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var out []byte
	for b.Loop() {
		s := anthropic{}.stream(&replyInfo{requestID: "r", model: "m"})
		for _, d := range deltas {
			out = s.delta(out[:0], d, 1)
		}
	}
}
