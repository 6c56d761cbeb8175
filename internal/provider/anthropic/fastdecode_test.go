package anthropic

import (
	"reflect"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestDecodeFastTakesTheDeltas: the fast path does the work it exists
// for, every delta of the recorded streams (text, tool input, thinking,
// signatures) and the block stops, and leaves the events with a message,
// a content block, usage or an error to encoding/json. (That it agrees
// with encoding/json is FuzzDecodeFast's job.)
func TestDecodeFastTakesTheDeltas(t *testing.T) {
	kinds := map[string][2]int{} // event type: taken, seen
	for _, data := range pt.DataLines(t, "recorded/*.sse") {
		var probe streamEvent
		var j httpx.JSONDecoder
		if err := j.Decode(data, &probe); err != nil {
			continue // an error fixture's line
		}
		var e streamEvent
		k := kinds[probe.Type]
		if decodeFast(data, &e) {
			k[0]++
		}
		k[1]++
		kinds[probe.Type] = k
	}
	for typ, k := range kinds {
		switch typ {
		case "content_block_delta", "content_block_stop", "ping", "message_stop":
			if k[0] != k[1] {
				t.Errorf("%s: decodeFast took %d of %d, want all", typ, k[0], k[1])
			}
		default:
			if k[0] != 0 {
				t.Errorf("%s: decodeFast took %d of %d, want them left to encoding/json", typ, k[0], k[1])
			}
		}
	}
	if k := kinds["content_block_delta"]; k[1] < 100 {
		t.Errorf("only %d content_block_delta events in the recorded streams; the check is too weak", k[1])
	}
}

// FuzzDecodeFast holds decodeFast to encoding/json: whenever it accepts an
// event, encoding/json must accept it too and decode the same values.
// Seeded with every data line of the fixtures and the edge cases below.
func FuzzDecodeFast(f *testing.F) {
	for _, data := range pt.DataLines(f, "*.sse") {
		f.Add(data)
	}
	for _, data := range pt.DataLines(f, "recorded/*.sse") {
		f.Add(data)
	}
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"caf\u00e9 ☕"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"Eo8B"}}`,
		`{"Type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"TEXT":"x"}}`,
		`{"type":"content_block_delta","index":0,"index":1,"delta":{"text":"x"}}`,
		`{"type":"content_block_delta","index":1e0,"delta":{}}`,
		`{"type":"content_block_delta","index":-0,"delta":null}`,
		`{"type":"content_block_delta","index":99999999999999999999,"delta":{}}`,
		`{"type":"content_block_stop","index":0,"extra":[1,-2.5e+3,true,false,null,{"a":"\u0041"}]}`,
		`{"type":"content_block_delta","delta":{"text":"\xff"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		`{"type":"ping"} x`,
		`{"type":null,"index":null,"delta":{"type":null,"text":5}}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast streamEvent
		if !decodeFast(data, &fast) {
			return
		}
		var slow streamEvent
		var j httpx.JSONDecoder
		if err := j.Decode(data, &slow); err != nil {
			t.Fatalf("decodeFast accepted %q, encoding/json refuses it: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %+v\nslow %+v", data, fast, slow)
		}
	})
}
