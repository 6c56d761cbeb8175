package anthropic

import "github.com/llmrelay/llmrelay/internal/provider/jsonscan"

// decodeFast decodes data into e exactly as encoding/json would, for the
// events that make up nearly every stream: content_block_delta (text,
// tool input, thinking and signature deltas), content_block_stop, ping and
// message_stop. It scans the data once, on the stream's goroutine, where
// encoding/json scans it twice through reflection, on a worker (see
// httpx.JSONDecoder).
//
// It reports false, leaving e in any state, on every other event (those
// with a message, a content block, usage or an error, a few per stream)
// and on anything it does not decode the way encoding/json does (see
// package jsonscan). The caller then decodes data with encoding/json, which
// has the last word; FuzzDecodeFast holds the two to the same events.
func decodeFast(data []byte, e *streamEvent) bool {
	p := jsonscan.New(data)
	if p.Peek() != '{' {
		return false
	}
	var seen uint8
	ok := p.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return jsonscan.Once(&seen, 1) && p.Str(&e.Type)
		case "index":
			n, ok := p.Int()
			e.Index = int(n)
			return jsonscan.Once(&seen, 2) && ok
		case "delta":
			return jsonscan.Once(&seen, 4) && (p.Null() || scanDelta(&p, &e.Delta))
		}
		// The other fields take the slow path, as do keys that match a
		// field only ignoring case.
		return !jsonscan.FoldsTo(key, "type", "index", "message", "content_block", "delta", "usage", "error") && p.Skip()
	})
	return ok && p.End()
}

// scanDelta parses a content_block_delta's delta.
func scanDelta(p *jsonscan.Scanner, d *eventDelta) bool {
	var seen uint8
	return p.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return jsonscan.Once(&seen, 1) && p.Str(&d.Type)
		case "text":
			return jsonscan.Once(&seen, 2) && p.Str(&d.Text)
		case "partial_json":
			return jsonscan.Once(&seen, 4) && p.Str(&d.PartialJSON)
		case "thinking":
			return jsonscan.Once(&seen, 8) && p.Str(&d.Thinking)
		case "signature":
			return jsonscan.Once(&seen, 16) && p.Str(&d.Signature)
		case "stop_reason":
			return jsonscan.Once(&seen, 32) && p.Str(&d.StopReason)
		}
		return !jsonscan.FoldsTo(key, "type", "text", "partial_json", "thinking", "signature", "stop_reason") && p.Skip()
	})
}
