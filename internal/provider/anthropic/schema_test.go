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
	pt.CheckLowered(t, dialect, in, want)
}

func TestNoNativeForm(t *testing.T) {
	pt.CheckNativeForms(t, dialect, []pt.NativeForm{
		{Name: "recursive", Schema: `{"type":"object","properties":{"self":{"$ref":"#"}}}`},
		{Name: "an anchor, even unused", Schema: `{"$defs":{"n":{"$anchor":"num","type":"number"}}}`},
		{Name: "an $id below the root", Schema: `{"$defs":{"n":{"$id":"https://x.test/n","type":"number"}}}`},
		{Name: "a chain of references without a cycle", Schema: `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, Taken: true},
	})
	var se *schema.SchemaError
	if _, err := schema.Lower([]byte(`{`), dialect); !errors.As(err, &se) {
		t.Fatalf("not JSON: %v, want a *SchemaError", err)
	}
}
