package schema

import (
	"encoding/json"
	"reflect"
	"testing"
)

// issueSchema is the example of the structured-output issue.
const issueSchema = `{"type":"object","properties":{"sentiment":{"type":"string","enum":["positive","negative"]},"score":{"type":"number"}},"required":["sentiment","score"]}`

// nested is an object schema n levels deep, each level requiring the next:
// a value of that depth is the only kind that conforms.
func nested(n int) string {
	s := `{"type":"string"}`
	for range n {
		s = `{"type":"object","properties":{"a":` + s + `},"required":["a"]}`
	}
	return s
}

func TestInstanceConforms(t *testing.T) {
	schemas := map[string]string{
		"issue example":            issueSchema,
		"empty schema":             `{}`,
		"every scalar type":        `{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"number"},"i":{"type":"integer"},"b":{"type":"boolean"},"z":{"type":"null"}},"required":["s","n","i","b","z"],"additionalProperties":false}`,
		"const and enum":           `{"type":"object","properties":{"c":{"const":{"x":[1]}},"e":{"enum":[3,"a"]}},"required":["c","e"]}`,
		"number bounds":            `{"type":"number","minimum":5.5,"maximum":10}`,
		"exclusive bounds":         `{"type":"number","exclusiveMinimum":1,"exclusiveMaximum":2}`,
		"negative range":           `{"type":"number","maximum":-3}`,
		"exclusive max below 0":    `{"type":"integer","exclusiveMaximum":-3}`,
		"integer above":            `{"type":"integer","exclusiveMinimum":7.5}`,
		"multipleOf decimal":       `{"type":"number","minimum":0.25,"multipleOf":0.1}`,
		"integer multipleOf":       `{"type":"integer","minimum":3,"multipleOf":2.5}`,
		"zero excluded":            `{"type":"integer","exclusiveMinimum":0,"multipleOf":7}`,
		"string lengths":           `{"type":"string","minLength":12,"maxLength":14}`,
		"short string":             `{"type":"string","maxLength":2}`,
		"formats":                  `{"type":"array","prefixItems":[{"format":"date-time"},{"format":"email"},{"format":"uuid"},{"format":"ipv4"},{"format":"uri"},{"format":"date"}],"items":false,"minItems":6}`,
		"pattern":                  `{"type":"string","pattern":"^[A-Z]{3}-[0-9]{2,4}$"}`,
		"pattern and length":       `{"type":"string","pattern":"^ab","minLength":5}`,
		"alternation pattern":      `{"type":"string","pattern":"^(cat|dog)s?$"}`,
		"array min items":          `{"type":"array","items":{"type":"integer","minimum":1},"minItems":3}`,
		"unique enum items":        `{"type":"array","items":{"enum":["a","b","c"]},"minItems":3,"uniqueItems":true}`,
		"unique numbers":           `{"type":"array","items":{"type":"number","maximum":100},"minItems":4,"uniqueItems":true}`,
		"unique strings":           `{"type":"array","items":{"type":"string"},"minItems":2,"uniqueItems":true}`,
		"unique dates":             `{"type":"array","items":{"type":"string","format":"date"},"minItems":3,"uniqueItems":true}`,
		"contains":                 `{"type":"array","items":{"type":"integer"},"contains":{"minimum":5},"minContains":2}`,
		"ref and defs":             `{"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}},"type":"object","properties":{"a":{"$ref":"#/$defs/point"},"b":{"type":"array","items":{"$ref":"#/$defs/point"},"minItems":1}},"required":["a","b"]}`,
		"anchor ref":               `{"$defs":{"n":{"$anchor":"num","type":"integer","minimum":4}},"$ref":"#num"}`,
		"recursive tree":           `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name","children"]}},"$ref":"#/$defs/node"}`,
		"recursive nullable":       `{"$defs":{"list":{"type":"object","properties":{"v":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/$defs/list"},{"type":"null"}]}},"required":["v","next"]}},"$ref":"#/$defs/list"}`,
		"recursive via type":       `{"type":["object","null"],"properties":{"next":{"$ref":"#"}},"required":["next"]}`,
		"anyOf first branch":       `{"anyOf":[{"type":"string","minLength":3},{"type":"number"}]}`,
		"oneOf":                    `{"oneOf":[{"type":"string"},{"type":"integer"}]}`,
		"allOf merged":             `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer","minimum":2}},"required":["b"]},{"properties":{"a":{"minLength":4}}}]}`,
		"type array":               `{"type":["null","integer"],"minimum":9}`,
		"min properties":           `{"type":"object","additionalProperties":{"type":"boolean"},"minProperties":2}`,
		"max properties":           `{"type":"object","properties":{"a":{},"b":{},"c":{}},"maxProperties":1}`,
		"pattern properties":       `{"type":"object","patternProperties":{"^key":{"type":"string"}},"additionalProperties":false,"minProperties":1}`,
		"dependent required":       `{"type":"object","properties":{"card":{"type":"string"},"cvv":{"type":"string"}},"required":["card"],"dependentRequired":{"card":["cvv"]}}`,
		"draft 4 exclusive bounds": `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","minimum":1,"exclusiveMinimum":true},"i":{"type":"integer","minimum":-4,"maximum":0,"exclusiveMaximum":true}},"required":["n","i"]}`,
		"nested 40 deep":           nested(40),
		"draft 7 tuple":            `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false,"minItems":2}`,
		"false property":           `{"type":"object","properties":{"gone":false,"here":{"type":"string"}}}`,
		"inferred types":           `{"properties":{"a":{"minLength":2},"b":{"maximum":-1},"c":{"minItems":1}},"required":["a","b","c"]}`,
	}
	cache := NewCache(Config{})
	for name, src := range schemas {
		t.Run(name, func(t *testing.T) {
			s, err := cache.Compile([]byte(src))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			text, err := InstanceText([]byte(src))
			if err != nil {
				t.Fatalf("InstanceText: %v", err)
			}
			if _, vs := s.Check(text); len(vs) > 0 {
				t.Fatalf("instance %s does not conform: %v", text, vs)
			}
			again, _ := InstanceText([]byte(src))
			if again != text {
				t.Fatalf("not deterministic: %s, then %s", text, again)
			}
		})
	}
}

func TestInstanceValues(t *testing.T) {
	tests := []struct {
		name, schema string
		want         any
	}{
		{"issue example", issueSchema, map[string]any{"sentiment": "positive", "score": json.Number("0")}},
		{"enum first", `{"enum":["b","a"]}`, "b"},
		{"minimum", `{"type":"integer","minimum":3}`, json.Number("3")},
		{"exclusive minimum with multipleOf", `{"type":"number","exclusiveMinimum":0.5,"multipleOf":0.25}`, json.Number("0.75")},
		{"between exclusive bounds", `{"type":"number","exclusiveMinimum":1,"exclusiveMaximum":2}`, json.Number("1.5")},
		{"minLength padding", `{"type":"string","minLength":6}`, "textxx"},
		{"pattern sample", `{"type":"string","pattern":"^[A-Z]{2}[0-9]+$"}`, "AA0"},
		{"optional properties near the root", `{"type":"object","properties":{"a":{"type":"boolean"}}}`, map[string]any{"a": true}},
		{"not JSON", `{`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Instance([]byte(tt.schema))
			if tt.want == nil {
				if err == nil {
					t.Fatalf("Instance(%s) = %#v, want an error", tt.schema, got)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Instance(%s) = %#v, %v; want %#v", tt.schema, got, err, tt.want)
			}
		})
	}
}

func jsonNumber(s string) json.Number { return json.Number(s) }

func TestInstanceStaysSmall(t *testing.T) {
	nested := `{"type":"string","minLength":1000}`
	for range 6 {
		nested = `{"type":"array","minItems":1000,"items":` + nested + `}`
	}
	text, err := InstanceText([]byte(nested))
	if err != nil {
		t.Fatal(err)
	}
	if len(text) > 1<<20 {
		t.Fatalf("instance of %d bytes for a nested minItems schema; want it bounded", len(text))
	}
}

// TestInstanceOfASchemaThatNeverBottomsOut: anyOf and allOf that lead back
// to themselves on the same value end at the instance budget instead of
// recursing until the stack overflows (which kills the process: the mock
// provider answers any caller's schema with an instance).
func TestInstanceOfASchemaThatNeverBottomsOut(t *testing.T) {
	for _, schema := range []string{
		`{"$defs":{"d":{"anyOf":[{"$ref":"#/$defs/d"}]}},"$ref":"#/$defs/d"}`,
		`{"$defs":{"d":{"oneOf":[{"allOf":[{"$ref":"#/$defs/e"}]}]},"e":{"anyOf":[{"$ref":"#/$defs/d"}]}},"$ref":"#/$defs/d"}`,
	} {
		if _, err := InstanceText([]byte(schema)); err != nil {
			t.Errorf("InstanceText(%s): %v", schema, err)
		}
	}
}
