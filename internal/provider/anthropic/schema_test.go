package anthropic

import (
	"errors"
	"testing"

	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/schema"
)

func TestDialect(t *testing.T) {
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
	got, err := schema.Lower([]byte(in), dialect)
	if err != nil {
		t.Fatal(err)
	}
	if !pt.SameJSON(string(got.Schema), want) {
		t.Fatalf("Lower =\n%s\nwant\n%s", got.Schema, want)
	}
	if _, err := schema.NewCache(schema.Config{}).Compile(got.Schema); err != nil {
		t.Fatalf("the rewritten schema is not a valid schema: %v", err)
	}
}

func TestNoNativeForm(t *testing.T) {
	tests := []struct {
		name, schema string
		taken        bool
	}{
		{"recursive", `{"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"}`, false},
		{"root recursion", `{"type":"object","properties":{"self":{"$ref":"#"}}}`, false},
		{"anchor reference", `{"$defs":{"n":{"$anchor":"num","type":"number"}},"properties":{"a":{"$ref":"#num"}}}`, false},
		{"relative reference", `{"$id":"https://x.test/a","properties":{"a":{"$ref":"b.json"}}}`, false},
		{"chain without cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, true},
		{"anchor only", `{"$defs":{"n":{"$anchor":"num","type":"number"}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := schema.Lower([]byte(tt.schema), dialect)
			if (err == nil) != tt.taken || err != nil && !errors.Is(err, schema.ErrNoNativeForm) {
				t.Errorf("Lower: %v, want taken = %v", err, tt.taken)
			}
		})
	}
	var se *schema.SchemaError
	if _, err := schema.Lower([]byte(`{`), dialect); !errors.As(err, &se) {
		t.Fatalf("not JSON: %v, want a *SchemaError", err)
	}
}
