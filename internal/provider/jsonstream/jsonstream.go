// Package jsonstream reads one JSON value from an io.Reader as it arrives,
// for replies too large to hold whole: an embeddings reply of 2048 vectors
// of 3072 values is some 140 MiB of pretty-printed JSON text, and its
// vectors only 24 MiB as float32. The Decoder holds a fixed buffer, not
// the reply; the caller walks the value with Object and Array, takes the
// parts it wants (Float32s, Base64Float32s, Int) and Skips the rest, so
// that what it keeps is all that grows.
//
// It accepts exactly the JSON that encoding/json does (Skip's fuzz test
// holds it to json.Valid, Float32s' to json.Unmarshal into []float32),
// but for numbers longer than MaxNumber bytes, and for null inside an
// array of numbers, which encoding/json takes for a zero and Float32s
// refuses. Object keys are compared as sent, unescaped: the caller
// matches them exactly, not ignoring case as encoding/json does.
// Base64Float32s' fuzz test holds it to json.Unmarshal into a string and
// encoding/base64's StdEncoding, but for line breaks, which
// encoding/base64 skips and it refuses.
package jsonstream

import (
	"errors"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxNumber bounds the text of one number, in bytes.
const MaxNumber = 1 << 10

// maxDepth bounds the nesting of arrays and objects, as encoding/json's
// does.
const maxDepth = 10000

// bufSize is the size of a Decoder's buffer.
const bufSize = 32 << 10

// ErrTooMany is returned by Float32s and Base64Float32s for more values
// than their bound.
var ErrTooMany = errors.New("jsonstream: more values than the bound")

// SyntaxError is a value that is not JSON, or not the JSON the caller
// asked for (a string where Float32s wants an array).
type SyntaxError struct {
	// Offset is the offset in the input of the byte the error is about.
	Offset int64
	msg    string
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return e.msg + " at offset " + strconv.FormatInt(e.Offset, 10)
}

// Decoder reads one JSON value from a reader. Its errors are a
// *SyntaxError, ErrTooMany, or the reader's error (other than io.EOF) as
// it was returned. It is not safe for concurrent use.
type Decoder struct {
	r    io.Reader
	buf  []byte
	i, n int   // buf[i:n] is read but not yet decoded
	off  int64 // the input offset of buf[0]
	err  error // what the reader returned last, once it returned an error
	key  []byte
}

// NewDecoder returns a Decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: r, buf: make([]byte, bufSize)}
}

// Near returns up to n bytes of the input before the cursor and up to n
// after it, as far as the buffer holds them: the context of an error, for
// a debug log.
func (d *Decoder) Near(n int) []byte {
	return d.buf[max(0, d.i-n):min(d.n, d.i+n)]
}

// fill reads more input into the buffer, moving the unread bytes to its
// front, and reports whether it read any.
func (d *Decoder) fill() bool {
	if d.err != nil {
		return false
	}
	if d.i > 0 {
		d.n = copy(d.buf, d.buf[d.i:d.n])
		d.off += int64(d.i)
		d.i = 0
	}
	for range 100 {
		m, err := d.r.Read(d.buf[d.n:])
		d.n += m
		if err != nil {
			d.err = err
			return m > 0
		}
		if m > 0 {
			return true
		}
	}
	d.err = io.ErrNoProgress
	return false
}

// need reads until k bytes are buffered from the cursor on, and reports
// whether there are.
func (d *Decoder) need(k int) bool {
	for d.n-d.i < k {
		if !d.fill() {
			return false
		}
	}
	return true
}

// syntax returns a SyntaxError at the cursor.
func (d *Decoder) syntax(msg string) error {
	return &SyntaxError{Offset: d.off + int64(d.i), msg: msg}
}

// short returns the error of input that ended before the value did: the
// reader's error, or a SyntaxError when the input ended (io.EOF).
func (d *Decoder) short() error {
	if d.err != nil && d.err != io.EOF {
		return d.err
	}
	return d.syntax("unexpected end of JSON input")
}

// peek returns the next byte after whitespace, without consuming it.
func (d *Decoder) peek() (byte, error) {
	for {
		// The buffer and the cursor in locals: a loop over the fields
		// would load them from the Decoder a byte at a time (and the race
		// detector would check every load).
		buf, i := d.buf[:d.n], d.i
		for ; i < len(buf); i++ {
			if c := buf[i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				d.i = i
				return c, nil
			}
		}
		d.i = i
		if !d.fill() {
			return 0, d.short()
		}
	}
}

// expect consumes c, after whitespace.
func (d *Decoder) expect(c byte, what string) error {
	got, err := d.peek()
	if err != nil {
		return err
	}
	if got != c {
		return d.syntax("invalid character " + strconv.QuoteRune(rune(got)) + " " + what)
	}
	d.i++
	return nil
}

// End reads the rest of the input and returns an error unless it is
// whitespace.
func (d *Decoder) End() error {
	_, err := d.peek()
	switch {
	case err == nil:
		return d.syntax("invalid character after top-level value")
	case d.err == io.EOF:
		return nil
	}
	return err
}

// Peek returns the first byte of the next value, after whitespace, without
// consuming it: '[' for an array, '"' for a string, and so on.
func (d *Decoder) Peek() (byte, error) { return d.peek() }

// Null consumes null, after whitespace, and reports whether it was next.
func (d *Decoder) Null() (bool, error) {
	c, err := d.peek()
	if err != nil || c != 'n' {
		return false, err
	}
	return true, d.literal("null")
}

// literal consumes w (true, false, null), whose first byte is next.
func (d *Decoder) literal(w string) error {
	for k := range len(w) {
		if d.i == d.n && !d.fill() {
			return d.short()
		}
		if d.buf[d.i] != w[k] {
			return d.syntax("invalid character " + strconv.QuoteRune(rune(d.buf[d.i])) + " in literal " + w)
		}
		d.i++
	}
	return nil
}

// Object reads an object, calling field with each key (unescaped; valid
// until field reads another object) to read the key's value with the
// Decoder's other methods. An error field returns ends the reading.
func (d *Decoder) Object(field func(key []byte) error) error {
	if err := d.expect('{', "looking for beginning of object"); err != nil {
		return err
	}
	c, err := d.peek()
	if err != nil {
		return err
	}
	if c == '}' {
		d.i++
		return nil
	}
	for {
		if err := d.expect('"', "looking for beginning of object key string"); err != nil {
			return err
		}
		d.key, err = d.str(d.key[:0], true)
		if err != nil {
			return err
		}
		if err := d.expect(':', "after object key"); err != nil {
			return err
		}
		if err := field(d.key); err != nil {
			return err
		}
		c, err := d.peek()
		if err != nil {
			return err
		}
		d.i++
		switch c {
		case ',':
		case '}':
			return nil
		default:
			d.i--
			return d.syntax("invalid character " + strconv.QuoteRune(rune(c)) + " after object key:value pair")
		}
	}
}

// Array reads an array, calling elem to read each element with the
// Decoder's other methods. An error elem returns ends the reading.
func (d *Decoder) Array(elem func() error) error {
	if err := d.expect('[', "looking for beginning of array"); err != nil {
		return err
	}
	c, err := d.peek()
	if err != nil {
		return err
	}
	if c == ']' {
		d.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if err := d.next(); err != nil || d.buf[d.i-1] == ']' {
			return err
		}
	}
}

// next consumes the ',' or ']' after an array element.
func (d *Decoder) next() error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	if c != ',' && c != ']' {
		return d.syntax("invalid character " + strconv.QuoteRune(rune(c)) + " after array element")
	}
	d.i++
	return nil
}

// begin consumes, after whitespace, null, or open, the first byte of the
// value what names, and reports whether it was null.
func (d *Decoder) begin(open byte, what string) (bool, error) {
	c, err := d.peek()
	switch {
	case err != nil:
		return false, err
	case c == 'n':
		return true, d.literal("null")
	case c != open:
		return false, d.syntax("invalid character " + strconv.QuoteRune(rune(c)) + " looking for beginning of " + what)
	}
	d.i++
	return false, nil
}

// Float32s reads an array of numbers, appending each, converted to the
// nearest float32 as encoding/json converts it, to dst; null appends
// nothing. It returns ErrTooMany, with the max values read, when the
// array holds more than max.
func (d *Decoder) Float32s(dst []float32, max int) ([]float32, error) {
	if null, err := d.begin('[', "an array of numbers"); null || err != nil {
		return dst, err
	}
	c, err := d.peek()
	switch {
	case err != nil:
		return dst, err
	case c == ']':
		d.i++
		return dst, nil
	}
	for n := 0; ; n++ {
		if n == max {
			return dst, ErrTooMany
		}
		if c, err = d.peek(); err != nil {
			return dst, err
		}
		if c != '-' && (c < '0' || c > '9') {
			return dst, d.syntax("invalid character " + strconv.QuoteRune(rune(c)) + " looking for a number")
		}
		tok, err := d.number()
		if err != nil {
			return dst, err
		}
		f, err := strconv.ParseFloat(string(tok), 32)
		if err != nil {
			d.i -= len(tok)
			return dst, d.syntax("number " + string(tok) + " is out of float32's range")
		}
		dst = append(dst, float32(f))
		if err := d.next(); err != nil || d.buf[d.i-1] == ']' {
			return dst, err
		}
	}
}

// Int reads a number that is an integer (no fraction, no exponent) in
// int64's range.
func (d *Decoder) Int() (int64, error) {
	c, err := d.peek()
	if err != nil {
		return 0, err
	}
	if c != '-' && (c < '0' || c > '9') {
		return 0, d.syntax("invalid character " + strconv.QuoteRune(rune(c)) + " looking for an integer")
	}
	tok, err := d.number()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil {
		d.i -= len(tok)
		return 0, d.syntax("number " + string(tok) + " is not an integer in int64's range")
	}
	return v, nil
}

// Skip reads one value of any kind, checking that it is JSON.
func (d *Decoder) Skip() error { return d.skip(0) }

func (d *Decoder) skip(depth int) error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	switch {
	case c == '{' || c == '[':
		if depth == maxDepth {
			return d.syntax("exceeded max depth")
		}
		if c == '{' {
			return d.Object(func([]byte) error { return d.skip(depth + 1) })
		}
		return d.Array(func() error { return d.skip(depth + 1) })
	case c == '"':
		d.i++
		_, err := d.str(nil, false)
		return err
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := d.number()
		return err
	}
	return d.syntax("invalid character " + strconv.QuoteRune(rune(c)) + " looking for beginning of value")
}

// number consumes the number whose first byte is next and returns its
// text, valid until the next read.
func (d *Decoder) number() ([]byte, error) {
	for {
		end, ok := scanNumber(d.buf[d.i:d.n])
		if end > MaxNumber {
			return nil, d.syntax("number longer than " + strconv.Itoa(MaxNumber) + " bytes")
		}
		if d.i+end == d.n && d.fill() {
			continue // the number may go on past the buffer: scan it again whole
		}
		if d.i+end == d.n && d.err != nil && d.err != io.EOF {
			return nil, d.err
		}
		tok := d.buf[d.i : d.i+end]
		if !ok {
			return nil, d.syntax("invalid number " + strconv.Quote(string(tok)))
		}
		d.i += end
		return tok, nil
	}
}

// scanNumber returns how many bytes at the start of b are the longest
// prefix of a JSON number, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?,
// that the grammar lets go on, and whether they are a whole number. What
// follows a number is the caller's to check.
func scanNumber(b []byte) (int, bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i, true
}

// str consumes the rest of a string whose opening quote was consumed,
// appending its unescaped text to dst when keep is set (invalid UTF-8 and
// lone surrogates as U+FFFD, as encoding/json decodes them).
func (d *Decoder) str(dst []byte, keep bool) ([]byte, error) {
	start := len(dst)
	for {
		if d.i == d.n && !d.fill() {
			return dst, d.short()
		}
		c := d.buf[d.i]
		switch {
		case c == '"':
			d.i++
			if keep && !utf8.Valid(dst[start:]) {
				dst = append(dst[:start], toValid(dst[start:])...)
			}
			return dst, nil
		case c < ' ':
			return dst, d.syntax("invalid character " + strconv.QuoteRune(rune(c)) + " in string literal")
		case c == '\\':
			if !d.need(2) {
				return dst, d.short()
			}
			switch e := d.buf[d.i+1]; e {
			case '"', '\\', '/':
				dst = appendIf(keep, dst, e)
			case 'b':
				dst = appendIf(keep, dst, '\b')
			case 'f':
				dst = appendIf(keep, dst, '\f')
			case 'n':
				dst = appendIf(keep, dst, '\n')
			case 'r':
				dst = appendIf(keep, dst, '\r')
			case 't':
				dst = appendIf(keep, dst, '\t')
			case 'u':
				r, ok := d.hex4(2)
				if !ok {
					return dst, d.syntax("invalid \\u escape in string literal")
				}
				d.i += 4
				if utf16.IsSurrogate(r) {
					// A pair is two escapes; anything else leaves the
					// first alone (U+FFFD) and reads what follows.
					if d.need(8) && d.buf[d.i+2] == '\\' && d.buf[d.i+3] == 'u' {
						if r2, ok := d.hex4(4); ok {
							if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
								r = p
								d.i += 6
							} else {
								r = utf8.RuneError
							}
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				if keep {
					dst = utf8.AppendRune(dst, r)
				}
			default:
				d.i++
				return dst, d.syntax("invalid character " + strconv.QuoteRune(rune(e)) + " in string escape code")
			}
			d.i += 2
		default:
			j := d.i + 1
			for j < d.n && d.buf[j] >= ' ' && d.buf[j] != '"' && d.buf[j] != '\\' {
				j++
			}
			if keep {
				dst = append(dst, d.buf[d.i:j]...)
			}
			d.i = j
		}
	}
}

// hex4 returns the rune of the four hex digits at d.i+at, if they are.
func (d *Decoder) hex4(at int) (rune, bool) {
	if !d.need(at + 4) {
		return 0, false
	}
	var r rune
	for _, c := range d.buf[d.i+at : d.i+at+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func appendIf(keep bool, dst []byte, c byte) []byte {
	if keep {
		dst = append(dst, c)
	}
	return dst
}

// toValid returns b with each byte that is not part of valid UTF-8 as
// U+FFFD, as encoding/json decodes a string.
func toValid(b []byte) []byte {
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		out = utf8.AppendRune(out, r)
		b = b[size:]
	}
	return out
}
