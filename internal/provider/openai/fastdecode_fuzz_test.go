package openai

import (
	"reflect"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// FuzzDecodeFast holds decodeFast to encoding/json: whenever it accepts a
// chunk, encoding/json must accept it too and decode the same values. Seeded
// with every data line of the fixtures and the edge cases below.
func FuzzDecodeFast(f *testing.F) {
	for _, data := range append(pt.DataLines(f, "*.sse"), pt.DataLines(f, "recorded/*.sse")...) {
		f.Add(data)
	}
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"content":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"caf\u00e9 ☕"},"finish_reason":null}],"usage":null}`,
		`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30,"prompt_tokens_details":{"cached_tokens":0}}}`,
		`{"Choices":[{"index":0,"delta":{"content":"x"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"x"}}],"choices":[]}`,
		`{"choices":[{"index":1e0,"delta":{}}]}`,
		`{"choices":[null,{"index":-0}]} `,
		`{"choices":null,"x":[1,-2.5e+3,true,false,null,{"a":"\u0041"}]}`,
		`{"choices":[{"delta":{"content":"\xff"}}]}`,
		`{"error":null,"choices":[{"index":0,"delta":{"tool_calls":null,"role":"assistant"}}]}`,
		`{"choices":[{"index":0}]}x`,
		`{"choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Hmm","reasoning":null,"refusal":null}}]}`,
		`{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"a"}]},{"type":"text","text":"b"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"content":5}}]}`,
		`{"choices":[{"index":0,"delta":{"Reasoning_Content":"x","REFUSAL":"y"}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":354,"prompt_tokens_details":{"cached_tokens":11,"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":340}}}`,
		`{"choices":[],"usage":{"prompt_tokens":6,"prompt_cache_hit_tokens":5,"prompt_tokens_details":null,"completion_tokens_details":{"Reasoning_Tokens":1}}}`,
		`{"choices":[],"usage":{"prompt_tokens_details":7}}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"x","reasoning_details":[ ]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop","stop_reason":"</answer>"}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop","stop_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop","stop_reason":128009}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop","stop_reason":"a","stop_reason":"b"}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop","Stop_Reason":"x"}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop","stop_reason":["x"]}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"x","reasoning_details":[{"type":"reasoning.text","text":"x","index":0}]}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { fastAsSlow(t, data, nil) })
}

// fastAsSlow checks that whatever decodeFast (with memo m) takes of data,
// encoding/json takes too, with the same values.
func fastAsSlow(t *testing.T, data []byte, m *prefixMemo) {
	var fast chunk
	if !decodeFast(data, &fast, m) {
		return
	}
	var slow chunk
	var j httpx.JSONDecoder
	if err := j.Decode(data, &slow); err != nil {
		t.Fatalf("decodeFast accepted %q, encoding/json refuses it: %v", data, err)
	}
	if !sameChunk(fast, slow) {
		t.Fatalf("%q:\nfast %+v (usage %+v)\nslow %+v (usage %+v)", data, fast, fast.Usage, slow, slow.Usage)
	}
}

// FuzzDecodeFastAfterAChunk is FuzzDecodeFast for a stream's later chunks:
// decodeFast remembers a first chunk's start (memo), then decodes data,
// read from its first field that matters when it starts the same way.
func FuzzDecodeFastAfterAChunk(f *testing.F) {
	first := []byte(`{"id":"chatcmpl-B9mX2kQ7rT4vN8pL1sD6fG3hJ0aZ","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`)
	for _, data := range pt.DataLines(f, "bench_20.sse") {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m prefixMemo
		if !decodeFast(first, &chunk{}, &m) || m.n == 0 {
			t.Fatal("the first chunk left no memo")
		}
		fastAsSlow(t, data, &m)
	})
}

// sameChunk compares two decoded chunks, taking a nil and an empty Choices,
// or reasoning_details, as equal (encoding/json leaves either, depending on
// the input).
func sameChunk(a, b chunk) bool {
	if len(a.Choices) == 0 && len(b.Choices) == 0 {
		a.Choices, b.Choices = nil, nil
	}
	for _, c := range [][]choice{a.Choices, b.Choices} {
		for i := range c {
			if len(c[i].Delta.ReasoningDetails) == 0 {
				c[i].Delta.ReasoningDetails = nil
			}
		}
	}
	return reflect.DeepEqual(a, b)
}
