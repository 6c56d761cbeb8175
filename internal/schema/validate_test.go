package schema

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func mustCompile(t testing.TB, src string) *Schema {
	t.Helper()
	s, err := NewCache(Config{}).Compile([]byte(src))
	if err != nil {
		t.Fatalf("Compile(%s): %v", src, err)
	}
	return s
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name, schema, reply string
		want                []Violation
	}{
		{"issue example", issueSchema, `{"sentiment":"great"}`, []Violation{
			{"", "/required", `missing required property "score"`},
			{"/sentiment", "/properties/sentiment/enum", `got "great", want one of "positive", "negative"`},
		}},
		{"conforms", issueSchema, "```json\n{\"sentiment\":\"positive\",\"score\":0.5}\n```", nil},
		{"wrong type", issueSchema, `{"sentiment":"positive","score":"high"}`, []Violation{
			{"/score", "/properties/score/type", "got string, want number"},
		}},
		{"not JSON", issueSchema, `The sentiment is positive.`, []Violation{
			{"", "", "not valid JSON: invalid character 'T' looking for beginning of value"},
		}},
		{"every missing property", `{"required":["a","b"]}`, `{}`, []Violation{
			{"", "/required", `missing required property "a"`},
			{"", "/required", `missing required property "b"`},
		}},
		{"extra properties", `{"properties":{"a":true},"additionalProperties":false}`, `{"a":1,"x":2,"y":3}`, []Violation{
			{"", "/additionalProperties", `property "x" is not allowed`},
			{"", "/additionalProperties", `property "y" is not allowed`},
		}},
		{"through a ref", `{"$defs":{"n":{"type":"integer","minimum":1}},"properties":{"a":{"$ref":"#/$defs/n"}}}`, `{"a":0}`, []Violation{
			{"/a", "/properties/a/$ref/minimum", "got 0, want at least 1"},
		}},
		{"integer", `{"type":"integer"}`, `2.5`, []Violation{
			{"", "/type", "got number, want integer"},
		}},
		{"bounds and lengths", `{"type":"array","items":{"type":"string","minLength":3},"maxItems":1}`, `["ab","abcd"]`, []Violation{
			{"", "/maxItems", "got 2 items, want at most 1"},
			{"/0", "/items/minLength", "got 2 characters, want at least 3"},
		}},
		{"exact decimals", `{"multipleOf":0.01,"exclusiveMaximum":1}`, `1.005`, []Violation{
			{"", "/exclusiveMaximum", "got 1.005, want less than 1"},
			{"", "/multipleOf", "got 1.005, want a multiple of 0.01"},
		}},
		{"decimal multiple is exact", `{"multipleOf":0.01}`, `0.07`, nil},
		{"const and pattern", `{"properties":{"v":{"const":"v1"},"id":{"pattern":"^[a-z]+$"}}}`, `{"v":"v2","id":"A1"}`, []Violation{
			{"/id", "/properties/id/pattern", `got "A1", want a string matching the pattern "^[a-z]+$"`},
			{"/v", "/properties/v/const", `got "v2", want "v1"`},
		}},
		{"anyOf branches", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `true`, []Violation{
			{"", "/anyOf/0/type", "got boolean, want string"},
			{"", "/anyOf/1/type", "got boolean, want integer"},
		}},
		{"oneOf matching twice", `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `3`, []Violation{
			{"", "/oneOf", "matches oneOf branches 0 and 1, want exactly one"},
		}},
		{"unique items", `{"uniqueItems":true}`, `[1,2,1]`, []Violation{
			{"", "/uniqueItems", "items 0 and 2 are equal, want unique items"},
		}},
		{"long values are shortened", `{"enum":["a"]}`, `"` + strings.Repeat("é", 80) + `"`, []Violation{
			{"", "/enum", `got "` + strings.Repeat("é", 31) + `…, want "a"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.schema)
			v, got := s.Check(tt.reply)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Check(%s)\n got %q\nwant %q", tt.reply, got, tt.want)
			}
			if (v != nil) != (len(tt.want) == 0) {
				t.Fatalf("Check(%s) value = %#v with %d violations", tt.reply, v, len(got))
			}
		})
	}
}

func TestValidateBoundsViolations(t *testing.T) {
	s := mustCompile(t, `{"type":"array","items":{"type":"integer"}}`)
	items := make([]string, 200)
	for i := range items {
		items[i] = `"x"`
	}
	_, vs := s.Check("[" + strings.Join(items, ",") + "]")
	if len(vs) != MaxViolations {
		t.Fatalf("got %d violations, want MaxViolations (%d)", len(vs), MaxViolations)
	}
}

func TestReaskMessage(t *testing.T) {
	got := ReaskMessage([]Violation{
		{"", "/required", `missing required property "score"`},
		{"/score", "/properties/score/type", "got string, want number"},
		{"/it's\nodd", "/x", "got 1, want 2"},
	})
	for _, line := range []string{
		`at '': missing required property "score"`,
		`at '/score': got string, want number`,
		`at '/it\'s\nodd': got 1, want 2`,
		"only the corrected JSON",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("re-ask message lacks %q:\n%s", line, got)
		}
	}
	if n := strings.Count(got, "\nat '"); n != 3 {
		t.Errorf("re-ask message has %d violation lines, want 3:\n%s", n, got)
	}
}

func TestValidateConcurrently(t *testing.T) {
	s := mustCompile(t, issueSchema)
	done := make(chan error)
	for i := range 8 {
		go func() {
			var err error
			for j := range 100 {
				_, vs := s.Check(fmt.Sprintf(`{"sentiment":"positive","score":%d}`, i*j))
				if len(vs) > 0 {
					err = fmt.Errorf("%v", vs)
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
