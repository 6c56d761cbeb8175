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
		// memo: the chunks start with fields decodeFast skips (id, model,
		// created...); each that starts as the chunk before is read from
		// its choices.
		memo bool
	}{
		{"bench_20.sse", true, true},
		{"text.sse", true, false},
		{"tool_calls.sse", false, false},
		{"recorded/deepseek_reasoner_reasoning_content.sse", true, true},
		{"recorded/xai_grok3mini_reasoning_content.sse", true, true},
		{"recorded/groq_qwen3_delta_reasoning.sse", true, true},
		{"recorded/openai_gpt4o_refusal.sse", true, true},
		{"recorded/magistral_medium_thinking_parts_then_string.sse", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			taken, lines, remembered, same := 0, 0, 0, 0
			var m prefixMemo
			var before []byte
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
				if !ok || bytes.Equal(data, doneMarker) {
					continue
				}
				lines++
				if m.match(data) > 0 {
					remembered++
				}
				start := data[:max(0, bytes.Index(data, []byte(`"choices"`)))]
				if len(start) > 0 && bytes.Equal(start, before) {
					same++
				}
				before = append(before[:0], start...)
				var c chunk
				if decodeFast(data, &c, &m) {
					taken++
				}
			}
			if tc.memo && (remembered != same || same < lines/2) {
				t.Errorf("%d of %d chunks read from their choices, want the %d that start as the chunk before", remembered, lines, same)
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
		if decodeFast([]byte(data), &chunk{}, nil) {
			t.Errorf("decodeFast took %s, want it left to encoding/json", data)
		}
	}
}

// TestDecodeFastReadsAStreamsStartOnce checks the memo of the fields every
// chunk of a stream starts with: a chunk that starts as the one before is
// read from its first field that matters, and one that starts otherwise is
// read whole, its skipped fields checked again.
func TestDecodeFastReadsAStreamsStartOnce(t *testing.T) {
	const start = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",`
	decode := func(m *prefixMemo, data string) (string, bool) {
		var c chunk
		if !decodeFast([]byte(data), &c, m) {
			return "", false
		}
		if len(c.Choices) == 0 {
			return "", true
		}
		return c.Choices[0].Delta.Content.Text, true
	}
	var m prefixMemo
	if text, ok := decode(&m, start+`"choices":[{"index":0,"delta":{"content":"a"}}]}`); !ok || text != "a" {
		t.Fatalf("first chunk: %q, %v", text, ok)
	}
	if m.n != len(start) {
		t.Fatalf("memo of %d bytes, want the %d before choices", m.n, len(start))
	}
	// The same start, what follows read as it is.
	if text, ok := decode(&m, start+`"choices":[{"index":0,"delta":{"content":"b"}}],"usage":null}`); !ok || text != "b" {
		t.Errorf("same start: %q, %v, want b", text, ok)
	}
	if text, ok := decode(&m, start+`"choices":[{"index":0,"delta":{"content":"c"}}],"usage":null}x`); ok {
		t.Errorf("same start, trailing garbage: took it (%q)", text)
	}
	if _, ok := decode(&m, start+`"choices":[{"index":0,"delta":{"content":"d"}}],"choices":[]}`); ok {
		t.Error("same start, choices twice: took it")
	}
	// Another start: read whole, so a broken skipped field is found.
	if _, ok := decode(&m, `{"id":"chatcmpl-2","object":tru,"created":1,"model":"m","choices":[]}`); ok {
		t.Error("a broken field skipped in another start: took it")
	}
	if _, ok := decode(&m, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","Choices":[]}`); ok {
		t.Error("a key that folds to choices after another start: took it")
	}
	// What the memo saves: the start is not read again. Made to remember
	// a start that would not decode, it reads past it.
	var forged prefixMemo
	bad := `{"id":"chatcmpl-1","object":tru,"created":1,"model":"m",`
	forged.remember([]byte(bad), len(bad))
	if text, ok := decode(&forged, bad+`"choices":[{"index":0,"delta":{"content":"e"}}]}`); !ok || text != "e" {
		t.Errorf("remembered start: %q, %v, want it skipped and e read", text, ok)
	}
	if _, ok := decode(nil, bad+`"choices":[]}`); ok {
		t.Error("no memo: took a broken start")
	}
}
