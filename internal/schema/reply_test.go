package schema

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseReply(t *testing.T) {
	obj := map[string]any{"a": json.Number("1")}
	tests := []struct {
		name string
		text string
		want any
	}{
		{"bare object", `{"a":1}`, obj},
		{"whitespace around", " \n\t{\"a\":1}\r\n ", obj},
		{"json fence", "```json\n{\"a\":1}\n```", obj},
		{"fence in capitals with blanks", "```JSON \r\n  {\"a\":1}  \r\n```\n", obj},
		{"bare fence", "```\n{\"a\":1}```", obj},
		{"array", `[1,"x",null]`, []any{json.Number("1"), "x", nil}},
		{"string", `"x"`, "x"},
		{"precise number kept", `0.1`, json.Number("0.1")},
		{"tiny number is zero-ish but fine", `1e-400`, json.Number("1e-400")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseReply(tt.text)
			if err != nil {
				t.Fatalf("ParseReply(%q): %v", tt.text, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseReply(%q) = %#v, want %#v", tt.text, got, tt.want)
			}
		})
	}
}

func TestParseReplyRejects(t *testing.T) {
	tests := []struct {
		name, text, problem string
		offset              int
	}{
		{"empty", "  \n", "the reply is empty", 3},
		{"prose before", `Here you go: {"a":1}`, "invalid character 'H' looking for beginning of value", 1},
		{"prose after", `{"a":1} Hope this helps`, "text follows the JSON value", 8},
		{"two values", `{"a":1}{"b":2}`, "text follows the JSON value", 7},
		{"cut short", `{"a":[1,2`, "the JSON value is cut short", 9},
		{"fence not closed", "```json\n{\"a\":1}\n", "the ``` fence is not closed at the end of the reply", 15},
		{"other language", "```python\n{}\n```", "a ``` fence must be followed by an optional \"json\" and a line break", 0},
		{"fence on one line", "```{\"a\":1}```", "a ``` fence must be followed by an optional \"json\" and a line break", 0},
		{"text after fence", "```json\n{}\n```\nDone.", "the ``` fence is not closed at the end of the reply", 20},
		{"empty fence", "```\n```", "the reply is empty", 4},
		{"huge number", `{"a":[1,1e999]}`, "the number at '/a/1' is too large", 0},
		{"single quotes", `{'a':1}`, "invalid character '\\'' looking for beginning of object key string", 2},
		{"trailing comma", `[1,]`, "invalid character ']' looking for beginning of value", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseReply(tt.text)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseReply(%q) error = %v, want a *ParseError", tt.text, err)
			}
			if pe.Problem != tt.problem || pe.Offset != tt.offset {
				t.Fatalf("ParseReply(%q) = %q at %d, want %q at %d", tt.text, pe.Problem, pe.Offset, tt.problem, tt.offset)
			}
			if !strings.HasPrefix(pe.Reason(), "not valid JSON: ") {
				t.Fatalf("Reason() = %q", pe.Reason())
			}
		})
	}
}

// FuzzParseReply checks ParseReply against encoding/json: it accepts exactly
// the texts whose trimmed, unfenced body is one valid JSON value with numbers
// that fit a float64, and what it returns survives a round trip.
func FuzzParseReply(f *testing.F) {
	for _, s := range partialReplies {
		f.Add(s)
	}
	f.Add("```json\n```")
	f.Add("Sure! {}")
	f.Fuzz(func(t *testing.T, text string) {
		v, err := ParseReply(text)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a *ParseError", err, err)
			}
		}
		if !strings.Contains(text, "`") {
			trimmed, _ := trimJSONSpace(text)
			want := trimmed != "" && json.Valid([]byte(trimmed))
			if want {
				d, _ := decodeJSON([]byte(trimmed))
				if _, bad := outOfRange(d, ""); bad {
					want = false
				}
			}
			if (err == nil) != want {
				t.Fatalf("ParseReply(%q) error = %v; encoding/json says valid = %v", text, err, want)
			}
		}
		if err != nil {
			return
		}
		b, err := marshalJSON(v)
		if err != nil {
			t.Fatalf("value %#v does not marshal: %v", v, err)
		}
		again, err := ParseReply("```json\n" + string(b) + "\n```")
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("round trip of %q: %#v, %v; want %#v", text, again, err, v)
		}
	})
}

// FuzzPartial feeds a reply in pieces and checks every snapshot against
// ParseReply's value: never inconsistent, never an error for a valid reply,
// and the whole value once an object, array or string is complete.
func FuzzPartial(f *testing.F) {
	for _, s := range partialReplies {
		f.Add(s, uint64(3))
	}
	f.Add(`{"a":"\ud83d\ude00`, uint64(1))
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		final, ferr := ParseReply(text)
		check := ferr == nil && !hasDuplicateKeys(text)
		p := NewPartial()
		for rest := text; rest != ""; {
			n := 1 + int(seed%7)
			seed = seed*6364136223846793005 + 1442695040888963407
			n = min(n, len(rest))
			p.Feed(rest[:n])
			rest = rest[n:]
			got, ok := p.Snapshot()
			if check && ok && !consistent(got, final) {
				t.Fatalf("after %q: partial %#v is not consistent with %#v", text[:len(text)-len(rest)], got, final)
			}
		}
		if ferr == nil && p.Err() != nil {
			t.Fatalf("Partial failed on a valid reply %q: %v", text, p.Err())
		}
		if !check {
			return
		}
		switch final.(type) {
		case map[string]any, []any, string:
			if got, ok := p.Snapshot(); !ok || !reflect.DeepEqual(got, final) {
				t.Fatalf("complete %q: partial %#v, want %#v", text, got, final)
			}
		}
	})
}
