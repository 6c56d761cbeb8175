package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// BenchmarkDecode measures the decode path of one 20-chunk Chat
// Completions stream (testdata/bench_20.sse): bytes to events, one stream
// per op.
func BenchmarkDecode(b *testing.B) {
	pt.BenchmarkDecode(b, "bench_20.sse", "error", func() httpx.Decoder { return &decoder{} }, 20)
}

// BenchmarkDecodeEncodingJSON is BenchmarkDecode with every chunk decoded
// by encoding/json, as before decodeFast.
func BenchmarkDecodeEncodingJSON(b *testing.B) {
	pt.BenchmarkDecode(b, "bench_20.sse", "error", func() httpx.Decoder { return &decoder{slowOnly: true} }, 20)
}

// BenchmarkDecodeReasoning measures the decode path of a recorded DeepSeek
// reasoning stream (reasoning_content deltas, then text, usage with
// details): the fast path takes every chunk.
func BenchmarkDecodeReasoning(b *testing.B) {
	pt.BenchmarkDecode(b, "recorded/deepseek_reasoner_reasoning_content.sse", "error", func() httpx.Decoder { return &decoder{} }, 22)
}

// BenchmarkDecodeReasoningEncodingJSON is BenchmarkDecodeReasoning with
// every chunk decoded by encoding/json.
func BenchmarkDecodeReasoningEncodingJSON(b *testing.B) {
	pt.BenchmarkDecode(b, "recorded/deepseek_reasoner_reasoning_content.sse", "error", func() httpx.Decoder { return &decoder{slowOnly: true} }, 22)
}

// BenchmarkDecodePlainScanner is the baseline BenchmarkDecode is held to:
// a bufio.Scanner over the same body and encoding/json into a fresh chunk
// per line, with no SSE handling beyond the "data: " prefix.
func BenchmarkDecodePlainScanner(b *testing.B) {
	body, err := os.ReadFile("testdata/bench_20.sse")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(body))
		var events []provider.Event
		for sc.Scan() {
			line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
			if !ok || bytes.Equal(line, doneMarker) {
				continue
			}
			var c chunk
			if err := json.Unmarshal(line, &c); err != nil {
				b.Fatal(err)
			}
			for _, ch := range c.Choices {
				if ch.Delta.Content.Text != "" {
					events = append(events, provider.Event{Kind: provider.EventText, Text: ch.Delta.Content.Text})
				}
			}
		}
		if len(events) != 18 {
			b.Fatalf("%d events", len(events))
		}
	}
}

// BenchmarkStreamLoopback measures a whole attempt over loopback HTTP: the
// request, a 20-chunk stream from openaitest, and its decoding.
func BenchmarkStreamLoopback(b *testing.B) {
	s := openaitest.Start(b, openaitest.Options{Chunks: 20})
	p, err := New(provider.Config{Kind: Kind, BaseURL: s.URL()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(httpx.CloseIdleConnections)
	req := pt.NewRequest("fake")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r := pt.Collect(ctx, p, req); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}
