package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/servertools"
)

func TestRedactedMasksWhatLooksSecret(t *testing.T) {
	const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	cfg := Default()
	cfg.Auth.Keys = []APIKey{{Name: "k", SHA256: "sha256: " + strings.ToUpper(hash)}}
	cfg.Providers = []provider.Config{{
		Name: "p", Kind: "openai", APIKeyEnv: "OPENAI_API_KEY",
		BaseURL: "https://user:hunter2@llm.example/v1?key=AIzaSyA1b2C3d4&alt=sse",
		Headers: map[string]string{
			"Authorization":  "Bearer sk-live-1",
			"X-Api-Key":      "abc",
			"X-Custom":       "sk-proj-abcdefghijklmnop1234",
			"anthropic-beta": "tools-2024-04-04",
			"OpenAI-Project": "research",
		},
	}}
	r := cfg.Redacted()
	p := r.Providers[0]
	for h, want := range map[string]string{
		"Authorization":  Masked,
		"X-Api-Key":      Masked,
		"X-Custom":       Masked, // a key by its look, whatever the header's name
		"anthropic-beta": "tools-2024-04-04",
		"OpenAI-Project": "research",
	} {
		if p.Headers[h] != want {
			t.Errorf("header %s = %q, want %q", h, p.Headers[h], want)
		}
	}
	if strings.Contains(p.BaseURL, "hunter2") || strings.Contains(p.BaseURL, "AIza") || !strings.Contains(p.BaseURL, "alt=sse") {
		t.Errorf("base_url %q: want the password and the key masked, the rest kept", p.BaseURL)
	}
	if p.APIKeyEnv != "OPENAI_API_KEY" {
		t.Errorf("api_key_env %q: the variable's name is not a secret", p.APIKeyEnv)
	}
	if r.Auth.Keys[0].SHA256 != hash {
		t.Errorf("sha256 %q, want the normalised hash %s", r.Auth.Keys[0].SHA256, hash)
	}
	if cfg.Providers[0].Headers["Authorization"] != "Bearer sk-live-1" || !strings.Contains(cfg.Providers[0].BaseURL, "hunter2") {
		t.Error("Redacted changed the original")
	}
}

// TestRedactedMasksMCPServerURLs: an MCP server's url is shown without a
// token its query carries; its headers_env names variables, not values.
func TestRedactedMasksMCPServerURLs(t *testing.T) {
	cfg := Default()
	cfg.Tools.MCPServers = []servertools.ServerConfig{{Name: "s", URL: "https://mcp.example/mcp?token=tok-1234567890abcdefghij&v=2", HeadersEnv: map[string]string{"Authorization": "MCP_AUTH"}}}
	r := cfg.Redacted()
	if u := r.Tools.MCPServers[0].URL; strings.Contains(u, "tok-123") || !strings.Contains(u, "v=2") {
		t.Errorf("url %q: want the token masked, the rest kept", u)
	}
	if r.Tools.MCPServers[0].HeadersEnv["Authorization"] != "MCP_AUTH" || !strings.Contains(cfg.Tools.MCPServers[0].URL, "tok-123") {
		t.Error("Redacted changed the variable's name or the original")
	}
}

// TestYAMLReadsBack: the YAML that check-config prints is a config file
// that loads as the same configuration.
func TestYAMLReadsBack(t *testing.T) {
	cfg, err := Parse([]byte(keysYAML + `
shutdown_grace: 1m30s
providers:
  - name: local
    kind: openai
    base_url: http://127.0.0.1:11434/v1
    models: [llama3.1, "qwen:7b"]
    headers: {X-Team: search}
    timeout: 2m
retry: {budget: {budget_percent: 25}}
`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatalf("the printed config does not load: %v\n%s", err, out)
	}
	if !cmp.Equal(cfg, again, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(Config{})) {
		t.Errorf("the printed config loads differently:\n%s\nfirst  %+v\nsecond %+v", out, cfg, again)
	}
	for _, want := range []string{"shutdown_grace: 1m30s\n", "models: [llama3.1, 'qwen:7b']\n", "scopes: [generate, models.list]\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
