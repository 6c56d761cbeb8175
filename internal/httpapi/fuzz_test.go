package httpapi

import (
	"bytes"
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzAppendString: the stream's hand-written JSON strings decode to the
// text they encode (invalid UTF-8 as U+FFFD, as encoding/json does), and
// are the bytes encoding/json writes with HTML escaping off.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" and \\", "\n\r\t\b\f\x00\x1f", "é 世界 🙂", "\u2028\u2029", "bad \xff\xfe utf8", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q encodes as %s, which does not decode: %v", s, got, err)
		}
		if want := string(bytes.ToValidUTF8([]byte(s), []byte("\uFFFD"))); utf8.ValidString(s) && back != want {
			t.Fatalf("%q round-trips as %q", s, back)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if want := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
			t.Fatalf("%q encodes as %s, encoding/json as %s", s, got, want)
		}
	})
}

// FuzzDecode: any request body is translated or refused with a failure
// naming what is wrong; nothing panics.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]}`,
		`{"model":"m","max_tokens":5,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"}]}]}]}`,
		`{"response_format":{"type":"json_schema","json_schema":{"schema":{"type":"object"}}},"llmrelay":{"provider_options":{"faults":[]}}}`,
		`{"model":"m","instructions":"s","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"r"}],"text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object"}}}}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}]}]}`,
		`[]`, `null`, `{"messages":null}`, `{"model":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, fm := range []format{openAI{}, responses{}, anthropic{}} {
			tr, fail := fm.decode(body, nil)
			switch {
			case fail != nil && (fail.status != 400 || fail.message == ""):
				t.Fatalf("%s refused %q with %d %q", fm.name(), body, fail.status, fail.message)
			case fail == nil && (tr == nil || tr.req == nil):
				t.Fatalf("%s accepted %q without a request", fm.name(), body)
			case fail == nil:
				// Every field path of the request names a wire member.
				_ = tr.param("messages[0].content")
			}
		}
	})
}

// FuzzIntegerIn: integerIn takes exactly the JSON numbers whose value is a
// whole number in range, with that value, as math/big reads them (for
// exponents small enough for it to be cheap), whatever their spelling.
func FuzzIntegerIn(f *testing.F) {
	for _, s := range []string{"1000", "1000.0", "1e3", "1.0e3", "10E+2", "10000e-1", "10.5", "1e400", "1e-400", "0e999999999999",
		"-0", "-1", "0.000", "01", "1.", ".5", "1e", "\"1000\"", "NaN", "9223372036854775807", "9223372036854775808", "1.00000000000000001"} {
		f.Add(s)
	}
	number := regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?([0-9]+))?$`)
	f.Fuzz(func(t *testing.T, s string) {
		const lo, hi = 0, 1 << 40
		n, ok := integerIn(json.RawMessage(s), lo, hi)
		s = strings.Trim(s, " \t\r\n") // JSON's whitespace around a value
		m := number.FindStringSubmatch(s)
		if m == nil {
			if ok {
				t.Fatalf("%q, not a JSON number, is taken as %d", s, n)
			}
			return
		}
		if e, err := strconv.Atoi(m[4]); m[4] != "" && (err != nil || e > 400) {
			return // too costly for big.Rat
		}
		r, _ := new(big.Rat).SetString(s)
		want := r.IsInt() && r.Num().IsInt64() && r.Num().Int64() >= lo && r.Num().Int64() <= hi
		if ok != want || ok && n != r.Num().Int64() {
			t.Fatalf("%q: integerIn %d, %v; its value is %s", s, n, ok, r.RatString())
		}
	})
}
