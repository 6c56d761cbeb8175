package anthropic

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// BenchmarkDecode measures the decode path of one Messages API stream with
// 20 text deltas (testdata/bench_20.sse, 26 events with the framing ones).
func BenchmarkDecode(b *testing.B) {
	pt.BenchmarkDecode(b, "bench_20.sse", "", func() httpx.Decoder { return &decoder{} }, 23)
}
