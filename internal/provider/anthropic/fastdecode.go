package anthropic

import "github.com/llmrelay/llmrelay/internal/provider/jsonscan"

// decodeFast decodes data into e exactly as encoding/json would, for the
// events of nearly every stream: message_start, content_block_start,
// content_block_delta (text, tool input, thinking and signature deltas),
// content_block_stop, message_delta, ping and message_stop. It scans the
// data once, on the stream's goroutine, where encoding/json scans it twice
// through reflection, on a worker (see httpx.JSONDecoder).
//
// It reports false, leaving e in any state, on an error event, on usage
// with iterations (context compaction), and on anything it does not decode
// the way encoding/json does (see package jsonscan). The caller then
// decodes data with encoding/json, which has the last word; FuzzDecodeFast
// holds the two to the same events.
func decodeFast(data []byte, e *streamEvent) bool {
	p := jsonscan.New(data)
	if p.Peek() != '{' {
		return false
	}
	var seen uint8
	ok := p.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return jsonscan.Once(&seen, 1) && p.Name(&e.Type, eventTypes)
		case "index":
			n, ok := p.Int()
			e.Index = int(n)
			return jsonscan.Once(&seen, 2) && ok
		case "delta":
			return jsonscan.Once(&seen, 4) && (p.Null() || scanDelta(&p, &e.Delta))
		case "message":
			// null leaves the pointer nil; an object gets a new one, as
			// encoding/json does.
			return jsonscan.Once(&seen, 8) && (p.Null() || scanMessage(&p, newOf(&e.Message)))
		case "content_block":
			return jsonscan.Once(&seen, 16) && (p.Null() || scanBlock(&p, &e.ContentBlock))
		case "usage":
			return jsonscan.Once(&seen, 32) && (p.Null() || scanUsage(&p, newOf(&e.Usage)))
		}
		// An error takes the slow path, as do keys that match a field only
		// ignoring case.
		return !jsonscan.FoldsTo(key, "type", "index", "message", "content_block", "delta", "usage", "error") && p.Skip()
	})
	return ok && p.End()
}

// The values of the fields decodeFast reads as names (jsonscan.Name): the
// event, block and delta types and the stop reasons of the Messages API.
var (
	eventTypes  = []string{"content_block_delta", "content_block_start", "content_block_stop", "message_start", "message_delta", "message_stop", "ping"}
	blockTypes  = []string{"text", "tool_use", "thinking", "redacted_thinking"}
	deltaTypes  = []string{"text_delta", "input_json_delta", "thinking_delta", "signature_delta"}
	stopReasons = []string{"end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"}
)

// newOf points *v at a new T and returns it.
func newOf[T any](v **T) *T {
	*v = new(T)
	return *v
}

// scanMessage parses message_start's message, of which llmrelay reads the
// usage.
func scanMessage(p *jsonscan.Scanner, m *startMessage) bool {
	var seen uint8
	return p.Object(func(key []byte) bool {
		if string(key) == "usage" {
			return jsonscan.Once(&seen, 1) && (p.Null() || scanUsage(p, &m.Usage))
		}
		return !jsonscan.FoldsTo(key, "usage") && p.Skip()
	})
}

// scanBlock parses content_block_start's block.
func scanBlock(p *jsonscan.Scanner, b *contentBlock) bool {
	var seen uint8
	return p.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return jsonscan.Once(&seen, 1) && p.Name(&b.Type, blockTypes)
		case "text":
			return jsonscan.Once(&seen, 2) && p.Str(&b.Text)
		case "id":
			return jsonscan.Once(&seen, 4) && p.Str(&b.ID)
		case "name":
			return jsonscan.Once(&seen, 8) && p.Str(&b.Name)
		case "thinking":
			return jsonscan.Once(&seen, 16) && p.Str(&b.Thinking)
		case "signature":
			return jsonscan.Once(&seen, 32) && p.Str(&b.Signature)
		case "data":
			return jsonscan.Once(&seen, 64) && p.Str(&b.Data)
		case "input":
			// {} (Anthropic's) or null; input with arguments in it takes
			// the slow path.
			return jsonscan.Once(&seen, 128) && (p.Null() || p.Eat('{') && p.Eat('}'))
		}
		return !jsonscan.FoldsTo(key, "type", "text", "id", "name", "thinking", "signature", "data", "input") && p.Skip()
	})
}

// scanUsage parses a usage object; one with iterations takes the slow path.
func scanUsage(p *jsonscan.Scanner, u *usage) bool {
	var seen uint8
	count := func(bit uint8, n *int64) bool {
		v, ok := p.Int()
		*n = v
		return jsonscan.Once(&seen, bit) && ok
	}
	return p.Object(func(key []byte) bool {
		switch string(key) {
		case "input_tokens":
			return count(1, &u.InputTokens)
		case "output_tokens":
			return count(2, &u.OutputTokens)
		case "cache_creation_input_tokens":
			return count(4, &u.CacheCreationInputTokens)
		case "cache_read_input_tokens":
			return count(8, &u.CacheReadInputTokens)
		case "output_tokens_details":
			return jsonscan.Once(&seen, 16) && (p.Null() || p.Object(func(key []byte) bool {
				if string(key) == "thinking_tokens" {
					v, ok := p.Int()
					u.OutputTokensDetails.ThinkingTokens = v
					return ok && jsonscan.Once(&seen, 32)
				}
				return !jsonscan.FoldsTo(key, "thinking_tokens") && p.Skip()
			}))
		case "iterations":
			return jsonscan.Once(&seen, 64) && p.Null()
		}
		return !jsonscan.FoldsTo(key, "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens_details", "iterations") && p.Skip()
	})
}

// scanDelta parses a content_block_delta's delta.
func scanDelta(p *jsonscan.Scanner, d *eventDelta) bool {
	var seen uint8
	return p.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return jsonscan.Once(&seen, 1) && p.Name(&d.Type, deltaTypes)
		case "text":
			return jsonscan.Once(&seen, 2) && p.Str(&d.Text)
		case "partial_json":
			return jsonscan.Once(&seen, 4) && p.Str(&d.PartialJSON)
		case "thinking":
			return jsonscan.Once(&seen, 8) && p.Str(&d.Thinking)
		case "signature":
			return jsonscan.Once(&seen, 16) && p.Str(&d.Signature)
		case "stop_reason":
			return jsonscan.Once(&seen, 32) && p.Name(&d.StopReason, stopReasons)
		case "stop_sequence":
			return jsonscan.Once(&seen, 64) && p.Str(&d.StopSequence)
		}
		return !jsonscan.FoldsTo(key, "type", "text", "partial_json", "thinking", "signature", "stop_reason", "stop_sequence") && p.Skip()
	})
}
