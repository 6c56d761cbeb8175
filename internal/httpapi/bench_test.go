package httpapi

import (
	"net/http"
	"strconv"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// discardWriter is a ResponseWriter that keeps nothing, so that a
// benchmark measures the door's own work.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Flush()                      {}

// BenchmarkStream writes a 20-delta streamed reply in each format: the
// door's cost per stream beside the engine's (make bench measures the
// whole path). Each delta is written with no allocation once the frame
// buffer has grown.
func BenchmarkStream(b *testing.B) {
	deltas := make([]*llmrelayv1.GenerateEvent, 20)
	for i := range deltas {
		deltas[i] = text(1, "word"+strconv.Itoa(i)+" ")
	}
	fin := final(1, &llmrelayv1.Message{Content: "..."}, stop)
	for _, f := range []format{openAI{}, anthropic{}} {
		b.Run(f.name(), func(b *testing.B) {
			b.ReportAllocs()
			w := &discardWriter{h: http.Header{}}
			for b.Loop() {
				clear(w.h)
				x := newExchange(w, f, replyInfo{requestID: "0b7d6a8e-1f1c-4c55-9d7e-2a9e4f1c0d11", created: 1, model: "mock/echo", includeUsage: true}, true)
				for _, ev := range deltas {
					if err := x.Send(ev); err != nil {
						b.Fatal(err)
					}
				}
				if err := x.Send(fin); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDelta writes one more delta to a stream under way.
func BenchmarkDelta(b *testing.B) {
	ev := text(1, "word ")
	for _, f := range []format{openAI{}, anthropic{}} {
		b.Run(f.name(), func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			x := newExchange(w, f, replyInfo{requestID: "0b7d6a8e-1f1c-4c55-9d7e-2a9e4f1c0d11", model: "mock/echo"}, true)
			if err := x.Send(ev); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := x.Send(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDeltaDoesNotAllocate: once a stream's frame buffer has grown, a text
// delta is written without allocating, in either format.
func TestDeltaDoesNotAllocate(t *testing.T) {
	ev := text(1, "word ")
	for _, f := range []format{openAI{}, anthropic{}} {
		x := newExchange(&discardWriter{h: http.Header{}}, f, replyInfo{requestID: "0b7d6a8e-1f1c-4c55-9d7e-2a9e4f1c0d11", model: "mock/echo"}, true)
		if err := x.Send(ev); err != nil {
			t.Fatal(err)
		}
		if allocs := testing.AllocsPerRun(100, func() { _ = x.Send(ev) }); allocs != 0 {
			t.Errorf("%s: %v allocations per delta", f.name(), allocs)
		}
	}
}
