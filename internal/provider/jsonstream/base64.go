package jsonstream

import (
	"encoding/binary"
	"math"
	"strconv"
)

// b64 maps a byte of base64's standard alphabet (RFC 4648) to its six
// bits, and every other byte to b64Invalid.
var b64 = func() (t [256]byte) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range t {
		t[i] = b64Invalid
	}
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	return t
}()

const b64Invalid = 0xff

// b64Run is the characters of base64 that hold a whole number of float32s:
// 16 characters are 12 bytes, three values.
const b64Run = 16

// Base64Float32s reads a string of base64 (the standard alphabet, padded,
// as encoding/base64.StdEncoding decodes it) that holds float32s,
// little-endian, four bytes a value: OpenAI's embeddings with
// encoding_format "base64". It appends each value to dst; null appends
// nothing. It returns ErrTooMany, with the max values read, when the
// string holds more than max. A string that is not base64, whose bytes
// are not a whole number of float32s, or that holds a NaN or an infinity
// (which no JSON number is) is a SyntaxError. The string is decoded as it
// arrives; its text is not held. An escaped character (`\/`, `\u0041`)
// counts as the character it stands for.
func (d *Decoder) Base64Float32s(dst []float32, max int) ([]float32, error) {
	if null, err := d.begin('"', "a base64 string"); null || err != nil {
		return dst, err
	}
	var (
		quad  uint32 // the six-bit groups of the quantum being read
		nq    int    // how many of its four characters are read
		pads  int    // how many of them are padding
		word  uint32 // the bytes of the value being read, little-endian
		nw    int    // how many of its four bytes are read
		count int    // the values read
	)
	for {
		if d.i == d.n && !d.fill() {
			return dst, d.short()
		}
		if nq == 0 && nw == 0 && pads == 0 {
			// Whole runs of the alphabet straight from the buffer, the
			// bulk of a vector.
			var err error
			if dst, count, err = d.b64Runs(dst, count, max); err != nil {
				return dst, err
			}
			if d.i == d.n {
				continue
			}
		}
		// One character at a time: a run cut by the buffer's end, an
		// escape, the padding, the closing quote.
		ch, size := d.buf[d.i], 1
		switch {
		case ch == '"':
			switch {
			case nq != 0:
				return dst, d.syntax("base64 string ends inside a quantum of " + strconv.Itoa(nq) + " characters")
			case nw != 0:
				return dst, d.syntax("base64 string of " + strconv.Itoa(4*count+nw) + " bytes, not a whole number of 4-byte float32s")
			}
			d.i++
			return dst, nil
		case ch == '\\':
			if !d.need(2) {
				return dst, d.short()
			}
			switch d.buf[d.i+1] {
			case '/':
				ch, size = '/', 2
			case 'u':
				r, ok := d.hex4(2)
				if !ok || r >= 0x80 {
					return dst, d.syntax("invalid escape in base64 string")
				}
				ch, size = byte(r), 6
			default:
				return dst, d.syntax("invalid escape in base64 string")
			}
		}
		switch v := b64[ch]; {
		case ch == '=' && nq >= 2:
			pads++
		case v == b64Invalid, pads > 0:
			return dst, d.syntax("invalid character " + strconv.QuoteRune(rune(ch)) + " in base64 string")
		default:
			quad |= uint32(v) << (18 - 6*nq)
		}
		d.i += size
		if nq++; nq < 4 {
			continue
		}
		for k := range 3 - pads {
			word |= (quad >> (16 - 8*k) & 0xff) << (8 * nw)
			if nw++; nw < 4 {
				continue
			}
			if count == max {
				return dst, ErrTooMany
			}
			if !finite(word) {
				return dst, d.notFinite(word)
			}
			dst = append(dst, math.Float32frombits(word))
			count++
			word, nw = 0, 0
		}
		quad, nq = 0, 0
		if pads > 0 {
			// Padding ends the data: only the closing quote may follow.
			if d.i == d.n && !d.fill() {
				return dst, d.short()
			}
			if d.buf[d.i] != '"' {
				return dst, d.syntax("data after base64 padding")
			}
			pads = 0
		}
	}
}

// b64Runs decodes the runs of b64Run characters of the alphabet at the
// cursor, while the values stay within max, appending their values to dst;
// count is the values read before, and the count after is returned.
func (d *Decoder) b64Runs(dst []float32, count, max int) ([]float32, int, error) {
	// The buffer and the cursor in locals, as in peek.
	buf, i := d.buf[:d.n], d.i
	for ; len(buf)-i >= b64Run && max-count >= 3; i += b64Run {
		s := buf[i : i+b64Run : i+b64Run]
		var raw [12]byte
		for q := range 4 {
			a, b, c, e := b64[s[4*q]], b64[s[4*q+1]], b64[s[4*q+2]], b64[s[4*q+3]]
			if (a|b|c|e)&0xc0 != 0 {
				d.i = i
				return dst, count, nil // not all of the alphabet: one at a time
			}
			v := uint32(a)<<18 | uint32(b)<<12 | uint32(c)<<6 | uint32(e)
			raw[3*q], raw[3*q+1], raw[3*q+2] = byte(v>>16), byte(v>>8), byte(v)
		}
		for k := 0; k < 12; k += 4 {
			bits := binary.LittleEndian.Uint32(raw[k:])
			if !finite(bits) {
				d.i = i
				return dst, count, d.notFinite(bits)
			}
			dst = append(dst, math.Float32frombits(bits))
		}
		count += 3
	}
	d.i = i
	return dst, count, nil
}

// finite reports whether the float32 of bits is neither a NaN nor an
// infinity, not all of whose exponent bits are set.
func finite(bits uint32) bool { return bits&0x7f800000 != 0x7f800000 }

// notFinite is the error of a value that is a NaN or an infinity.
func (d *Decoder) notFinite(bits uint32) error {
	return d.syntax("base64 string holds " + strconv.FormatFloat(float64(math.Float32frombits(bits)), 'g', -1, 32) +
		", which is not a number JSON can hold")
}
