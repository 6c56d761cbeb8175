package schema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// canonicalJSON re-encodes JSON text with sorted keys, for comparisons.
func canonicalJSON(t *testing.T, s string) string {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("bad JSON in test: %v\n%s", err, s)
	}
	b, _ := marshalJSON(v)
	return string(b)
}

// testStrict is a strict subset for the tests, with small limits.
var testStrict = &StrictSubset{
	Keywords: []string{"type", "properties", "required", "additionalProperties", "items", "enum",
		"$ref", "$defs", "minimum", "maximum", "maxItems", "format"},
	Formats:       []string{"email"},
	MaxProperties: 10,
	MaxNesting:    3,
	MaxEnumValues: 4,
}

// rewriting is a dialect that uses every rewrite Lower knows.
var rewriting = &Dialect{
	Name: "Test",
	Keywords: []string{"type", "properties", "required", "additionalProperties", "items", "enum", "const",
		"$ref", "$defs", "definitions", "anyOf", "allOf", "oneOf", "description", "format", "minimum", "maximum", "maxItems", "$dynamicRef"},
	Formats:      []string{"email"},
	Keep:         func(k string, v any) bool { return k != "maximum" || v != json.Number("100") },
	Unsupported:  []string{"$dynamicRef"},
	CloseObjects: true,
	OneOfAsAnyOf: true,
	ConstAsEnum:  true,
	RefAlone:     true,
}

func TestLowerAsItIs(t *testing.T) {
	in := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$comment":"x",
		"properties":{"a":{"type":"string","$comment":"y","minLength":2},"self":{"$ref":"#"}},"patternProperties":{"^x":{"$comment":"z"}}}`
	got, err := Lower([]byte(in), &Dialect{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"a":{"type":"string","minLength":2},"self":{"$ref":"#"}},"patternProperties":{"^x":{}}}`
	if string(got.Schema) != canonicalJSON(t, want) || got.Strict || got.NotStrict != "" {
		t.Fatalf("Lower = %s (strict %v, %q), want %s, not strict, no reason: the zero Dialect has no strict subset",
			got.Schema, got.Strict, got.NotStrict, canonicalJSON(t, want))
	}
}

func TestLowerStrictSubset(t *testing.T) {
	tests := []struct {
		name, schema string
		strict       bool
		reason       string
	}{
		{"an optional property", `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}`, false, `property "a" at '' is not required`},
		{"objects nest too deep", `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"object","additionalProperties":false}}}}}}}`, false, "objects nest deeper than 3 levels"},
		{"an unknown keyword", `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","pattern":"x"}},"required":["a"]}`, false, `keyword "pattern" at '/properties/a'`},
		{"too many enum values", `{"type":"object","additionalProperties":false,"properties":{"a":{"enum":[1,2,3,4,5]}},"required":["a"]}`, false, "5 enum values, more than 4"},
		{"a fit", `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","format":"email"}},"required":["a"]}`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Lower([]byte(tt.schema), &Dialect{Strict: testStrict})
			if err != nil {
				t.Fatal(err)
			}
			if got.Strict != tt.strict || !strings.Contains(got.NotStrict, tt.reason) {
				t.Errorf("Lower = strict %v, %q; want %v, %q", got.Strict, got.NotStrict, tt.strict, tt.reason)
			}
		})
	}
}

func TestLowerRewrites(t *testing.T) {
	in := `{"type":"object","title":"Review","$defs":{"n":{"type":"number"}},
		"properties":{
			"choice":{"oneOf":[{"const":"a"},{"const":true}]},
			"name":{"type":"string","minLength":3,"description":"Who."},
			"ref":{"$ref":"#/$defs/n","description":"dropped beside a $ref"},
			"flags":{"enum":[true,false]},
			"tuple":{"type":"array","items":[{"type":"string"}]},
			"site":{"type":"string","format":"uri"},
			"score":{"type":"number","minimum":0,"maximum":100},
			"extra":{"type":"object","additionalProperties":{"type":"string"}}
		}}`
	want := `{"type":"object","additionalProperties":false,"$defs":{"n":{"type":"number"}},
		"properties":{
			"choice":{"anyOf":[{"enum":["a"]},{"description":"Constraints: {\"const\":true}"}]},
			"name":{"type":"string","description":"Who.\nConstraints: {\"minLength\":3}"},
			"ref":{"$ref":"#/$defs/n"},
			"flags":{"description":"Constraints: {\"enum\":[true,false]}"},
			"tuple":{"type":"array","description":"Constraints: {\"items\":[{\"type\":\"string\"}]}"},
			"site":{"type":"string","description":"Constraints: {\"format\":\"uri\"}"},
			"score":{"type":"number","minimum":0,"description":"Constraints: {\"maximum\":100}"},
			"extra":{"type":"object","additionalProperties":false,"description":"Constraints: {\"additionalProperties\":{\"type\":\"string\"}}"}
		}}`
	got, err := Lower([]byte(in), rewriting)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Schema) != canonicalJSON(t, want) {
		t.Fatalf("Lower =\n%s\nwant\n%s", got.Schema, canonicalJSON(t, want))
	}
	if _, err := NewCache(Config{}).Compile(got.Schema); err != nil {
		t.Fatalf("the rewritten schema is not a valid schema: %v", err)
	}
}

func TestLowerRefuses(t *testing.T) {
	tests := []struct {
		name, schema string
		taken        bool
	}{
		{"recursive", `{"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"}`, false},
		{"root recursion", `{"type":"object","properties":{"self":{"$ref":"#"}}}`, false},
		{"anchor reference", `{"properties":{"a":{"$ref":"#num"}}}`, false},
		{"relative reference", `{"properties":{"a":{"$ref":"b.json"}}}`, false},
		{"an unsupported keyword", `{"properties":{"a":{"$dynamicRef":"#x"}}}`, false},
		{"a reference to what RefAlone drops", `{"$ref":"#/definitions/a","definitions":{"a":{"type":"string"}}}`, false},
		{"chain without cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Lower([]byte(tt.schema), rewriting)
			if (err == nil) != tt.taken || err != nil && !errors.Is(err, ErrNoNativeForm) {
				t.Errorf("Lower: %v, want taken = %v", err, tt.taken)
			}
			if _, err := Lower([]byte(tt.schema), &Dialect{}); err != nil {
				t.Errorf("Lower with the zero Dialect: %v; it takes every schema", err)
			}
		})
	}
	var se *SchemaError
	if _, err := Lower([]byte(`{`), &Dialect{}); !errors.As(err, &se) {
		t.Fatalf("not JSON: %v, want a *SchemaError", err)
	}
}

func TestInstruction(t *testing.T) {
	got := Instruction([]byte(issueSchema))
	if !strings.HasSuffix(got, issueSchema) || !strings.Contains(got, "only a JSON value") {
		t.Fatalf("Instruction = %q", got)
	}
}
