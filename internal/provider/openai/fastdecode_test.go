package openai

import (
	"bufio"
	"bytes"
	"os"
	"testing"
)

// TestDecodeFastTakesTheCommonChunks checks that the fast path does the
// work it exists for, every chunk of a plain text stream, and leaves tool
// calls and errors to encoding/json. (That it agrees with encoding/json is
// FuzzDecodeFast's job.)
func TestDecodeFastTakesTheCommonChunks(t *testing.T) {
	tests := []struct {
		file string
		want bool
	}{
		{"bench_20.sse", true},
		{"text.sse", true},
		{"tool_calls.sse", false},
		{"recorded/deepseek_reasoner_reasoning_content.sse", true},
		{"recorded/xai_grok3mini_reasoning_content.sse", true},
		{"recorded/groq_qwen3_delta_reasoning.sse", true},
		{"recorded/openai_gpt4o_refusal.sse", true},
		{"recorded/magistral_medium_thinking_parts_then_string.sse", false},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			taken, lines := 0, 0
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
				if !ok || bytes.Equal(data, doneMarker) {
					continue
				}
				lines++
				var c chunk
				if decodeFast(data, &c) {
					taken++
				}
			}
			if tc.want && taken != lines {
				t.Errorf("decodeFast took %d of %d chunks, want all", taken, lines)
			}
			if !tc.want && taken == lines {
				t.Errorf("decodeFast took all %d chunks, want the tool-call and content-part chunks left to encoding/json", lines)
			}
		})
	}
	for _, data := range []string{
		`{"error":{"message":"boom","type":"server_error"}}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a"}]}}]}`,
		`null`,
	} {
		if decodeFast([]byte(data), &chunk{}) {
			t.Errorf("decodeFast took %s, want it left to encoding/json", data)
		}
	}
}
