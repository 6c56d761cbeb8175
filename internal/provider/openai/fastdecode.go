package openai

import (
	"hash/maphash"

	"github.com/llmrelay/llmrelay/internal/provider/jsonscan"
)

// decodeFast decodes data into c exactly as encoding/json would, for the
// chunks that make up nearly every stream: text and reasoning deltas
// (content as a string, reasoning_content, reasoning, refusal, an empty
// reasoning_details), finish
// reasons and usage with its details. It scans the data once where encoding/json scans it twice through
// reflection, which made the JSON decode the largest CPU cost of relaying a
// stream (see docs/performance.md, "Earlier measurements").
//
// It reports false, leaving c in any state, on anything it does not handle
// the way encoding/json does or does not handle at all: tool calls, an error
// object, content as a list of parts (Mistral), keys with escapes or non-ASCII bytes, keys that match a field only
// ignoring case, duplicate fields, numbers that are not plain integers,
// strings that are not valid UTF-8, unexpected types, deep nesting, invalid
// JSON. The caller then decodes data with encoding/json, which has the last
// word; FuzzDecodeFast holds the two to the same events.
//
// With a memo (the stream's; nil for none), a chunk that starts with the
// same fields skipped as the last chunk remembered is read from the first
// field that matters, and a chunk read whole is remembered.
func decodeFast(data []byte, c *chunk, m *prefixMemo) bool {
	p := jsonscan.New(data)
	if p.Peek() != '{' {
		return false // null, or not an object: encoding/json decides
	}
	var seen uint8
	first := -1 // where the first field read starts
	field := func(key []byte) bool {
		if first < 0 && (string(key) == "choices" || string(key) == "usage" || string(key) == "error") {
			first = p.KeyStart()
		}
		switch string(key) {
		case "choices":
			return jsonscan.Once(&seen, 1) && scanChoices(&p, c)
		case "usage":
			return jsonscan.Once(&seen, 2) && scanUsage(&p, c)
		case "error":
			return jsonscan.Once(&seen, 4) && p.Null() // an error object takes the slow path
		}
		return !jsonscan.FoldsTo(key, "choices", "usage", "error") && p.Skip()
	}
	at := m.match(data)
	var ok bool
	if at > 0 {
		ok = p.ObjectFrom(at, field)
	} else {
		ok = p.Object(field)
	}
	if !ok || !p.End() {
		return false
	}
	if at == 0 {
		m.remember(data, first)
	}
	return true
}

// prefixMemo remembers the start of a stream's chunks that decodeFast only
// skips: a provider starts every chunk of a stream with the same fields
// (id, object, created, model, system_fingerprint), which llmrelay does not
// read. Once a chunk decoded whole, a chunk that starts with the same bytes
// is read from its first field that matters; those bytes were checked
// already. It keeps their length and a hash, not the bytes: a held stream
// keeps 16 bytes. A chunk whose start differs yet hashes the same (a 64-bit
// hash under the process's random seed) would have its start go unread:
// what is read is still read from the chunk.
type prefixMemo struct {
	n   int
	sum uint64
}

// memoSeed seeds every prefixMemo's hash.
var memoSeed = maphash.MakeSeed()

// minMemo is the shortest start worth remembering: shorter ones cost more
// to hash than to read.
const minMemo = 32

// match returns the length of m's start when data begins with it, or 0. A
// nil memo matches nothing.
func (m *prefixMemo) match(data []byte) int {
	if m == nil || m.n == 0 || len(data) <= m.n || maphash.Bytes(memoSeed, data[:m.n]) != m.sum {
		return 0
	}
	return m.n
}

// remember keeps data[:n], the start of a chunk that decoded whole, when it
// is long enough.
func (m *prefixMemo) remember(data []byte, n int) {
	if m == nil || n < minMemo {
		return
	}
	m.n, m.sum = n, maphash.Bytes(memoSeed, data[:n])
}

// scanChoices parses the choices array (or null) into c.Choices, reusing its
// backing array.
func scanChoices(p *jsonscan.Scanner, c *chunk) bool {
	if p.Null() {
		c.Choices = nil
		return true
	}
	if !p.Eat('[') {
		return false
	}
	c.Choices = c.Choices[:0]
	if p.Eat(']') {
		return true
	}
	for {
		c.Choices = append(c.Choices, choice{})
		ch := &c.Choices[len(c.Choices)-1]
		if !p.Null() && !scanChoice(p, ch) {
			return false
		}
		if p.Eat(',') {
			continue
		}
		return p.Eat(']')
	}
}

func scanChoice(p *jsonscan.Scanner, ch *choice) bool {
	var seen uint8
	return p.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			n, ok := p.Int()
			ch.Index = int(n)
			return jsonscan.Once(&seen, 1) && ok
		case "delta":
			return jsonscan.Once(&seen, 2) && (p.Null() || scanDelta(p, &ch.Delta))
		case "finish_reason":
			return jsonscan.Once(&seen, 4) && p.Str(&ch.FinishReason)
		case "stop_reason":
			// A string or null; a token id takes the slow path.
			return jsonscan.Once(&seen, 8) && p.Str((*string)(&ch.StopReason))
		}
		return !jsonscan.FoldsTo(key, "index", "delta", "finish_reason", "stop_reason") && p.Skip()
	})
}

func scanDelta(p *jsonscan.Scanner, d *delta) bool {
	var seen uint8
	return p.Object(func(key []byte) bool {
		switch string(key) {
		case "content":
			// A string or null; a list of parts takes the slow path.
			return jsonscan.Once(&seen, 1) && p.Str(&d.Content.Text)
		case "tool_calls":
			return jsonscan.Once(&seen, 2) && p.Null() // tool calls take the slow path
		case "reasoning_content":
			return jsonscan.Once(&seen, 4) && p.Str(&d.ReasoningContent)
		case "reasoning":
			return jsonscan.Once(&seen, 8) && p.Str(&d.Reasoning)
		case "refusal":
			return jsonscan.Once(&seen, 16) && p.Str(&d.Refusal)
		case "reasoning_details":
			// OpenRouter sends an empty list with every chunk; a detail
			// takes the slow path.
			return jsonscan.Once(&seen, 32) && (p.Null() || p.EmptyList())
		}
		return !jsonscan.FoldsTo(key, "content", "tool_calls", "reasoning_content", "reasoning", "refusal", "reasoning_details") && p.Skip()
	})
}

func scanUsage(p *jsonscan.Scanner, c *chunk) bool {
	if p.Null() {
		c.Usage = nil
		return true
	}
	u := &usage{}
	var seen uint8
	ok := p.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "prompt_tokens":
			u.PromptTokens, ok = p.Int()
			return jsonscan.Once(&seen, 1) && ok
		case "completion_tokens":
			u.CompletionTokens, ok = p.Int()
			return jsonscan.Once(&seen, 2) && ok
		case "total_tokens":
			u.TotalTokens, ok = p.Int()
			return jsonscan.Once(&seen, 4) && ok
		case "prompt_cache_hit_tokens":
			u.PromptCacheHitTokens, ok = p.Int()
			return jsonscan.Once(&seen, 8) && ok
		case "prompt_tokens_details":
			return jsonscan.Once(&seen, 16) && scanDetails(p, "cached_tokens", &u.PromptTokensDetails.CachedTokens)
		case "completion_tokens_details":
			return jsonscan.Once(&seen, 32) && scanDetails(p, "reasoning_tokens", &u.CompletionTokensDetails.ReasoningTokens)
		}
		return !jsonscan.FoldsTo(key, "prompt_tokens", "completion_tokens", "total_tokens", "prompt_cache_hit_tokens",
			"prompt_tokens_details", "completion_tokens_details") && p.Skip()
	})
	c.Usage = u
	return ok
}

// scanDetails parses a usage details object (or null, which leaves it as it
// is) into the one count llmrelay reads from it, name.
func scanDetails(p *jsonscan.Scanner, name string, n *int64) bool {
	if p.Null() {
		return true
	}
	var seen uint8
	return p.Object(func(key []byte) bool {
		if string(key) == name {
			var ok bool
			*n, ok = p.Int()
			return jsonscan.Once(&seen, 1) && ok
		}
		return !jsonscan.FoldsTo(key, name) && p.Skip()
	})
}
