package gemini_test

import (
	"errors"
	"flag"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/gemini"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestRequestMapping(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1beta"), pt.RichRequest("gemini-2.5-flash"))
	pt.GoldenJSON(t, "request_rich.golden.json", got.Body, *update)
	if want := "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"; got.URI != want {
		t.Errorf("URI = %s, want %s", got.URI, want)
	}
	if k := got.Header.Get("X-Goog-Api-Key"); k != testKey {
		t.Errorf("x-goog-api-key = %q, want the key", k)
	}
}

func TestModelNames(t *testing.T) {
	for model, want := range map[string]string{
		"gemini-2.5-flash":        "/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"models/gemini-2.5-flash": "/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"tunedModels/my-model-7":  "/tunedModels/my-model-7:streamGenerateContent?alt=sse",
	} {
		u := pt.Replay(t, fixtures[pt.Text].Reply(t))
		got := pt.CaptureRequest(t, u, newProvider(t, u.URL), pt.NewRequest(model))
		if got.URI != want {
			t.Errorf("model %q: URI %s, want %s", model, got.URI, want)
		}
	}
}

func TestKeyIsRequired(t *testing.T) {
	if _, err := gemini.New(provider.Config{Name: "gemini", Kind: gemini.Kind}); err == nil {
		t.Error("New without api_key_env succeeded, want an error")
	}
}

func TestToolArgumentsMustBeAnObject(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	req := pt.RichRequest("gemini-2.5-flash")
	req.Messages[3].ToolCalls[0].Arguments = `{"city":`
	_, err := newProvider(t, u.URL).Stream(t.Context(), req)
	var fe *provider.FieldError
	if !errors.As(err, &fe) || fe.Field != "messages[3].tool_calls[0].arguments" {
		t.Errorf("error = %v, want a field error on messages[3].tool_calls[0].arguments", err)
	}
}
