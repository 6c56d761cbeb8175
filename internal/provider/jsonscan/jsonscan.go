// Package jsonscan is a cursor over one JSON value, for the adapters' fast
// decoders of the chunks that make up nearly every stream (text deltas and
// the like). Such a decoder scans a chunk once, on the stream's goroutine,
// with a shallow stack; encoding/json scans it twice through reflection and
// recurses deep enough that it runs on offstack's workers (see
// httpx.JSONDecoder).
//
// A fast decoder built on it must give the values encoding/json would, or
// report that it cannot, leaving the chunk to encoding/json, which has the
// last word: the Scanner's parsers refuse (return false on) what they do not
// decode exactly as encoding/json does (escaped or non-ASCII keys, numbers
// that are not plain integers, strings that are not valid UTF-8, deep
// nesting), and Once and FoldsTo help refuse duplicate fields and keys that
// match a field only ignoring case. Each adapter holds its fast decoder to
// encoding/json with a fuzz test.
package jsonscan

import (
	"bytes"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// New returns a Scanner at the start of b.
func New(b []byte) Scanner { return Scanner{b: b} }

// End reports whether only whitespace is left.
func (p *Scanner) End() bool {
	p.WS()
	return p.i == len(p.b)
}

// Skip consumes one value of any kind, checking that it is valid JSON.
func (p *Scanner) Skip() bool { return p.skip(0) }

// Once marks bit in seen and reports whether it was clear: a field that
// appears twice is merged by encoding/json in ways not worth copying.
func Once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// FoldsTo reports whether key equals one of names ignoring ASCII case
// (keys are ASCII here): encoding/json would decode such a key into the
// field, so the fast path leaves it alone.
func FoldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// Scanner is a cursor over one JSON value.
type Scanner struct {
	b   []byte
	i   int
	key int // the offset of the last key's opening quote
}

// maxSkipDepth bounds the nesting of skipped values; deeper ones take the
// slow path, which has its own limit.
const maxSkipDepth = 64

// WS consumes whitespace.
func (p *Scanner) WS() {
	// Compact JSON, as providers stream it, has none: one compare.
	if p.i < len(p.b) && p.b[p.i] > ' ' {
		return
	}
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// plainString and plainKey mark the bytes a run of a string holds as they
// are: not its end ('"'), not an escape, not a control byte (invalid in
// JSON) and, for a key, ASCII. Scanning a run through the table is one load per byte where
// the cases are four compares.
var plainString, plainKey = func() (s, k [256]bool) {
	for c := 0x20; c < 256; c++ {
		s[c] = c != '"' && c != '\\'
		k[c] = s[c] && c < utf8.RuneSelf
	}
	return s, k
}()

// Peek returns the next byte after whitespace, 0 at the end.
func (p *Scanner) Peek() byte {
	p.WS()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// Eat consumes c, after whitespace, if it is next.
func (p *Scanner) Eat(c byte) bool {
	if p.Peek() == c {
		p.i++
		return true
	}
	return false
}

// word consumes the literal w (true, false, null) if it is next.
func (p *Scanner) word(w string) bool {
	p.WS()
	if !bytes.HasPrefix(p.b[p.i:], []byte(w)) {
		return false
	}
	p.i += len(w)
	return true
}

func (p *Scanner) Null() bool { return p.word("null") }

// EmptyList parses `[]` (with any whitespace inside).
func (p *Scanner) EmptyList() bool { return p.Eat('[') && p.Eat(']') }

// Object parses an object, calling field with each key (plain: no
// escapes, ASCII) to parse its value.
func (p *Scanner) Object(field func(key []byte) bool) bool {
	if !p.Eat('{') {
		return false
	}
	if p.Eat('}') {
		return true
	}
	return p.fields(field)
}

// ObjectFrom parses the rest of an object from offset at, where a key
// comes: the caller knows the bytes before it to be the object's opening
// and fields it need not read again (see KeyStart). It returns false for a
// key that is not there.
func (p *Scanner) ObjectFrom(at int, field func(key []byte) bool) bool {
	if at < 0 || at > len(p.b) {
		return false
	}
	p.i = at
	return p.fields(field)
}

// KeyStart returns the offset of the opening quote of the key Object or
// ObjectFrom last gave its field function; read it before the field's
// value, whose own keys move it.
func (p *Scanner) KeyStart() int { return p.key }

// fields parses an object's fields, from its first key to its end.
func (p *Scanner) fields(field func(key []byte) bool) bool {
	for {
		key, ok := p.readKey()
		if !ok || !p.Eat(':') || !field(key) {
			return false
		}
		if p.Eat(',') {
			continue
		}
		return p.Eat('}')
	}
}

// readKey parses a key that holds neither escapes nor non-ASCII bytes.
func (p *Scanner) readKey() ([]byte, bool) {
	if !p.Eat('"') {
		return nil, false
	}
	p.key = p.i - 1
	start := p.i
	for p.i < len(p.b) && plainKey[p.b[p.i]] {
		p.i++
	}
	if p.i == len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	p.i++
	return p.b[start : p.i-1], true
}

// Int parses null (which leaves a field as it is: zero, since fields
// are fresh and appear once) or a plain integer of at most 15 digits: far
// beyond any index or token count, and short of any overflow question.
func (p *Scanner) Int() (int64, bool) {
	if p.Null() {
		return 0, true
	}
	neg := p.Eat('-')
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

// Bool parses true or false into *b, or null, which leaves *b as it is.
func (p *Scanner) Bool(b *bool) bool {
	switch p.Peek() {
	case 't':
		*b = true
		return p.word("true")
	case 'f':
		*b = false
		return p.word("false")
	}
	return p.Null()
}

// Str parses a string into *s, or null, which leaves *s as it is (the
// fields are fresh, so empty).
func (p *Scanner) Str(s *string) bool { return p.str(s, nil) }

// Name parses a string as Str does, taking it from names when it is one of
// them: a field whose values come from a short list (an event's type, say)
// allocates nothing for those.
func (p *Scanner) Name(s *string, names []string) bool { return p.str(s, names) }

func (p *Scanner) str(s *string, names []string) bool {
	if p.Null() {
		return true
	}
	if !p.Eat('"') {
		return false
	}
	start := p.i
	plain := true
	for p.i < len(p.b) {
		for p.i < len(p.b) && plainKey[p.b[p.i]] {
			p.i++
		}
		if p.i == len(p.b) {
			break
		}
		switch c := p.b[p.i]; {
		case c == '"':
			raw := p.b[start:p.i]
			p.i++
			if plain {
				for _, n := range names {
					if string(raw) == n {
						*s = n
						return true
					}
				}
				*s = string(raw)
				return true
			}
			return p.unescape(raw, s)
		case c == '\\':
			plain = false
			p.i += 2 // the escape is checked by unescape
		case c < 0x20:
			return false
		default: // not ASCII
			plain = false
			p.i++
		}
	}
	return false
}

// unescape decodes a string's raw bytes with escapes or non-ASCII bytes as
// encoding/json does, except that it refuses invalid UTF-8 (which
// encoding/json replaces) to the slow path.
func (p *Scanner) unescape(raw []byte, s *string) bool {
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
func (p *Scanner) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	switch p.Peek() {
	case '{':
		p.i++
		if p.Eat('}') {
			return true
		}
		for {
			if !p.skipString() || !p.Eat(':') || !p.skip(depth+1) {
				return false
			}
			if p.Eat(',') {
				continue
			}
			return p.Eat('}')
		}
	case '[':
		p.i++
		if p.Eat(']') {
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			if p.Eat(',') {
				continue
			}
			return p.Eat(']')
		}
	case '"':
		return p.skipString()
	case 't':
		return p.word("true")
	case 'f':
		return p.word("false")
	case 'n':
		return p.Null()
	}
	return p.skipNumber()
}

// skipString consumes a string, checking its escapes.
func (p *Scanner) skipString() bool {
	if !p.Eat('"') {
		return false
	}
	for p.i < len(p.b) {
		for p.i < len(p.b) && plainString[p.b[p.i]] {
			p.i++
		}
		if p.i == len(p.b) {
			break
		}
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return true
		case c < 0x20:
			return false
		default: // '\\'
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
		}
	}
	return false
}

// skipNumber consumes a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *Scanner) skipNumber() bool {
	p.WS()
	p.Eat('-')
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

func (p *Scanner) digits() int {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}
