package anthropic

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// BenchmarkDecode measures the decode path of one Messages API stream with
// 20 text deltas (testdata/bench_20.sse, 26 events with the framing ones):
// bytes to events, one stream per op.
func BenchmarkDecode(b *testing.B) {
	body, err := os.ReadFile("testdata/bench_20.sse")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	ctx := context.Background()
	for b.Loop() {
		s := httpx.NewStream(ctx, io.NopCloser(bytes.NewReader(body)), "", &decoder{})
		n := 0
		for {
			if _, err := s.Recv(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
			n++
		}
		_ = s.Close()
		if n != 23 {
			b.Fatalf("%d events, want 23", n)
		}
	}
}
