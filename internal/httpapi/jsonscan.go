package httpapi

// jsonScan tells whether a streamed tool call's arguments, written to it a
// fragment at a time, are whole JSON so far, exactly as json.Valid would
// tell of them all; it is encoding/json's scanner, kept between the
// fragments, so that it reads each byte once. The streams ask each time
// another call starts (and the Anthropic one at a fragment that ends with
// a bracket): json.Valid read the arguments whole each time, and an
// upstream that keeps a call's arguments unfinished while it starts up to
// provider.MaxToolCalls others made that a thousand readings of the
// reply. Arguments that can no longer become whole are read no further.
type jsonScan struct {
	step jsonStep
	// nest holds the open arrays and objects, innermost last: where in
	// each the value being read is.
	nest []jsonNest
	// read counts the bytes examined, across resets, for the test that
	// holds it to one reading of each.
	read int
}

// jsonStep is what a jsonScan expects of the next byte, as encoding/json's
// scanner's step functions (stateBeginValue and the rest) are.
type jsonStep uint8

const (
	stepBeginValue jsonStep = iota
	stepBeginValueOrEmpty
	stepBeginStringOrEmpty
	stepBeginString
	stepEndValue
	stepEndTop
	stepInString
	stepInStringEsc
	stepInStringEscU
	stepInStringEscU1
	stepInStringEscU12
	stepInStringEscU123
	stepNeg
	step0
	step1
	stepDot
	stepDot0
	stepE
	stepESign
	stepE0
	stepT
	stepTr
	stepTru
	stepF
	stepFa
	stepFal
	stepFals
	stepN
	stepNu
	stepNul
	// stepBroken: the arguments are not the start of any JSON value.
	stepBroken
)

// jsonNest is what an open array or object reads next.
type jsonNest uint8

const (
	nestObjectKey jsonNest = iota
	nestObjectValue
	nestArrayValue
)

// maxJSONDepth is encoding/json's bound on nesting, past which json.Valid
// fails.
const maxJSONDepth = 10000

// write adds a fragment of the arguments.
func (s *jsonScan) write(fragment string) {
	i := 0
	for ; i < len(fragment) && s.step != stepBroken; i++ {
		if s.step == stepInString {
			// The bulk of arguments: skip to what ends a string's run.
			for i < len(fragment) && fragment[i] >= 0x20 && fragment[i] != '"' && fragment[i] != '\\' {
				i++
			}
			if i == len(fragment) {
				break
			}
		}
		s.next(fragment[i])
	}
	s.read += i
}

// whole reports whether the arguments so far are whole JSON, as json.Valid
// does: what encoding/json's scanner's eof decides.
func (s *jsonScan) whole() bool {
	switch s.step {
	case stepEndTop:
		return true
	case stepEndValue, step0, step1, stepDot0, stepE0:
		return len(s.nest) == 0
	}
	return false
}

// reset starts on the arguments of another call.
func (s *jsonScan) reset() {
	s.step, s.nest = stepBeginValue, s.nest[:0]
}

func isJSONSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// next reads one byte, as encoding/json's step functions do.
func (s *jsonScan) next(c byte) {
	switch s.step {
	case stepBeginValueOrEmpty:
		if c == ']' {
			s.endValue(c)
			return
		}
		s.beginValue(c)
	case stepBeginValue:
		s.beginValue(c)
	case stepBeginStringOrEmpty:
		if c == '}' {
			s.nest[len(s.nest)-1] = nestObjectValue
			s.endValue(c)
			return
		}
		s.beginString(c)
	case stepBeginString:
		s.beginString(c)
	case stepEndValue:
		s.endValue(c)
	case stepEndTop:
		s.expect(isJSONSpace(c), stepEndTop)
	case stepInString:
		switch {
		case c == '"':
			s.step = stepEndValue
		case c == '\\':
			s.step = stepInStringEsc
		case c < 0x20:
			s.step = stepBroken
		}
	case stepInStringEsc:
		switch c {
		case 'b', 'f', 'n', 'r', 't', '\\', '/', '"':
			s.step = stepInString
		case 'u':
			s.step = stepInStringEscU
		default:
			s.step = stepBroken
		}
	case stepInStringEscU:
		s.expect(isHex(c), stepInStringEscU1)
	case stepInStringEscU1:
		s.expect(isHex(c), stepInStringEscU12)
	case stepInStringEscU12:
		s.expect(isHex(c), stepInStringEscU123)
	case stepInStringEscU123:
		s.expect(isHex(c), stepInString)
	case stepNeg:
		switch {
		case c == '0':
			s.step = step0
		case '1' <= c && c <= '9':
			s.step = step1
		default:
			s.step = stepBroken
		}
	case step1:
		if '0' <= c && c <= '9' {
			return
		}
		s.number0(c)
	case step0:
		s.number0(c)
	case stepDot:
		s.expect('0' <= c && c <= '9', stepDot0)
	case stepDot0:
		switch {
		case '0' <= c && c <= '9':
		case c == 'e' || c == 'E':
			s.step = stepE
		default:
			s.endValue(c)
		}
	case stepE:
		if c == '+' || c == '-' {
			s.step = stepESign
			return
		}
		s.expect('0' <= c && c <= '9', stepE0)
	case stepESign:
		s.expect('0' <= c && c <= '9', stepE0)
	case stepE0:
		if '0' <= c && c <= '9' {
			return
		}
		s.endValue(c)
	case stepT:
		s.expect(c == 'r', stepTr)
	case stepTr:
		s.expect(c == 'u', stepTru)
	case stepTru, stepFals:
		s.expect(c == 'e', stepEndValue)
	case stepF:
		s.expect(c == 'a', stepFa)
	case stepFa:
		s.expect(c == 'l', stepFal)
	case stepFal:
		s.expect(c == 's', stepFals)
	case stepN:
		s.expect(c == 'u', stepNu)
	case stepNu:
		s.expect(c == 'l', stepNul)
	case stepNul:
		s.expect(c == 'l', stepEndValue)
	}
}

// expect steps to next when ok, and breaks the scan when not.
func (s *jsonScan) expect(ok bool, next jsonStep) {
	if ok {
		s.step = next
		return
	}
	s.step = stepBroken
}

func (s *jsonScan) beginValue(c byte) {
	switch {
	case isJSONSpace(c):
	case c == '{':
		s.push(nestObjectKey, stepBeginStringOrEmpty)
	case c == '[':
		s.push(nestArrayValue, stepBeginValueOrEmpty)
	case c == '"':
		s.step = stepInString
	case c == '-':
		s.step = stepNeg
	case c == '0':
		s.step = step0
	case '1' <= c && c <= '9':
		s.step = step1
	case c == 't':
		s.step = stepT
	case c == 'f':
		s.step = stepF
	case c == 'n':
		s.step = stepN
	default:
		s.step = stepBroken
	}
}

func (s *jsonScan) beginString(c byte) {
	switch {
	case isJSONSpace(c):
	case c == '"':
		s.step = stepInString
	default:
		s.step = stepBroken
	}
}

// number0 reads the byte after a number's integer part.
func (s *jsonScan) number0(c byte) {
	switch c {
	case '.':
		s.step = stepDot
	case 'e', 'E':
		s.step = stepE
	default:
		s.endValue(c)
	}
}

func (s *jsonScan) push(n jsonNest, next jsonStep) {
	s.nest = append(s.nest, n)
	s.expect(len(s.nest) <= maxJSONDepth, next)
}

// endValue reads the byte after a value.
func (s *jsonScan) endValue(c byte) {
	n := len(s.nest)
	if n == 0 {
		s.expect(isJSONSpace(c), stepEndTop)
		return
	}
	s.step = stepEndValue
	if isJSONSpace(c) {
		return
	}
	switch {
	case s.nest[n-1] == nestObjectKey && c == ':':
		s.nest[n-1] = nestObjectValue
		s.step = stepBeginValue
	case s.nest[n-1] == nestObjectValue && c == ',':
		s.nest[n-1] = nestObjectKey
		s.step = stepBeginString
	case s.nest[n-1] == nestArrayValue && c == ',':
		s.step = stepBeginValue
	case s.nest[n-1] == nestObjectValue && c == '}', s.nest[n-1] == nestArrayValue && c == ']':
		s.nest = s.nest[:n-1]
		if n == 1 {
			s.step = stepEndTop
		}
	default:
		s.step = stepBroken
	}
}
