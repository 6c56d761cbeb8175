package gemini

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/schema"
)

func TestDialect(t *testing.T) {
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
	got, err := schema.Lower([]byte(in), dialect)
	if err != nil {
		t.Fatal(err)
	}
	if !pt.SameJSON(string(got.Schema), want) {
		t.Fatalf("Lower =\n%s\nwant\n%s", got.Schema, want)
	}
	req := &provider.Request{Model: "gemini-2.5-flash", Messages: []provider.Message{{Role: provider.RoleUser, Content: "rate it"}},
		ResponseFormat: &provider.ResponseFormat{Name: "review", Schema: json.RawMessage(in)}}
	r, err := newRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r.GenerationConfig)
	if !strings.HasPrefix(string(b), `{"responseMimeType":"application/json","responseJsonSchema":{`) {
		t.Fatalf("wire form %s", b)
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
		{"anchor only", `{"$defs":{"n":{"$anchor":"num","type":"number"}}}`, true},
		{"a root $ref into draft-7 definitions", `{"$ref":"#/definitions/a","definitions":{"a":{"type":"string"}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := schema.Lower([]byte(tt.schema), dialect)
			if (err == nil) != tt.taken || err != nil && !errors.Is(err, schema.ErrNoNativeForm) {
				t.Errorf("Lower: %v, want taken = %v", err, tt.taken)
			}
		})
	}
}
