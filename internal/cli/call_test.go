package cli

import (
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// TestAddrWithoutAPort: an address without a port is refused before any
// call, by every command that calls a server: gRPC dialled port 443 with
// it, and the command waited for its deadline (or reached another server).
func TestAddrWithoutAPort(t *testing.T) {
	const noPort = `"127.0.0.1" has no port, and gRPC would dial 443; give the server's: 127.0.0.1:50051 (llmrelay's default listen), or 127.0.0.1:443 behind a TLS load balancer`
	tests := []struct {
		name    string
		args    []string
		environ map[string]string
		code    int
		stderr  string
	}{
		{"generate --addr", []string{"generate", "--addr", "127.0.0.1", "-m", "mock/echo", "hi"}, nil, ExitUsage,
			"llmrelay: generate: --addr " + noPort + "\nRun 'llmrelay help generate' for usage.\n"},
		{"embed --addr", []string{"embed", "--addr", "127.0.0.1", "-m", "mock/echo", "hi"}, nil, ExitUsage,
			"llmrelay: embed: --addr " + noPort + "\nRun 'llmrelay help embed' for usage.\n"},
		{"models --addr", []string{"models", "--addr", "127.0.0.1"}, nil, ExitUsage,
			"llmrelay: models: --addr " + noPort + "\nRun 'llmrelay help models' for usage.\n"},
		{"tools --addr", []string{"tools", "--addr", "127.0.0.1"}, nil, ExitUsage,
			"llmrelay: tools: --addr " + noPort + "\nRun 'llmrelay help tools' for usage.\n"},
		{"keys list --addr", []string{"keys", "list", "--addr", "127.0.0.1"}, nil, ExitUsage,
			"llmrelay: keys list: --addr " + noPort + "\nRun 'llmrelay help keys list' for usage.\n"},
		{"health --addr", []string{"health", "--addr", "127.0.0.1"}, nil, ExitUsage,
			"llmrelay: health: --addr " + noPort + "\nRun 'llmrelay help health' for usage.\n"},
		{"$LLMRELAY_ADDR", []string{"models"}, map[string]string{EnvAddr: "127.0.0.1"}, ExitFailed,
			"llmrelay: models: $LLMRELAY_ADDR " + noPort + "\n"},
		{"a port without a host", []string{"models", "--addr", "50051"}, nil, ExitUsage,
			`llmrelay: models: --addr "50051" is a port without a host; use 127.0.0.1:50051 (this machine) or HOST:50051` + "\nRun 'llmrelay help models' for usage.\n"},
		{"an IPv6 address", []string{"models", "--addr", "::1"}, nil, ExitUsage,
			`llmrelay: models: --addr "::1" has no port, and gRPC would dial 443; give the server's: [::1]:50051 (llmrelay's default listen), or [::1]:443 behind a TLS load balancer` + "\nRun 'llmrelay help models' for usage.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, tt.args, tt.environ, "")
			if r.code != tt.code || r.stderr != tt.stderr || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr:\n%s", r.code, r.stdout, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}

func TestAddrProblem(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:50051": true, "[::1]:50051": true, "relay.example.com:443": true, ":50051": true,
		"dns:///relay.example.com": true, "unix:///run/llmrelay.sock": true, "unix:relay.sock": true,
		"127.0.0.1": false, "127.0.0.1:": false, "relay.example.com": false, "[::1]": false, "50051": false,
	} {
		if got := addrProblem(addr); (got == "") != ok {
			t.Errorf("addrProblem(%q) = %q; want a problem: %v", addr, got, !ok)
		}
	}
}

// TestModelsUnknownProvider: models --provider with a name the server does
// not list says so, with the providers it lists, and exits 1 (it printed
// an empty table and exited 0); with a key, the providers are those whose
// models the key may use.
func TestModelsUnknownProvider(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = append(config.DefaultProviders(), provider.Config{Name: "other", Kind: "mock"})
	cfg.Auth.Keys = []config.APIKey{
		{Name: "all", SHA256: auth.HashKey("all-key"), Scopes: []string{"models.list"}, Models: []string{"*"}},
		{Name: "mock-only", SHA256: auth.HashKey(testKey), Scopes: []string{"models.list"}, Models: []string{"mock/*"}},
	}
	addr, _ := servertest.Listen(t, cfg)
	tests := []struct {
		name, key, provider string
		code                int
		stdoutHave, stderr  string
	}{
		{name: "a provider it lists", key: "all-key", provider: "other", stdoutHave: "other/echo"},
		{name: "an unknown provider", key: "all-key", provider: "nope", code: ExitFailed,
			stderr: "llmrelay: models: " + addr + " lists no provider \"nope\"; the providers whose models this key may use are mock, other\n"},
		{name: "a provider the key may not use", key: testKey, provider: "other", code: ExitFailed,
			stderr: "llmrelay: models: " + addr + " lists no provider \"other\"; the providers whose models this key may use are mock\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, json := range []bool{false, true} {
				args := []string{"models", "--addr", addr, "--key", tt.key, "--provider", tt.provider}
				if json {
					args = append(args, "--json")
				}
				r := runCLI(t.Context(), t, args, nil, "")
				if r.code != tt.code || r.stderr != tt.stderr || !strings.Contains(r.stdout, tt.stdoutHave) {
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", strings.Join(args, " "), r.code, r.stdout, r.stderr, tt.code, tt.stderr)
				}
			}
		})
	}
	t.Run("without keys", func(t *testing.T) {
		addr := relay(t, false)
		r := runCLI(t.Context(), t, []string{"models", "--addr", addr, "--provider", "nope"}, nil, "")
		if want := "llmrelay: models: " + addr + " lists no provider \"nope\"; the providers it lists are mock\n"; r.code != ExitFailed || r.stderr != want {
			t.Errorf("exit %d, stderr %q; want exit 1, stderr %q", r.code, r.stderr, want)
		}
	})
}
