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

const strictSchema = `{"type":"object","additionalProperties":false,
	"properties":{
		"sentiment":{"type":"string","enum":["positive","negative"]},
		"score":{"type":"number","minimum":0,"maximum":1},
		"tags":{"type":"array","items":{"$ref":"#/$defs/tag"},"maxItems":5},
		"note":{"type":["string","null"]}
	},
	"required":["sentiment","score","tags","note"],
	"$defs":{"tag":{"type":"object","properties":{"name":{"type":"string","format":"email"}},"required":["name"],"additionalProperties":false}}}`

func TestOpenAIResponseFormat(t *testing.T) {
	got, err := OpenAIResponseFormat("", []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string","$comment":"x"}},"required":["a"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"type":"json_schema","json_schema":{"name":"response","schema":{"additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"},"strict":true}}`
	if string(b) != want {
		t.Fatalf("OpenAIResponseFormat =\n%s\nwant\n%s", b, want)
	}

	loose, _ := OpenAIResponseFormat("sentiment v2!", []byte(issueSchema))
	if loose.JSONSchema.Strict || loose.JSONSchema.Name != "sentiment_v2_" {
		t.Fatalf("issue schema: strict %v, name %q; want strict false (no additionalProperties false), name sentiment_v2_", loose.JSONSchema.Strict, loose.JSONSchema.Name)
	}
	if string(loose.JSONSchema.Schema) != canonicalJSON(t, issueSchema) {
		t.Fatalf("a schema sent with strict false must be sent as it is: %s", loose.JSONSchema.Schema)
	}
}

func TestOpenAIStrict(t *testing.T) {
	replace := func(old, new string) string {
		if !strings.Contains(strictSchema, old) {
			t.Fatalf("test bug: %q not in the schema", old)
		}
		return strings.Replace(strictSchema, old, new, 1)
	}
	nested := `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":` +
		strings.Repeat(`{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":`, 10) +
		`{"type":"string"}` + strings.Repeat(`}}`, 11)
	tests := []struct {
		name, schema string
		strict       bool
		reason       string
	}{
		{"fits", strictSchema, true, ""},
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
			ok, reason := OpenAIStrict([]byte(tt.schema))
			if ok != tt.strict || reason != tt.reason {
				t.Fatalf("OpenAIStrict = %v, %q; want %v, %q", ok, reason, tt.strict, tt.reason)
			}
			f, err := OpenAIResponseFormat("x", []byte(tt.schema))
			if err != nil || f.JSONSchema.Strict != tt.strict {
				t.Fatalf("OpenAIResponseFormat strict = %v, %v; want %v", f.JSONSchema.Strict, err, tt.strict)
			}
		})
	}
}

func TestAnthropicOutputFormat(t *testing.T) {
	in := `{"type":"object","title":"Review",
		"properties":{
			"sentiment":{"oneOf":[{"const":"positive"},{"const":"negative"}]},
			"score":{"type":"number","minimum":0,"maximum":1,"description":"How sure."},
			"email":{"type":"string","format":"email","minLength":3},
			"re":{"type":"string","format":"regex"},
			"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}},"minItems":1,"maxItems":3},
			"counts":{"type":"object","additionalProperties":{"type":"integer"}},
			"shape":{"enum":[{"x":1},"y"]}
		},
		"required":["sentiment","score"]}`
	want := `{"type":"object","additionalProperties":false,
		"properties":{
			"sentiment":{"anyOf":[{"const":"positive"},{"const":"negative"}]},
			"score":{"type":"number","description":"How sure.\nConstraints: {\"maximum\":1,\"minimum\":0}"},
			"email":{"type":"string","format":"email","description":"Constraints: {\"minLength\":3}"},
			"re":{"type":"string","description":"Constraints: {\"format\":\"regex\"}"},
			"tags":{"type":"array","minItems":1,"description":"Constraints: {\"maxItems\":3}",
				"items":{"type":"object","additionalProperties":false,"properties":{"k":{"type":"string"}}}},
			"counts":{"type":"object","additionalProperties":false,"description":"Constraints: {\"additionalProperties\":{\"type\":\"integer\"}}"},
			"shape":{"description":"Constraints: {\"enum\":[{\"x\":1},\"y\"]}"}
		},
		"required":["sentiment","score"]}`
	got, err := AnthropicOutputFormat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != "json_schema" || string(got.Schema) != canonicalJSON(t, want) {
		t.Fatalf("AnthropicOutputFormat =\n%s\nwant\n%s", got.Schema, canonicalJSON(t, want))
	}
	if _, err := NewCache(Config{}).Compile(got.Schema); err != nil {
		t.Fatalf("the rewritten schema is not a valid schema: %v", err)
	}
}

func TestGeminiResponseSchema(t *testing.T) {
	in := `{"type":"object","title":"Review",
		"$defs":{"score":{"type":"number","exclusiveMinimum":0,"maximum":1}},
		"properties":{
			"sentiment":{"const":"positive"},
			"flag":{"enum":[true,false]},
			"score":{"$ref":"#/$defs/score","description":"dropped: Gemini wants a $ref alone"},
			"extra":{"type":"object","additionalProperties":{"type":"string","maxLength":5}}
		},
		"required":["sentiment"]}`
	want := `{"type":"object","title":"Review",
		"$defs":{"score":{"type":"number","maximum":1,"description":"Constraints: {\"exclusiveMinimum\":0}"}},
		"properties":{
			"sentiment":{"enum":["positive"]},
			"flag":{"description":"Constraints: {\"enum\":[true,false]}"},
			"score":{"$ref":"#/$defs/score"},
			"extra":{"type":"object","additionalProperties":{"type":"string","description":"Constraints: {\"maxLength\":5}"}}
		},
		"required":["sentiment"]}`
	got, err := GeminiResponseSchema([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got.ResponseMIMEType != "application/json" || string(got.ResponseJSONSchema) != canonicalJSON(t, want) {
		t.Fatalf("GeminiResponseSchema =\n%s\nwant\n%s", got.ResponseJSONSchema, canonicalJSON(t, want))
	}
	b, _ := json.Marshal(got)
	if !strings.HasPrefix(string(b), `{"responseMimeType":"application/json","responseJsonSchema":{`) {
		t.Fatalf("wire form %s", b)
	}
}

func TestNoNativeForm(t *testing.T) {
	tests := []struct {
		name, schema string
		anthropic    bool // whether Anthropic takes it
		gemini       bool
	}{
		{"recursive", `{"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"}`, false, false},
		{"root recursion", `{"type":"object","properties":{"self":{"$ref":"#"}}}`, false, false},
		{"anchor reference", `{"$defs":{"n":{"$anchor":"num","type":"number"}},"properties":{"a":{"$ref":"#num"}}}`, false, false},
		{"relative reference", `{"$id":"https://x.test/a","properties":{"a":{"$ref":"b.json"}}}`, false, false},
		{"chain without cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, true, true},
		{"anchor only", `{"$defs":{"n":{"$anchor":"num","type":"number"}}}`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, aerr := AnthropicOutputFormat([]byte(tt.schema))
			if (aerr == nil) != tt.anthropic || aerr != nil && !errors.Is(aerr, ErrNoNativeForm) {
				t.Errorf("AnthropicOutputFormat: %v, want taken = %v", aerr, tt.anthropic)
			}
			_, gerr := GeminiResponseSchema([]byte(tt.schema))
			if (gerr == nil) != tt.gemini || gerr != nil && !errors.Is(gerr, ErrNoNativeForm) {
				t.Errorf("GeminiResponseSchema: %v, want taken = %v", gerr, tt.gemini)
			}
		})
	}
	var se *SchemaError
	if _, err := AnthropicOutputFormat([]byte(`{`)); !errors.As(err, &se) {
		t.Fatalf("not JSON: %v, want a *SchemaError", err)
	}
}

func TestInstruction(t *testing.T) {
	got := Instruction([]byte(issueSchema))
	if !strings.HasSuffix(got, issueSchema) || !strings.Contains(got, "only a JSON value") {
		t.Fatalf("Instruction = %q", got)
	}
}
