package httpapi

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// unfinishedCalls is what a hostile or broken upstream can stream: call
// 0's arguments an unfinished string whose fragments each end with a
// bracket, and between each two of its fragments another call that
// starts, up to provider.MaxToolCalls calls. It returns the deltas and the
// bytes of arguments they carry.
func unfinishedCalls(fragment int) ([]*llmrelayv1.Delta, int) {
	call := func(index uint32, id, args string) *llmrelayv1.Delta {
		return &llmrelayv1.Delta{ToolCall: &llmrelayv1.ToolCallDelta{Index: index, Id: id, Name: id, ArgumentsDelta: args}}
	}
	filler := strings.Repeat("x", fragment-1) + "}"
	deltas := []*llmrelayv1.Delta{call(0, "call_0", `{"q":"`)}
	size := len(`{"q":"`)
	for i := 1; i < provider.MaxToolCalls; i++ {
		deltas = append(deltas, call(uint32(i), "call_"+strconv.Itoa(i), `{}`), call(0, "", filler))
		size += len(`{}`) + len(filler)
	}
	return deltas, size
}

// TestStreamsReadToolArgumentsOnce: the Responses and Anthropic doors'
// streams tell whether a call's arguments are whole, when another call
// starts or a fragment ends with a bracket, reading each byte of them
// once. They used to read a call's arguments whole each time, so that an
// upstream that keeps them unfinished while it starts a thousand calls
// (unfinishedCalls) made them read a thousand times the reply: seconds of
// a core per call at the bounds of a reply.
func TestStreamsReadToolArgumentsOnce(t *testing.T) {
	deltas, size := unfinishedCalls(64)
	tests := []struct {
		name string
		read func() int // bytes of arguments the stream read
	}{
		{"responses", func() int {
			s := responses{}.stream(&replyInfo{requestID: "r", model: "m"}).(*responsesStream)
			var b []byte
			for _, d := range deltas {
				b = s.delta(b[:0], d, 1)
			}
			read := 0
			for _, c := range s.order {
				read += c.scan.read
			}
			return read
		}},
		{"anthropic", func() int {
			s := anthropic{}.stream(&replyInfo{requestID: "r", model: "m"}).(*messagesStream)
			var b []byte
			for _, d := range deltas {
				b = s.delta(b[:0], d, 1)
			}
			return s.args.read
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if read := tc.read(); read > size {
				t.Errorf("read %d bytes of arguments to tell whether they were whole, for %d bytes streamed: %.0f times each", read, size, float64(read)/float64(size))
			}
		})
	}
}

// TestJSONScan: a jsonScan tells of arguments what json.Valid tells, at
// each fragment, however they are cut.
func TestJSONScan(t *testing.T) {
	tests := []string{
		``, ` `, `{}`, ` {} `, `{"a":1}`, `{"a":[1,2,{"b":null}]}`, `[]`, `[ ]`, `[1,]`, `{"a":1,}`, `{,}`,
		`{"a" : true , "b":false}`, `{"a":tru}`, `{"a":nul}`, `{"a"}`, `{1:2}`, `{}}`, `{} {}`, `{}x`, `[[]]]`,
		`"x"`, `"x`, `"a\"b\\c\/d\b\f\n\r\t\u00e9"`, `"\u00g0"`, `"\x"`, "\"a\tb\"", "\"é\xff\"",
		`0`, `-`, `-0`, `-01`, `01`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `1.5e3 `, `12x`, `-a`, `.5`,
		`true`, `false`, `null`, `tru`, `truex`, `nulll`, `[true,false,null]`,
		// encoding/json's bound on nesting, and one past it.
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	}
	for _, args := range tests {
		cuts := []int{1, 2, 3, 7, len(args) + 1}
		if len(args) > 100 {
			// The nesting bounds: json.Valid at each byte would take long.
			cuts = []int{997, len(args) + 1}
		}
		for _, cut := range cuts {
			assertScansAsValid(t, args, cut)
		}
	}
}

// assertScansAsValid writes args to a jsonScan in fragments of cut bytes,
// twice (the second after a reset), and compares what it tells after each
// with json.Valid of the arguments so far.
func assertScansAsValid(t *testing.T, args string, cut int) {
	t.Helper()
	var s jsonScan
	for range 2 {
		s.reset()
		for end := 0; end < len(args); {
			start := end
			end = min(end+cut, len(args))
			s.write(args[start:end])
			if got, want := s.whole(), json.Valid([]byte(args[:end])); got != want {
				t.Fatalf("%.40q in fragments of %d: whole %v at byte %d, json.Valid %v", args, cut, got, end, want)
			}
		}
		if len(args) == 0 && s.whole() {
			t.Fatal("no arguments are whole")
		}
	}
}

func FuzzJSONScan(f *testing.F) {
	for _, seed := range []string{`{"city":"Paris"}`, `[1,-2.5e3,true,null,"\u00e9"]`, `{"a":{"b":[]}} `, `"x"`, `{}}`} {
		f.Add(seed, uint8(3))
	}
	f.Fuzz(func(t *testing.T, args string, cut uint8) {
		assertScansAsValid(t, args, int(cut)+1)
	})
}

// BenchmarkUnfinishedToolCalls streams unfinishedCalls with 1 KiB
// fragments (1 MiB of arguments) through each door that holds calls open
// until their arguments are whole.
func BenchmarkUnfinishedToolCalls(b *testing.B) {
	deltas, size := unfinishedCalls(1 << 10)
	for _, f := range []format{responses{}, anthropic{}} {
		b.Run(f.name(), func(b *testing.B) {
			b.SetBytes(int64(size))
			var out []byte
			for b.Loop() {
				s := f.stream(&replyInfo{requestID: "r", model: "m"})
				for _, d := range deltas {
					out = s.delta(out[:0], d, 1)
				}
			}
		})
	}
}
