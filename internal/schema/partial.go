package schema

import (
	"encoding/json"
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxNesting is encoding/json's limit on how deeply arrays and objects nest.
const maxNesting = 10000

// Partial turns the growing text of a reply into partial objects: the JSON
// value read so far, with open strings, arrays and objects closed and an
// incomplete key or literal left out. A number is left out until a
// delimiter shows it is complete; a string being written shows as the
// prefix decoded so far (an escape or UTF-8 sequence cut in two waits for
// its end).
//
// A partial value never shows what the complete reply will not hold, as
// long as the reply turns out to be valid JSON (as ParseReply reads it)
// without duplicate object keys: every string shown is a prefix of the final
// string, every array a prefix of the final array, every object key present
// in the final object, every number, boolean and null final. Leading
// whitespace and a ``` or ```json fence line are skipped; whatever follows
// the complete value is ignored.
//
// Feed consumes each delta in time proportional to its length; Snapshot
// costs the size of the value's open part plus the number of members of its
// open containers, because complete members are built once and reused.
// A Partial is used by one goroutine. The zero value is ready to use.
type Partial struct {
	state   pstate
	stack   []*pnode // open arrays and objects, innermost last
	root    *pnode
	str     strDec // the string being read, key or value
	strNode *pnode // the string value being read; nil for a key
	key     []byte // the key being read, or read and waiting for its value
	tok     []byte // the number or literal being read
	fence   []byte // the opening fence line read so far
	off     int    // bytes consumed
	changed bool
	// marks counts the values that started showing or completed: the
	// structural changes, as opposed to a string growing.
	marks int
	err   *ParseError
}

type pstate uint8

const (
	psStart       pstate = iota // before the value: whitespace or a fence
	psFence                     // in the opening fence line
	psValue                     // a value must come
	psArrayFirst                // after '[': a value or ']'
	psObjectFirst               // after '{': a key or '}'
	psKeyStart                  // after ',' in an object: a key
	psKey                       // in a key
	psColon                     // after a key: ':'
	psString                    // in a string value
	psNumber                    // in a number
	psLiteral                   // in true, false or null
	psAfter                     // after a member: ',' or the closer
	psDone                      // the value is complete
	psError                     // the text cannot be JSON
)

type pkind uint8

const (
	pObject pkind = iota + 1
	pArray
	pString
	pScalar
)

// pnode is a value being built.
type pnode struct {
	kind  pkind
	done  bool
	keys  []string // pObject, in no order (a snapshot is a map)
	vals  []*pnode
	index map[string]int // pObject with many keys
	items []*pnode       // pArray
	s     []byte         // pString, decoded so far
	// scalar holds a pScalar's value; snap the value of a done node once built.
	scalar, snap any
	built        bool
}

// NewPartial returns a Partial for a new reply.
func NewPartial() *Partial { return &Partial{} }

// Feed consumes the next piece of the reply and reports whether the partial
// value changed since the last Snapshot.
func (p *Partial) Feed(delta string) bool {
	for i := 0; i < len(delta) && p.state < psDone; {
		if (p.state == psString || p.state == psKey) && p.str.idle() {
			j := i
			for j < len(delta) && plainStringByte(delta[j]) {
				j++
			}
			if j > i {
				if p.state == psString {
					p.strNode.s = append(p.strNode.s, delta[i:j]...)
					p.changed = true
				} else {
					p.key = append(p.key, delta[i:j]...)
				}
				p.off += j - i
				i = j
				continue
			}
		}
		p.step(delta[i])
		p.off++
		i++
	}
	return p.changed
}

// Snapshot returns the partial value, or ok false while there is none (no
// value has started, or the value is a number or literal not yet complete).
// It resets the changed flag. Values are those of ParseReply; parts of them
// are shared between snapshots and must not be modified.
func (p *Partial) Snapshot() (v any, ok bool) {
	p.changed = false
	if p.root == nil {
		return nil, false
	}
	return p.root.value(), true
}

// Err returns the *ParseError that made the text impossible to read as
// JSON, after which the partial value no longer changes; nil otherwise.
func (p *Partial) Err() error {
	if p.err == nil {
		return nil
	}
	return p.err
}

// Marks counts the structural changes so far: each value that started to
// show (an array, object or string opened, a number or literal read) and
// each value that completed. Between two snapshots, an unchanged count
// means only strings being written grew.
func (p *Partial) Marks() int { return p.marks }

// Done reports whether the value is complete.
func (p *Partial) Done() bool { return p.state == psDone }

func plainStringByte(c byte) bool { return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' }

func (p *Partial) fail(format string, args ...any) {
	p.state = psError
	p.err = &ParseError{Offset: p.off, Problem: fmt.Sprintf(format, args...)}
}

// step consumes one byte.
func (p *Partial) step(c byte) {
	switch p.state {
	case psStart:
		switch {
		case isJSONSpace(c):
		case c == '`':
			p.fence = append(p.fence, c)
			p.state = psFence
		default:
			p.state = psValue
			p.step(c)
		}
	case psFence:
		p.fence = append(p.fence, c)
		switch {
		case len(p.fence) <= len(fence) && c != '`':
			p.fail("invalid character %q looking for beginning of value", c)
		case c == '\n':
			if !fenceInfoOK(string(p.fence[len(fence) : len(p.fence)-1])) {
				p.fail("a ``` fence must be followed by an optional \"json\" and a line break")
				return
			}
			p.fence = nil
			p.state = psValue
		}
	case psValue, psArrayFirst:
		switch {
		case isJSONSpace(c):
		case c == ']' && p.state == psArrayFirst:
			p.closeContainer(pArray)
		default:
			p.beginValue(c)
		}
	case psObjectFirst, psKeyStart:
		switch {
		case isJSONSpace(c):
		case c == '"':
			p.key = p.key[:0]
			p.str = strDec{}
			p.state = psKey
		case c == '}' && p.state == psObjectFirst:
			p.closeContainer(pObject)
		default:
			p.fail("invalid character %q looking for beginning of object key string", c)
		}
	case psKey:
		done, err := p.str.feed(c, &p.key)
		switch {
		case err != nil:
			p.fail("%v", err)
		case done:
			p.state = psColon
		}
	case psColon:
		switch {
		case isJSONSpace(c):
		case c == ':':
			p.state = psValue
		default:
			p.fail("invalid character %q after object key", c)
		}
	case psString:
		n := len(p.strNode.s)
		done, err := p.str.feed(c, &p.strNode.s)
		if len(p.strNode.s) != n {
			p.changed = true
		}
		switch {
		case err != nil:
			p.fail("%v", err)
		case done:
			p.strNode.done = true
			p.strNode = nil
			p.valueDone()
		}
	case psNumber:
		if isNumberByte(c) {
			p.tok = append(p.tok, c)
			return
		}
		if !validNumber(p.tok) {
			p.fail("invalid number %q", p.tok)
			return
		}
		if _, err := json.Number(p.tok).Float64(); err != nil {
			p.fail("the number %s is too large", p.tok)
			return
		}
		p.attach(&pnode{kind: pScalar, done: true, scalar: json.Number(string(p.tok))})
		p.valueDone()
		p.step(c)
	case psLiteral:
		word := literalWord(p.tok[0])
		if c != word[len(p.tok)] {
			p.fail("invalid character %q in literal %s", c, word)
			return
		}
		p.tok = append(p.tok, c)
		if len(p.tok) == len(word) {
			p.attach(&pnode{kind: pScalar, done: true, scalar: literalValue(p.tok[0])})
			p.valueDone()
		}
	case psAfter:
		top := p.stack[len(p.stack)-1]
		switch {
		case isJSONSpace(c):
		case c == ',' && top.kind == pObject:
			p.state = psKeyStart
		case c == ',':
			p.state = psValue
		case c == '}' && top.kind == pObject, c == ']' && top.kind == pArray:
			p.closeContainer(top.kind)
		default:
			p.fail("invalid character %q after a member", c)
		}
	}
}

// beginValue starts the value whose first byte is c.
func (p *Partial) beginValue(c byte) {
	switch {
	case c == '{' || c == '[':
		if len(p.stack) >= maxNesting {
			p.fail("exceeded max depth")
			return
		}
		n := &pnode{kind: pArray, items: []*pnode{}}
		p.state = psArrayFirst
		if c == '{' {
			n = &pnode{kind: pObject}
			p.state = psObjectFirst
		}
		p.attach(n)
		p.stack = append(p.stack, n)
	case c == '"':
		p.strNode = &pnode{kind: pString}
		p.str = strDec{}
		p.attach(p.strNode)
		p.state = psString
	case c == '-' || c >= '0' && c <= '9':
		p.detachKey()
		p.tok = append(p.tok[:0], c)
		p.state = psNumber
	case c == 't' || c == 'f' || c == 'n':
		p.detachKey()
		p.tok = append(p.tok[:0], c)
		p.state = psLiteral
	default:
		p.fail("invalid character %q looking for beginning of value", c)
	}
}

// detachKey removes an earlier member with the key whose value is starting
// (a duplicate key: the last one wins, as in encoding/json).
func (p *Partial) detachKey() {
	if len(p.stack) == 0 {
		return
	}
	if top := p.stack[len(p.stack)-1]; top.kind == pObject && top.remove(string(p.key)) {
		p.changed = true
	}
}

// attach makes n, a value that has started to show, the root or the next
// member of the innermost container.
func (p *Partial) attach(n *pnode) {
	p.changed = true
	p.marks++
	if len(p.stack) == 0 {
		p.root = n
		return
	}
	top := p.stack[len(p.stack)-1]
	if top.kind == pArray {
		top.items = append(top.items, n)
		return
	}
	k := string(p.key)
	top.remove(k)
	top.keys = append(top.keys, k)
	top.vals = append(top.vals, n)
	if top.index != nil {
		top.index[k] = len(top.keys) - 1
	}
}

func (p *Partial) closeContainer(kind pkind) {
	n := p.stack[len(p.stack)-1]
	if n.kind != kind {
		p.fail("mismatched closer")
		return
	}
	n.done = true
	p.stack = p.stack[:len(p.stack)-1]
	p.valueDone()
}

// valueDone moves on after a complete value.
func (p *Partial) valueDone() {
	p.marks++
	if len(p.stack) == 0 {
		p.state = psDone
		return
	}
	p.state = psAfter
}

// indexFrom is the number of keys from which an object keeps an index.
const indexFrom = 16

// remove deletes the member with key k and reports whether there was one.
func (n *pnode) remove(k string) bool {
	i := -1
	if n.index != nil {
		if j, ok := n.index[k]; ok {
			i = j
		}
	} else {
		for j, kk := range n.keys {
			if kk == k {
				i = j
				break
			}
		}
	}
	if i < 0 {
		if n.index == nil && len(n.keys) >= indexFrom {
			n.index = make(map[string]int, 2*len(n.keys))
			for j, kk := range n.keys {
				n.index[kk] = j
			}
		}
		return false
	}
	// The last member takes the removed one's place: members have no
	// order (a snapshot is a map), and a reply that repeats keys costs
	// no more per repeat than a new key.
	last := len(n.keys) - 1
	n.keys[i], n.vals[i] = n.keys[last], n.vals[last]
	n.keys, n.vals = n.keys[:last], n.vals[:last]
	if n.index != nil {
		delete(n.index, k)
		if i < last {
			n.index[n.keys[i]] = i
		}
	}
	return true
}

// value builds the node's current value. A done node builds it once and
// then forgets its children.
func (n *pnode) value() any {
	if n.built {
		return n.snap
	}
	var v any
	switch n.kind {
	case pObject:
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			m[k] = n.vals[i].value()
		}
		v = m
	case pArray:
		a := make([]any, len(n.items))
		for i, e := range n.items {
			a[i] = e.value()
		}
		v = a
	case pString:
		v = string(n.s)
	case pScalar:
		v = n.scalar
	}
	if n.done {
		n.snap, n.built = v, true
		n.keys, n.vals, n.index, n.items, n.s = nil, nil, nil, nil, nil
	}
	return v
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// validNumber reports whether b is a JSON number.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

func literalWord(first byte) string {
	switch first {
	case 't':
		return "true"
	case 'f':
		return "false"
	}
	return "null"
}

func literalValue(first byte) any {
	switch first {
	case 't':
		return true
	case 'f':
		return false
	}
	return nil
}

// strDec decodes a JSON string byte by byte exactly as encoding/json does,
// invalid UTF-8 and unpaired surrogates becoming U+FFFD, and holds back
// what it cannot decide yet: an escape, a surrogate waiting for its pair, an
// incomplete UTF-8 sequence.
type strDec struct {
	esc     bool              // after a backslash
	hexN    int               // hex digits of a \u escape read so far, 1..4; 0 outside one
	hexVal  rune              // their value
	hasSurr bool              // surr waits for a \u escape with its pair
	surr    rune              // a surrogate
	look    []byte            // what followed surr so far: a prefix of `\uXXXX`
	utf     [utf8.UTFMax]byte // an incomplete UTF-8 sequence
	utfN    int
}

func (d *strDec) idle() bool {
	return !d.esc && d.hexN == 0 && !d.hasSurr && d.utfN == 0
}

type stringError string

func (e stringError) Error() string { return string(e) }

// feed consumes one byte of a string's content, appending what it decides
// to *out, and reports whether c was the closing quote.
func (d *strDec) feed(c byte, out *[]byte) (bool, error) {
	if d.hasSurr {
		d.look = append(d.look, c)
		if lookaheadOK(d.look) {
			if len(d.look) < 6 {
				return false, nil
			}
			if r := utf16.DecodeRune(d.surr, hexRune(d.look[2:6])); r != unicode.ReplacementChar {
				*out = utf8.AppendRune(*out, r)
				d.hasSurr, d.look = false, d.look[:0]
				return false, nil
			}
		}
		// Not a pair: the surrogate becomes U+FFFD and what followed it is
		// read again. Only the last byte read again can be a closing quote.
		*out = utf8.AppendRune(*out, utf8.RuneError)
		again := append([]byte(nil), d.look...)
		d.hasSurr, d.look = false, d.look[:0]
		var done bool
		for _, b := range again {
			var err error
			if done, err = d.feed(b, out); err != nil {
				return false, err
			}
		}
		return done, nil
	}
	if d.esc {
		d.esc = false
		switch c {
		case '"', '\\', '/':
			*out = append(*out, c)
		case 'b':
			*out = append(*out, '\b')
		case 'f':
			*out = append(*out, '\f')
		case 'n':
			*out = append(*out, '\n')
		case 'r':
			*out = append(*out, '\r')
		case 't':
			*out = append(*out, '\t')
		case 'u':
			d.hexN, d.hexVal = 1, 0
		default:
			return false, stringError(fmt.Sprintf("invalid character %q in string escape code", c))
		}
		return false, nil
	}
	if d.hexN > 0 {
		h := hexDigit(c)
		if h < 0 {
			return false, stringError(fmt.Sprintf("invalid character %q in \\u hexadecimal character escape", c))
		}
		d.hexVal = d.hexVal<<4 | h
		if d.hexN++; d.hexN == 5 {
			d.hexN = 0
			if utf16.IsSurrogate(d.hexVal) {
				d.hasSurr, d.surr = true, d.hexVal
			} else {
				*out = utf8.AppendRune(*out, d.hexVal)
			}
		}
		return false, nil
	}
	if d.utfN > 0 {
		if c >= utf8.RuneSelf {
			d.utf[d.utfN] = c
			d.utfN++
			d.flushUTF8(out, false)
			return false, nil
		}
		d.flushUTF8(out, true)
	}
	switch {
	case c == '"':
		return true, nil
	case c == '\\':
		d.esc = true
	case c < 0x20:
		return false, stringError(fmt.Sprintf("invalid character %q in string literal", c))
	case c < utf8.RuneSelf:
		*out = append(*out, c)
	default:
		d.utf[0], d.utfN = c, 1
		d.flushUTF8(out, false)
	}
	return false, nil
}

// flushUTF8 decodes the pending UTF-8 bytes that make a rune or an invalid
// sequence, all of them when the sequence can no longer grow.
func (d *strDec) flushUTF8(out *[]byte, all bool) {
	for d.utfN > 0 && (all || utf8.FullRune(d.utf[:d.utfN])) {
		r, n := utf8.DecodeRune(d.utf[:d.utfN])
		*out = utf8.AppendRune(*out, r)
		d.utfN = copy(d.utf[:], d.utf[n:d.utfN])
	}
}

// lookaheadOK reports whether b is a prefix of a \uXXXX escape.
func lookaheadOK(b []byte) bool {
	for i, c := range b {
		switch {
		case i == 0 && c != '\\', i == 1 && c != 'u', i >= 2 && hexDigit(c) < 0:
			return false
		}
	}
	return true
}

func hexDigit(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

func hexRune(b []byte) rune {
	var r rune
	for _, c := range b {
		r = r<<4 | hexDigit(c)
	}
	return r
}
