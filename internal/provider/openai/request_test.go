package openai_test

import (
	"flag"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/openai"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestRequestMapping(t *testing.T) {
	tests := []struct {
		name   string
		golden string
		req    *provider.Request
	}{
		{"every field", "request_rich.golden.json", pt.RichRequest("gpt-4o-mini")},
		{"plain", "request_plain.golden.json", func() *provider.Request {
			r := pt.NewRequest("llama3.1:8b")
			r.Tools = nil
			return r
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), tc.req)
			pt.GoldenJSON(t, tc.golden, got.Body, *update)
			if got.URI != "/v1/chat/completions" {
				t.Errorf("URI = %s, want /v1/chat/completions", got.URI)
			}
			if a := got.Header.Get("Authorization"); a != "Bearer "+testKey {
				t.Errorf("Authorization = %q, want the bearer key", a)
			}
		})
	}
}

// TestNoKeyForLocalServers: Ollama, vLLM and llama.cpp need no key, so a
// provider without api_key_env sends no Authorization header.
func TestNoKeyForLocalServers(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	p, err := openai.New(provider.Config{Name: "ollama", Kind: openai.Kind, BaseURL: u.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	got := pt.CaptureRequest(t, u, p, pt.NewRequest("llama3.1:8b"))
	if a, ok := got.Header["Authorization"]; ok {
		t.Errorf("Authorization = %q sent without a key", a)
	}
}

// TestListModelsReportsConfiguredModels: the models a provider's
// configuration lists are what ListModels reports and all requests may use.
func TestListModelsReportsConfiguredModels(t *testing.T) {
	set, err := provider.NewSet([]provider.Config{{Name: "ollama", Kind: openai.Kind, BaseURL: "http://127.0.0.1:11434/v1", Models: []string{"llama3.1:8b", "qwen2.5:7b"}}})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := set.Get("ollama")
	if len(e.Models) != 2 || e.Models[0] != "llama3.1:8b" || e.Models[1] != "qwen2.5:7b" {
		t.Errorf("models = %v, want the configured ones", e.Models)
	}
	if _, _, err := set.Resolve("ollama/mistral"); err == nil {
		t.Error("a model outside the configured list was allowed")
	}
}
