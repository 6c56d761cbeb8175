package anthropic

import (
	"reflect"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestDecodeFastTakesTheDeltas: the fast path does the work it exists
// for, every event of the recorded streams (the message's start with its
// usage, block starts, deltas of text, tool input, thinking and
// signatures, block stops, the message's delta), and leaves errors and
// usage with iterations (context compaction) to encoding/json. (That it
// agrees with encoding/json is FuzzDecodeFast's job.)
func TestDecodeFastTakesTheDeltas(t *testing.T) {
	kinds := map[string][2]int{} // event type: taken, seen
	slow := 0                    // events with usage iterations
	for _, data := range pt.DataLines(t, "recorded/*.sse") {
		var probe streamEvent
		var j httpx.JSONDecoder
		if err := j.Decode(data, &probe); err != nil {
			continue // an error fixture's line
		}
		var e streamEvent
		took := decodeFast(data, &e)
		if (probe.Usage != nil && probe.Usage.Iterations != nil) || (probe.Message != nil && probe.Message.Usage.Iterations != nil) {
			slow++
			if took {
				t.Errorf("decodeFast took usage with iterations: %s", data)
			}
			continue
		}
		k := kinds[probe.Type]
		if took {
			k[0]++
		}
		k[1]++
		kinds[probe.Type] = k
	}
	for typ, k := range kinds {
		switch typ {
		case "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "ping", "message_stop":
			if k[0] != k[1] {
				t.Errorf("%s: decodeFast took %d of %d, want all", typ, k[0], k[1])
			}
		default:
			if k[0] != 0 {
				t.Errorf("%s: decodeFast took %d of %d, want them left to encoding/json", typ, k[0], k[1])
			}
		}
	}
	for typ, least := range map[string]int{"content_block_delta": 100, "message_start": 10, "content_block_start": 10, "message_delta": 5} {
		if k := kinds[typ]; k[1] < least {
			t.Errorf("only %d %s events in the recorded streams; the check is too weak", k[1], typ)
		}
	}
	if slow == 0 {
		t.Error("no usage with iterations in the recorded streams; the check is too weak")
	}
	for _, data := range []string{
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3,"iterations":[]}}`,
		`{"type":"message_start","message":{"usage":{"input_tokens":1},"Usage":null}}`,
	} {
		if decodeFast([]byte(data), &streamEvent{}) {
			t.Errorf("decodeFast took %s, want it left to encoding/json", data)
		}
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
		`{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"</answer>"},"usage":{"output_tokens":5}}`,
		`{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"\nObservation:\u00e9"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"a","stop_sequence":null}}`,
		`{"type":"message_delta","delta":{"stop_reason":"stop_sequence","Stop_Sequence":"x"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":7}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		`{"type":"ping"} x`,
		`{"type":"message_start","message":{"id":"msg_1","content":[],"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":3,"output_tokens":1,"service_tier":"standard","output_tokens_details":{"thinking_tokens":7}}}}`,
		`{"type":"message_start","message":null}`,
		`{"type":"message_start","message":{"usage":null,"USAGE":{}}}`,
		`{"type":"message_start","message":{"usage":{"input_tokens":1,"input_tokens":2}}}`,
		`{"type":"message_start","message":{"usage":{"output_tokens_details":null,"iterations":null,"Input_Tokens":4}}}`,
		`{"type":"message_start","message":{"usage":{"output_tokens_details":{"thinking_tokens":1,"thinking_tokens":2}}}}`,
		`{"type":"message_start","message":[]}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get","input":{}}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get","input":{ }}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get","input":{"a": [1]}}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","input":null,"Input":{}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwK"}}`,
		`{"type":"content_block_start","index":0,"content_block":null}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","Text":"x"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":null}`,
		`{"type":"message_delta","usage":{"output_tokens":1.5}}`,
		`{"type":"message_delta","usage":{"iterations":[{"input_tokens":1}]}}`,
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
