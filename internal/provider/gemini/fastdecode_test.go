package gemini

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestDecodeFastTakesTheTextChunks: the fast path does the work it exists
// for, every chunk of text, thoughts and signatures in the fixtures and
// the recorded streams, and leaves function calls, errors and cut lines
// to encoding/json. (That it agrees with encoding/json is FuzzDecodeFast's
// job.)
func TestDecodeFastTakesTheTextChunks(t *testing.T) {
	taken, text := 0, 0
	for _, data := range append(pt.DataLines(t, "*.sse"), pt.DataLines(t, "recorded/*.sse")...) {
		call := bytes.Contains(data, []byte(`"functionCall"`))
		fast := decodeFast(data, &chunk{Candidates: []candidate{}})
		switch {
		case !json.Valid(data): // a fixture's cut line
			if fast {
				t.Errorf("decodeFast took %.80s..., which is not JSON", data)
			}
		case call || bytes.Contains(data, []byte(`"error"`)):
			if fast {
				t.Errorf("decodeFast took %.80s..., want it left to encoding/json", data)
			}
		default:
			text++
			if fast {
				taken++
			}
		}
	}
	if taken != text || text < 30 {
		t.Errorf("decodeFast took %d of %d chunks without a function call or an error, want all (and at least 30)", taken, text)
	}
}

// FuzzDecodeFast holds decodeFast to encoding/json: whenever it accepts a
// chunk, encoding/json must accept it too and decode the same values, both
// starting from the chunk as Decode prepares it. Seeded with every data
// line of the fixtures and the edge cases below.
func FuzzDecodeFast(f *testing.F) {
	for _, data := range append(pt.DataLines(f, "*.sse"), pt.DataLines(f, "recorded/*.sse")...) {
		f.Add(data)
	}
	for _, s := range []string{
		`{"candidates":[{"content":{"parts":[{"text":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x"}],"role":"model"},"index":0}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"**Plan**","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":8,"thoughtsTokenCount":12,"promptTokensDetails":[{"modality":"TEXT","tokenCount":8}]}}`,
		`{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"CiQB"}]},"finishReason":"STOP","index":0}]}`,
		`{"candidates":[{"content":{"parts":[]},"index":0},null,{"content":null}],"usageMetadata":null}`,
		`{"candidates":null,"promptFeedback":null,"error":null}`,
		`{"candidates":[{"content":{"parts":null}}],"Candidates":[]}`,
		`{"candidates":[{"index":1e0}]}`,
		`{"candidates":[{"index":0,"index":1}]}`,
		`{"candidates":[{"content":{"parts":[{"thought":"yes"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"Text":"x","THOUGHT":true}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]}}]}`,
		`{"promptFeedback":{"blockReason":"SAFETY"}}`,
		`{"candidates":[{"content":{},"finishReason":"MALFORMED_FUNCTION_CALL","finishMessage":"Malformed function call: f(x)"}]}`,
		`{"candidates":[{"finishReason":"STOP","finishMessage":null,"FinishMessage":"x"}]}`,
		`{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`,
		`{"usageMetadata":{"candidatesTokenCount":-0,"totalTokenCount":2.5e+3}} `,
		`{"candidates":[{"content":{"parts":[{"text":"\xff"}]}}]}`,
		`{"candidates":[]}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast := chunk{Candidates: []candidate{}}
		if !decodeFast(data, &fast) {
			return
		}
		slow := chunk{Candidates: []candidate{}}
		var j httpx.JSONDecoder
		if err := j.Decode(data, &slow); err != nil {
			t.Fatalf("decodeFast accepted %q, encoding/json refuses it: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %+v\nslow %+v", data, fast, slow)
		}
	})
}
