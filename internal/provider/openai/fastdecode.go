package openai

import (
	"bytes"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
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
func decodeFast(data []byte, c *chunk) bool {
	p := scan{b: data}
	if p.peek() != '{' {
		return false // null, or not an object: encoding/json decides
	}
	var seen uint8
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return once(&seen, 1) && p.choices(c)
		case "usage":
			return once(&seen, 2) && p.usage(c)
		case "error":
			return once(&seen, 4) && p.null() // an error object takes the slow path
		}
		return !foldsTo(key, "choices", "usage", "error") && p.skip(0)
	})
	p.ws()
	return ok && p.i == len(p.b)
}

// once marks bit in seen and reports whether it was clear: a field that
// appears twice is merged by encoding/json in ways not worth copying.
func once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// foldsTo reports whether key equals one of names ignoring ASCII case
// (keys are ASCII here): encoding/json would decode such a key into the
// field, so the fast path leaves it alone.
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// scan is a cursor over one JSON value.
type scan struct {
	b []byte
	i int
}

// maxSkipDepth bounds the nesting of skipped values; deeper ones take the
// slow path, which has its own limit.
const maxSkipDepth = 64

func (p *scan) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, 0 at the end.
func (p *scan) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// eat consumes c, after whitespace, if it is next.
func (p *scan) eat(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

// word consumes the literal w (true, false, null) if it is next.
func (p *scan) word(w string) bool {
	p.ws()
	if !bytes.HasPrefix(p.b[p.i:], []byte(w)) {
		return false
	}
	p.i += len(w)
	return true
}

func (p *scan) null() bool { return p.word("null") }

// emptyList parses `[]` (with any whitespace inside).
func (p *scan) emptyList() bool { return p.eat('[') && p.eat(']') }

// object parses an object, calling field with each key (plain: no
// escapes, ASCII) to parse its value.
func (p *scan) object(field func(key []byte) bool) bool {
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return true
	}
	for {
		key, ok := p.key()
		if !ok || !p.eat(':') || !field(key) {
			return false
		}
		if p.eat(',') {
			continue
		}
		return p.eat('}')
	}
}

// key parses a key that holds neither escapes nor non-ASCII bytes.
func (p *scan) key() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// choices parses the choices array (or null) into c.Choices, reusing its
// backing array.
func (p *scan) choices(c *chunk) bool {
	if p.null() {
		c.Choices = nil
		return true
	}
	if !p.eat('[') {
		return false
	}
	c.Choices = c.Choices[:0]
	if p.eat(']') {
		return true
	}
	for {
		c.Choices = append(c.Choices, choice{})
		ch := &c.Choices[len(c.Choices)-1]
		if !p.null() && !p.choice(ch) {
			return false
		}
		if p.eat(',') {
			continue
		}
		return p.eat(']')
	}
}

func (p *scan) choice(ch *choice) bool {
	var seen uint8
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "index":
			n, ok := p.integer()
			ch.Index = int(n)
			return once(&seen, 1) && ok
		case "delta":
			return once(&seen, 2) && (p.null() || p.delta(&ch.Delta))
		case "finish_reason":
			return once(&seen, 4) && p.str(&ch.FinishReason)
		}
		return !foldsTo(key, "index", "delta", "finish_reason") && p.skip(0)
	})
}

func (p *scan) delta(d *delta) bool {
	var seen uint8
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			// A string or null; a list of parts takes the slow path.
			return once(&seen, 1) && p.str(&d.Content.Text)
		case "tool_calls":
			return once(&seen, 2) && p.null() // tool calls take the slow path
		case "reasoning_content":
			return once(&seen, 4) && p.str(&d.ReasoningContent)
		case "reasoning":
			return once(&seen, 8) && p.str(&d.Reasoning)
		case "refusal":
			return once(&seen, 16) && p.str(&d.Refusal)
		case "reasoning_details":
			// OpenRouter sends an empty list with every chunk; a detail
			// takes the slow path.
			return once(&seen, 32) && (p.null() || p.emptyList())
		}
		return !foldsTo(key, "content", "tool_calls", "reasoning_content", "reasoning", "refusal", "reasoning_details") && p.skip(0)
	})
}

func (p *scan) usage(c *chunk) bool {
	if p.null() {
		c.Usage = nil
		return true
	}
	u := &usage{}
	var seen uint8
	ok := p.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "prompt_tokens":
			u.PromptTokens, ok = p.integer()
			return once(&seen, 1) && ok
		case "completion_tokens":
			u.CompletionTokens, ok = p.integer()
			return once(&seen, 2) && ok
		case "total_tokens":
			u.TotalTokens, ok = p.integer()
			return once(&seen, 4) && ok
		case "prompt_cache_hit_tokens":
			u.PromptCacheHitTokens, ok = p.integer()
			return once(&seen, 8) && ok
		case "prompt_tokens_details":
			return once(&seen, 16) && p.details("cached_tokens", &u.PromptTokensDetails.CachedTokens)
		case "completion_tokens_details":
			return once(&seen, 32) && p.details("reasoning_tokens", &u.CompletionTokensDetails.ReasoningTokens)
		}
		return !foldsTo(key, "prompt_tokens", "completion_tokens", "total_tokens", "prompt_cache_hit_tokens",
			"prompt_tokens_details", "completion_tokens_details") && p.skip(0)
	})
	c.Usage = u
	return ok
}

// details parses a usage details object (or null, which leaves it as it
// is) into the one count llmrelay reads from it, name.
func (p *scan) details(name string, n *int64) bool {
	if p.null() {
		return true
	}
	var seen uint8
	return p.object(func(key []byte) bool {
		if string(key) == name {
			var ok bool
			*n, ok = p.integer()
			return once(&seen, 1) && ok
		}
		return !foldsTo(key, name) && p.skip(0)
	})
}

// integer parses null (which leaves a field as it is: zero, since fields
// are fresh and appear once) or a plain integer of at most 15 digits: far
// beyond any index or token count, and short of any overflow question.
func (p *scan) integer() (int64, bool) {
	if p.null() {
		return 0, true
	}
	neg := p.eat('-')
	start := p.i
	var n int64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + int64(p.b[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	if digits == 0 || digits > 15 || (digits > 1 && p.b[start] == '0') {
		return 0, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case '.', 'e', 'E':
			return 0, false // encoding/json refuses these for an int
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// str parses a string into *s, or null, which leaves *s as it is (the
// fields are fresh, so empty).
func (p *scan) str(s *string) bool {
	if p.null() {
		return true
	}
	if !p.eat('"') {
		return false
	}
	start := p.i
	plain := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			raw := p.b[start:p.i]
			p.i++
			if plain {
				*s = string(raw)
				return true
			}
			return p.unescape(raw, s)
		case c == '\\':
			plain = false
			p.i += 2 // the escape is checked by unescape
			continue
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			plain = false
		}
		p.i++
	}
	return false
}

// unescape decodes a string's raw bytes with escapes or non-ASCII bytes as
// encoding/json does, except that it refuses invalid UTF-8 (which
// encoding/json replaces) to the slow path.
func (p *scan) unescape(raw []byte, s *string) bool {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if c < utf8.RuneSelf {
				out = append(out, c)
				i++
				continue
			}
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			out = append(out, raw[i:i+size]...)
			i += size
			continue
		}
		if i+1 >= len(raw) {
			return false
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i:])
			if r < 0 {
				return false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if dec := utf16.DecodeRune(r, hex4(raw[i:])); dec != unicode.ReplacementChar {
					out = utf8.AppendRune(out, dec)
					i += 6
					continue
				}
				r = unicode.ReplacementChar
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return false
		}
		i += 2
	}
	*s = string(out)
	return true
}

// hex4 decodes `\uXXXX` at the start of b, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// skip consumes one value of any kind, checking that it is valid JSON.
func (p *scan) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	switch p.peek() {
	case '{':
		p.i++
		if p.eat('}') {
			return true
		}
		for {
			if !p.skipString() || !p.eat(':') || !p.skip(depth+1) {
				return false
			}
			if p.eat(',') {
				continue
			}
			return p.eat('}')
		}
	case '[':
		p.i++
		if p.eat(']') {
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			if p.eat(',') {
				continue
			}
			return p.eat(']')
		}
	case '"':
		return p.skipString()
	case 't':
		return p.word("true")
	case 'f':
		return p.word("false")
	case 'n':
		return p.null()
	}
	return p.skipNumber()
}

// skipString consumes a string, checking its escapes.
func (p *scan) skipString() bool {
	if !p.eat('"') {
		return false
	}
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return false
			}
			switch p.b[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				if hex4(p.b[p.i:]) < 0 {
					return false
				}
				p.i += 6
			default:
				return false
			}
			continue
		}
		p.i++
	}
	return false
}

// skipNumber consumes a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *scan) skipNumber() bool {
	p.ws()
	p.eat('-')
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.digits() == 0:
		return false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return false
		}
	}
	return true
}

func (p *scan) digits() int {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}
