package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
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
	pt.CheckLowered(t, dialect, in, want)
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
	pt.CheckNativeForms(t, dialect, []pt.NativeForm{
		{Name: "recursive", Schema: `{"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"}`},
		{Name: "an anchor", Schema: `{"$defs":{"n":{"$anchor":"num","type":"number"}}}`, Taken: true},
		{Name: "a root $ref into draft-7 definitions", Schema: `{"$ref":"#/definitions/a","definitions":{"a":{"type":"string"}}}`},
	})
}
