package gemini

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// BenchmarkDecode measures the decode path of one 20-chunk
// streamGenerateContent stream (testdata/bench_20.sse).
func BenchmarkDecode(b *testing.B) {
	pt.BenchmarkDecode(b, "bench_20.sse", "", func() httpx.Decoder { return &decoder{} }, 41)
}
