package openai

import (
	"encoding/json"
	"strings"
	"testing"

	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/schema"
)

// sentimentSchema is the structured-output issue's example: an object that
// is left open, so it does not fit the strict subset.
const sentimentSchema = `{"type":"object","properties":{"sentiment":{"type":"string","enum":["positive","negative"]},"score":{"type":"number"}},"required":["sentiment","score"]}`

const strictSubsetSchema = `{"type":"object","additionalProperties":false,
	"properties":{
		"sentiment":{"type":"string","enum":["positive","negative"]},
		"score":{"type":"number","minimum":0,"maximum":1},
		"tags":{"type":"array","items":{"$ref":"#/$defs/tag"},"maxItems":5},
		"note":{"type":["string","null"]}
	},
	"required":["sentiment","score","tags","note"],
	"$defs":{"tag":{"type":"object","properties":{"name":{"type":"string","format":"email"}},"required":["name"],"additionalProperties":false}}}`

func TestResponseFormat(t *testing.T) {
	got, err := newResponseFormat("", []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string","$comment":"x"}},"required":["a"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"type":"json_schema","json_schema":{"name":"response","schema":{"additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"},"strict":true}}`
	if string(b) != want {
		t.Fatalf("newResponseFormat =\n%s\nwant\n%s", b, want)
	}

	loose, _ := newResponseFormat("sentiment v2!", []byte(sentimentSchema))
	if loose.JSONSchema.Strict || loose.JSONSchema.Name != "sentiment_v2_" {
		t.Fatalf("issue schema: strict %v, name %q; want strict false (no additionalProperties false), name sentiment_v2_", loose.JSONSchema.Strict, loose.JSONSchema.Name)
	}
	if !pt.SameJSON(string(loose.JSONSchema.Schema), sentimentSchema) {
		t.Fatalf("a schema sent with strict false must be sent as it is: %s", loose.JSONSchema.Schema)
	}
}

func TestStrictSubset(t *testing.T) {
	replace := func(old, new string) string {
		if !strings.Contains(strictSubsetSchema, old) {
			t.Fatalf("test bug: %q not in the schema", old)
		}
		return strings.Replace(strictSubsetSchema, old, new, 1)
	}
	nested := `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":` +
		strings.Repeat(`{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":`, 10) +
		`{"type":"string"}` + strings.Repeat(`}}`, 11)
	tests := []struct {
		name, schema string
		strict       bool
		reason       string
	}{
		{"fits", strictSubsetSchema, true, ""},
		{"optional property", replace(`"required":["sentiment","score","tags","note"]`, `"required":["sentiment","score","tags"]`), false, `property "note" at '' is not required`},
		{"object left open", replace(`"type":"object","additionalProperties":false,`, `"type":"object",`), false, "the object at '' does not set additionalProperties false"},
		{"open object in $defs", replace(`"required":["name"],"additionalProperties":false`, `"required":["name"]`), false, "the object at '/$defs/tag' does not set additionalProperties false"},
		{"allOf", replace(`"note":{"type":["string","null"]}`, `"note":{"allOf":[{"type":"string"}]}`), false, `keyword "allOf" at '/properties/note'`},
		{"oneOf", replace(`"note":{"type":["string","null"]}`, `"note":{"oneOf":[{"type":"string"}]}`), false, `keyword "oneOf" at '/properties/note'`},
		{"minLength", replace(`"note":{"type":["string","null"]}`, `"note":{"type":"string","minLength":2}`), false, `keyword "minLength" at '/properties/note'`},
		{"unsupported format", replace(`"format":"email"`, `"format":"uri"`), false, `format "uri" at '/$defs/tag/properties/name'`},
		{"root not an object", `{"type":"array","items":{"type":"string"}}`, false, `the root is not a schema with type "object"`},
		{"root anyOf", `{"type":"object","anyOf":[{"type":"object","additionalProperties":false,"properties":{}}],"additionalProperties":false}`, false, "the root has anyOf"},
		{"too deep", nested, false, "objects nest deeper than 10 levels at '/properties/a/properties/a/properties/a/properties/a/properties/a/properties/a/properties/a/properties/a/properties/a/properties/a'"},
		{"boolean subschema", replace(`"note":{"type":["string","null"]}`, `"note":true`), false, "the boolean schema at '/properties/note'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := schema.Lower([]byte(tt.schema), dialect)
			if err != nil || l.Strict != tt.strict || l.NotStrict != tt.reason {
				t.Fatalf("Lower = strict %v, %q, %v; want %v, %q", l.Strict, l.NotStrict, err, tt.strict, tt.reason)
			}
			f, err := newResponseFormat("x", []byte(tt.schema))
			if err != nil || f.JSONSchema.Strict != tt.strict {
				t.Fatalf("newResponseFormat strict = %v, %v; want %v", f.JSONSchema.Strict, err, tt.strict)
			}
		})
	}
}
