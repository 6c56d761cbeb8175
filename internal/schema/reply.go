package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ParseError says that a reply is not a JSON value (with at most a
// surrounding ``` fence and whitespace).
type ParseError struct {
	// Offset is the byte offset in the reply where parsing failed.
	Offset int
	// Problem says what is wrong.
	Problem string
}

// Error implements error.
func (e *ParseError) Error() string {
	return fmt.Sprintf("reply is not JSON: %s (at byte %d)", e.Problem, e.Offset)
}

// Reason is the message of the violation a reply that is not JSON becomes.
func (e *ParseError) Reason() string { return "not valid JSON: " + e.Problem }

// isJSONSpace reports whether c is JSON whitespace.
func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func trimJSONSpace(s string) (string, int) {
	start, end := 0, len(s)
	for start < end && isJSONSpace(s[start]) {
		start++
	}
	for end > start && isJSONSpace(s[end-1]) {
		end--
	}
	return s[start:end], start
}

const fence = "```"

// fenceInfoOK reports whether the info string after an opening ``` is one
// ParseReply accepts: nothing or "json", in any case, with blanks around.
func fenceInfoOK(info string) bool {
	info = strings.Trim(info, " \t\r")
	return info == "" || strings.EqualFold(info, "json")
}

// unfence returns the JSON text of a reply and its offset in the reply:
// whitespace trimmed, and a surrounding fence removed.
func unfence(text string) (string, int, error) {
	body, off := trimJSONSpace(text)
	if !strings.HasPrefix(body, fence) {
		return body, off, nil
	}
	info, rest, ok := strings.Cut(body[len(fence):], "\n")
	if !ok || !fenceInfoOK(info) {
		return "", off, &ParseError{Offset: off, Problem: "a ``` fence must be followed by an optional \"json\" and a line break"}
	}
	off += len(fence) + len(info) + 1
	if !strings.HasSuffix(rest, fence) {
		return "", off + len(rest), &ParseError{Offset: off + len(rest), Problem: "the ``` fence is not closed at the end of the reply"}
	}
	inner, start := trimJSONSpace(rest[:len(rest)-len(fence)])
	return inner, off + start, nil
}

// ParseReply parses a model's reply as one JSON value. It tolerates
// whitespace around the value and a surrounding Markdown fence (``` or
// ```json on its own line, and a closing ```), nothing else: no prose, no
// second value. Numbers are json.Number; a number too large for a float64
// is refused, because the reply must fit a google.protobuf.Value. Errors are
// *ParseError.
func ParseReply(text string) (any, error) {
	body, off, err := unfence(text)
	if err != nil {
		return nil, err
	}
	if body == "" {
		return nil, &ParseError{Offset: off, Problem: "the reply is empty"}
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, decodeError(err, off, len(body))
	}
	if end := int(dec.InputOffset()); end < len(body) {
		rest, ws := trimJSONSpace(body[end:])
		if rest != "" {
			return nil, &ParseError{Offset: off + end + ws, Problem: "text follows the JSON value"}
		}
	}
	if at, bad := outOfRange(v, ""); bad {
		return nil, &ParseError{Offset: off, Problem: fmt.Sprintf("the number at %s is too large", quoteLocation(at))}
	}
	return v, nil
}

func decodeError(err error, off, n int) *ParseError {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return &ParseError{Offset: off + int(syn.Offset), Problem: syn.Error()}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &ParseError{Offset: off + n, Problem: "the JSON value is cut short"}
	}
	return &ParseError{Offset: off, Problem: jsonErrorText(err)}
}

// jsonErrorText is err's message without encoding/json's "json: " prefix.
func jsonErrorText(err error) string { return strings.TrimPrefix(err.Error(), "json: ") }

// outOfRange reports the location of the first number in v that does not
// fit a float64.
func outOfRange(v any, at string) (string, bool) {
	return findJSON(v, at, func(v any, at string) (string, bool) {
		n, ok := v.(json.Number)
		if !ok {
			return "", false
		}
		_, err := n.Float64()
		return at, err != nil
	})
}
