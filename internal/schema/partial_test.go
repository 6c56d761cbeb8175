package schema

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// consistent reports whether the partial value p is a prefix-consistent
// view of the final value f: strings are prefixes, arrays prefixes with
// consistent items, objects hold only final keys with consistent values, and
// numbers, booleans and null are final.
func consistent(p, f any) bool {
	switch p := p.(type) {
	case map[string]any:
		fm, ok := f.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range p {
			fv, ok := fm[k]
			if !ok || !consistent(v, fv) {
				return false
			}
		}
		return true
	case []any:
		fa, ok := f.([]any)
		if !ok || len(p) > len(fa) {
			return false
		}
		for i := range p {
			if !consistent(p[i], fa[i]) {
				return false
			}
		}
		return true
	case string:
		fs, ok := f.(string)
		return ok && strings.HasPrefix(fs, p)
	default:
		return reflect.DeepEqual(p, f)
	}
}

// hasDuplicateKeys reports whether some object in the reply repeats a key,
// the one case where a partial value may show a value that a later member
// replaces.
func hasDuplicateKeys(text string) bool {
	body, _, err := unfence(text)
	if err != nil {
		return false
	}
	dec := json.NewDecoder(strings.NewReader(body))
	// value reads one value and reports whether it holds a duplicate key.
	var value func() bool
	value = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('['):
			for dec.More() {
				if value() {
					return true
				}
			}
			dec.Token()
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				key, _ := k.(string)
				if seen[key] {
					return true
				}
				seen[key] = true
				if value() {
					return true
				}
			}
			dec.Token()
		}
		return false
	}
	return value()
}

// checkPrefixes feeds text to one Partial in the given chunks and checks
// every snapshot against the final value; it also checks that a fresh
// Partial fed each whole prefix at once agrees with the incremental one.
func checkPrefixes(t *testing.T, text string, cuts []int) {
	t.Helper()
	final, err := ParseReply(text)
	if err != nil {
		t.Fatalf("test reply does not parse: %v", err)
	}
	p := NewPartial()
	last := 0
	for _, cut := range append(cuts, len(text)) {
		p.Feed(text[last:cut])
		last = cut
		got, ok := p.Snapshot()
		if err := p.Err(); err != nil {
			t.Fatalf("prefix %q: Err = %v for a valid reply", text[:cut], err)
		}
		if ok && !consistent(got, final) {
			t.Fatalf("prefix %q: partial %#v is not consistent with final %#v", text[:cut], got, final)
		}
		once := NewPartial()
		once.Feed(text[:cut])
		got1, ok1 := once.Snapshot()
		if ok1 != ok || !reflect.DeepEqual(got1, got) {
			t.Fatalf("prefix %q: fed at once %#v (%v), fed in pieces %#v (%v)", text[:cut], got1, ok1, got, ok)
		}
	}
	switch final.(type) {
	case map[string]any, []any, string:
		got, ok := p.Snapshot()
		if !ok || !reflect.DeepEqual(got, final) {
			t.Fatalf("whole reply: partial %#v, want the final value %#v", got, final)
		}
	}
}

var partialReplies = map[string]string{
	"issue example":     `{"sentiment":"positive","score":0.93}`,
	"nested":            `{"a":{"b":[1,2,{"c":"d"}],"e":true},"f":null,"g":false,"h":-1.5e3}`,
	"whitespace":        " \n\t{ \"a\" : [ 1 , 2 ] , \"b\" : \"x y\" } \n",
	"fenced":            "```json\n{\"a\":\"b\",\"n\":[10,20]}\n```",
	"bare fence":        "```\n[1,2,3]\n```\n",
	"fence with blanks": "  ```JSON  \r\n{\"a\":1}\r\n```  ",
	"escapes":           `{"s":"tab\tquote\"slash\/back\\nl\nu\u00e9"}`,
	"surrogate pair":    `["\ud83d\ude00 grin","\ud83dX","\udc00\ud83d\ude00","\ud83d\ud83d\ude00"]`,
	"lone surrogate":    `{"a":"\ud83d"}`,
	"utf8":              `{"ключ":"значение — 😀","€":"x"}`,
	"invalid utf8":      "{\"a\":\"\xe2\x82x\xff\xf0\x9f\x98\"}",
	"empty containers":  `{"a":{},"b":[],"c":[{}],"d":""}`,
	"root array":        `[true,false,null,0,-0,0.5,1E+2,"x"]`,
	"root string":       `"hello \"world\""`,
	"root number":       `  12.5e-1  `,
	"root literal":      `null`,
	"deep":              `[[[[[[{"a":[[["b"]]]}]]]]]]`,
	"numbers":           `[0,1,-1,10,1.25,-0.0,1e5,1E-5,123456789012345678901234567890]`,
}

func TestPartialEveryPrefixIsConsistent(t *testing.T) {
	for name, text := range partialReplies {
		t.Run(name, func(t *testing.T) {
			// Byte by byte, then in random pieces.
			cuts := make([]int, 0, len(text))
			for i := 1; i < len(text); i++ {
				cuts = append(cuts, i)
			}
			checkPrefixes(t, text, cuts)
			r := rand.New(rand.NewPCG(1, uint64(len(text))))
			for range 20 {
				var cuts []int
				for i := 0; i < len(text); i += 1 + r.IntN(7) {
					if i > 0 {
						cuts = append(cuts, i)
					}
				}
				checkPrefixes(t, text, cuts)
			}
		})
	}
}

func TestPartialSnapshots(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		want   any // nil with ok false means no value yet
		ok     bool
	}{
		{"nothing yet", "  ", nil, false},
		{"fence line unfinished", "```js", nil, false},
		{"object opened", `{`, map[string]any{}, true},
		{"incomplete key dropped", `{"sent`, map[string]any{}, true},
		{"key without value dropped", `{"sentiment"`, map[string]any{}, true},
		{"key and colon dropped", `{"sentiment": `, map[string]any{}, true},
		{"string value shown as prefix", `{"sentiment":"posi`, map[string]any{"sentiment": "posi"}, true},
		{"empty string shown", `{"a":"`, map[string]any{"a": ""}, true},
		{"incomplete literal dropped", `{"ok":tru`, map[string]any{}, true},
		{"complete literal shown", `{"ok":true`, map[string]any{"ok": true}, true},
		{"null shown", `[null`, []any{nil}, true},
		{"number at the end dropped", `{"score":12`, map[string]any{}, true},
		{"number with delimiter shown", `{"score":12,`, map[string]any{"score": json.Number("12")}, true},
		{"number before space shown", `[12 `, []any{json.Number("12")}, true},
		{"number in array dropped", `[1,2`, []any{json.Number("1")}, true},
		{"nested containers closed", `{"a":[{"b":["x`, map[string]any{"a": []any{map[string]any{"b": []any{"x"}}}}, true},
		{"escape held back", `["a\`, []any{"a"}, true},
		{"unicode escape held back", `["a\u00`, []any{"a"}, true},
		{"unicode escape decoded", `["a\u00e9`, []any{"aé"}, true},
		{"high surrogate waits for its pair", `["\ud83d`, []any{""}, true},
		{"pair half read", `["\ud83d\ude`, []any{""}, true},
		{"pair decoded", `["\ud83d\ude00`, []any{"😀"}, true},
		{"unpaired surrogate decided", `["\ud83dx`, []any{"\uFFFDx"}, true},
		{"cut UTF-8 held back", "[\"\xe2\x82", []any{""}, true},
		{"UTF-8 completed", "[\"\xe2\x82\xac", []any{"€"}, true},
		{"fenced", "```json\n{\"a\":\"b", map[string]any{"a": "b"}, true},
		{"root number waits", `12`, nil, false},
		{"root number done", "12\n", json.Number("12"), true},
		{"text after the value ignored", `{"a":1} thanks!`, map[string]any{"a": json.Number("1")}, true},
		{"duplicate key replaced", `{"a":"x","a":"y`, map[string]any{"a": "y"}, true},
		{"duplicate key removed while its number grows", `{"a":"x","a":1`, map[string]any{}, true},
		{"prose is an error", `Sure! {"a":1}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPartial()
			p.Feed(tt.prefix)
			got, ok := p.Snapshot()
			if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Snapshot after %q = %#v, %v; want %#v, %v", tt.prefix, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestPartialChanged(t *testing.T) {
	p := NewPartial()
	steps := []struct {
		delta   string
		changed bool
	}{
		{"```json\n", false},
		{"{", true},
		{`"score"`, false},
		{": 1", false},
		{"2", false},
		{",", true},
		{` "label": "`, true},
		{"pos", true},
		{`\`, false},
		{`u00e9`, true},
		{`"`, false},
		{"}", false},
		{"\n```", false},
	}
	for i, s := range steps {
		if got := p.Feed(s.delta); got != s.changed {
			t.Fatalf("step %d: Feed(%q) = %v, want %v", i, s.delta, got, s.changed)
		}
		if s.changed {
			p.Snapshot()
		}
	}
	if !p.Done() {
		t.Fatal("Done() = false after the closing brace")
	}
	got, _ := p.Snapshot()
	want := map[string]any{"score": json.Number("12"), "label": "posé"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("final snapshot %#v, want %#v", got, want)
	}
}

func TestPartialErrors(t *testing.T) {
	for _, text := range []string{
		`Sure! {"a":1}`,
		"```python\n{}",
		`{"a" 1}`,
		`{"a":1,}`,
		`[1,]`,
		`[1}`,
		`{"a":tx}`,
		`{"a":01}`,
		`{"a":1e400}`,
		"[\"a\x01\"]",
		`["\x"]`,
		`["\u12g4"]`,
		`{1:2}`,
	} {
		t.Run(text, func(t *testing.T) {
			p := NewPartial()
			p.Feed(text)
			if p.Err() == nil {
				t.Fatalf("Err() = nil for %q", text)
			}
			if _, err := ParseReply(text); err == nil {
				t.Fatalf("ParseReply(%q) succeeded where Partial failed", text)
			}
		})
	}
}

func TestPartialSharesNothingWithLaterInput(t *testing.T) {
	p := NewPartial()
	p.Feed(`{"a":"x`)
	first, _ := p.Snapshot()
	p.Feed(`yz","b":[1,`)
	if !reflect.DeepEqual(first, map[string]any{"a": "x"}) {
		t.Fatalf("an earlier snapshot changed to %#v", first)
	}
}

// TestPartialOverInstance follows docs/structured-output.md: the mock's
// instance of the issue's schema, streamed word by word (each word with the
// whitespace after it), yields these partial objects.
func TestPartialOverInstance(t *testing.T) {
	text, err := InstanceText([]byte(issueSchema))
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for start, i := 0, 0; i <= len(text); i++ {
		if i == len(text) || i > start && isJSONSpace(text[i-1]) && !isJSONSpace(text[i]) {
			words = append(words, text[start:i])
			start = i
		}
	}
	wantWords := []string{"{\n  ", `"score": `, "0,\n  ", `"sentiment": `, "\"positive\"\n", "}"}
	if !reflect.DeepEqual(words, wantWords) {
		t.Fatalf("instance words %q, want %q", words, wantWords)
	}
	var got []any
	p := NewPartial()
	for _, w := range words {
		if p.Feed(w) {
			v, _ := p.Snapshot()
			got = append(got, v)
		}
	}
	want := []any{
		map[string]any{},
		map[string]any{"score": json.Number("0")},
		map[string]any{"score": json.Number("0"), "sentiment": "positive"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("partial objects %#v\nwant %#v", got, want)
	}
}

func TestPartialMarks(t *testing.T) {
	p := NewPartial()
	steps := []struct {
		delta string
		marks int // after the delta
	}{
		{"{", 1},              // the object shows
		{`"title": "A lo`, 2}, // the string shows
		{"ng ti", 2},          // only the string grew
		{`tle"`, 3},           // the string completed
		{`, "n": 1`, 3},       // the number is not read yet
		{"2,", 5},             // the number shows complete
		{` "tags": ["a", `, 8},
		{`"b"]`, 11},
		{"}", 12},
	}
	for i, s := range steps {
		p.Feed(s.delta)
		if got := p.Marks(); got != s.marks {
			t.Fatalf("step %d: Marks() = %d after %q, want %d", i, got, s.delta, s.marks)
		}
	}
}

// duplicateKeys is an object of n keys followed by n repeats of its keys,
// first key first, each with a new value: the last value wins.
func duplicateKeys(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range 2 * n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":%d`, i%n, i)
	}
	b.WriteString("}")
	return b.String()
}

// TestPartialRepeatedKeys: a reply that repeats its keys (the last value
// wins, as ParseReply reads it) shows every key once with its latest value,
// below and above the size from which an object keeps an index.
func TestPartialRepeatedKeys(t *testing.T) {
	for _, n := range []int{3, indexFrom + 5, 200} {
		text := duplicateKeys(n)
		want, err := ParseReply(text)
		if err != nil {
			t.Fatal(err)
		}
		p := NewPartial()
		for i := 0; i < len(text); i += 7 {
			p.Feed(text[i:min(i+7, len(text))])
			p.Snapshot()
		}
		got, ok := p.Snapshot()
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("n=%d: snapshot %v, want %v", n, got, want)
		}
	}
}
