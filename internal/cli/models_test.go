package cli

import (
	"encoding/json"
	"testing"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// TestModelsAnyModelProvider: a provider whose config lists no models
// accepts any model name; models shows it under a heading of its own,
// with how to call it and the key's patterns that reach it (it listed
// nothing of it), and --provider names it without calling it unknown.
// A key that may use none of its models sees nothing of it.
func TestModelsAnyModelProvider(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = append(config.DefaultProviders(), provider.Config{Name: "open", Kind: "openai", BaseURL: "http://127.0.0.1:9"})
	cfg.Auth.Keys = []config.APIKey{
		{Name: "gpt", SHA256: auth.HashKey("gpt-key"), Scopes: []string{"models.list"}, Models: []string{"mock/echo", "open/gpt-4o*"}},
		{Name: "mock-only", SHA256: auth.HashKey(testKey), Scopes: []string{"models.list"}, Models: []string{"mock/*"}},
	}
	addr, _ := servertest.Listen(t, cfg)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "a key that allows some of its models", args: []string{"--key", "gpt-key"}, stdout: "" +
			"MODEL      KIND  TARGETS\n" +
			"mock/echo  mock  -\n" +
			"\n" +
			"ANY-MODEL PROVIDER  KIND    CALL AS       THE KEY ALLOWS\n" +
			"open                openai  open/<model>  open/gpt-4o*\n"},
		{name: "filtered to it", args: []string{"--key", "gpt-key", "--provider", "open"}, stdout: "" +
			"ANY-MODEL PROVIDER  KIND    CALL AS       THE KEY ALLOWS\n" +
			"open                openai  open/<model>  open/gpt-4o*\n"},
		{name: "a key that allows none of its models", args: []string{"--key", testKey}, stdout: "" +
			"MODEL       KIND  TARGETS\n" +
			"mock/echo   mock  -\n" +
			"mock/lorem  mock  -\n" +
			"mock/think  mock  -\n"},
		{name: "filtered to it, a key that allows none of its models", args: []string{"--key", testKey, "--provider", "open"}, code: ExitFailed,
			stderr: "llmrelay: models: " + addr + " lists no provider \"open\"; the providers whose models this key may use are mock\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, append([]string{"models", "--addr", addr}, tt.args...), nil, "")
			if r.code != tt.code || r.stdout != tt.stdout || r.stderr != tt.stderr {
				t.Errorf("exit %d, stdout:\n%s\nstderr %q\nwant exit %d, stdout:\n%s\nstderr %q", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
	t.Run("--json", func(t *testing.T) {
		r := runCLI(t.Context(), t, []string{"models", "--addr", addr, "--key", "gpt-key", "--json"}, nil, "")
		var resp struct {
			AnyModelProviders []struct {
				Provider, ProviderKind string
				KeyPatterns            []string
			} `json:"anyModelProviders"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &resp); r.code != ExitOK || err != nil {
			t.Fatalf("exit %d, %v: %s %s", r.code, err, r.stdout, r.stderr)
		}
		if p := resp.AnyModelProviders; len(p) != 1 || p[0].Provider != "open" || p[0].ProviderKind != "openai" || len(p[0].KeyPatterns) != 1 || p[0].KeyPatterns[0] != "open/gpt-4o*" {
			t.Errorf("anyModelProviders %+v, want open (openai) with open/gpt-4o*:\n%s", p, r.stdout)
		}
	})
}
