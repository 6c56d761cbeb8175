package gemini

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// BenchmarkDecode measures the decode path of one 20-chunk
// streamGenerateContent stream (testdata/bench_20.sse): bytes to events,
// one stream per op.
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
		if n != 41 {
			b.Fatalf("%d events, want 41", n)
		}
	}
}
