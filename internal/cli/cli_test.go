package cli

import (
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/auth"
)

// TestHelp pins llmrelay's help: every way of asking for it prints the same
// text on stdout, lists every command, and exits 0.
func TestHelp(t *testing.T) {
	cases := map[string][][]string{
		"help.txt":              {{"--help"}, {"-h"}, {"help"}, {"-help"}},
		"help-serve.txt":        {{"help", "serve"}, {"serve", "--help"}, {"serve", "-h"}, {"--listen", "127.0.0.1:1", "--help"}},
		"help-hash-key.txt":     {{"help", "hash-key"}, {"hash-key", "--help"}, {"hash-key", "-h"}},
		"help-check-config.txt": {{"help", "check-config"}, {"check-config", "--help"}, {"check-config", "x.yaml", "-h"}},
		"help-health.txt":       {{"help", "health"}, {"health", "--help"}, {"health", "-h"}},
		"help-embed.txt":        {{"help", "embed"}, {"embed", "--help"}, {"embed", "-m", "mock/echo", "-h"}},
		"help-version.txt":      {{"help", "version"}, {"version", "--help"}},
		"help-keys.txt":         {{"help", "keys"}, {"keys"}, {"keys", "--help"}},
		"help-keys-create.txt":  {{"help", "keys", "create"}, {"keys", "create", "--help"}, {"keys", "create", "ci", "-h"}},
		"help-keys-update.txt":  {{"help", "keys", "update"}, {"keys", "update", "--help"}},
	}
	for file, invocations := range cases {
		t.Run(file, func(t *testing.T) {
			for i, args := range invocations {
				r := runCLI(t.Context(), t, args, nil, "")
				if r.code != ExitOK || r.stderr != "" {
					t.Fatalf("llmrelay %s: exit %d, stderr %q; want exit 0 and nothing on stderr", strings.Join(args, " "), r.code, r.stderr)
				}
				if i == 0 {
					golden(t, file, r.stdout)
				} else if want := runCLI(t.Context(), t, invocations[0], nil, "").stdout; r.stdout != want {
					t.Errorf("llmrelay %s printed other help than llmrelay %s", strings.Join(args, " "), strings.Join(invocations[0], " "))
				}
			}
		})
	}
	help := runCLI(t.Context(), t, []string{"help"}, nil, "").stdout
	for _, c := range commands {
		if !strings.Contains(help, "llmrelay "+c.usage) {
			t.Errorf("help does not list %s", c.name)
		}
	}
}

// TestHelpFlagsAsTyped checks that every command's flag list shows each
// flag as the usage line and the docs write it: a one-letter flag with one
// dash (-m, not --m), and a value named in words (MODEL), never Go's
// placeholder "string".
func TestHelpFlagsAsTyped(t *testing.T) {
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, []string{"help", c.name}, nil, "")
			for _, line := range strings.Split(r.stdout, "\n") {
				f := strings.Fields(line)
				if len(f) < 2 || !strings.HasPrefix(f[0], "-") {
					continue
				}
				if name := strings.TrimLeft(f[0], "-"); len(name) == 1 && f[0] != "-"+name {
					t.Errorf("help %s lists %q; want -%s", c.name, f[0], name)
				}
				if f[1] == "string" {
					t.Errorf("help %s: %q names its value \"string\"; want a word such as MODEL", c.name, line)
				}
			}
		})
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"serve", "--version"}} {
		r := runCLI(t.Context(), t, args, nil, "")
		if r.code != ExitOK || r.stderr != "" {
			t.Fatalf("llmrelay %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
		golden(t, "version.txt", r.stdout)
	}
}

// TestCheckConfig pins what check-config prints for a valid file (the
// effective configuration, secrets masked) and for files with mistakes
// (each problem by setting and line, in words).
func TestCheckConfig(t *testing.T) {
	tests := []struct {
		name, file string
		environ    map[string]string
		wantCode   int
		golden     string // of stdout when the file is valid, else of stderr
	}{
		{"misspelled field and bad duration", "testdata/bad.yaml", nil, ExitFailed, "check-config-bad.txt"},
		{"problems found after parsing", "testdata/invalid.yaml", nil, ExitFailed, "check-config-invalid.txt"},
		{"three mistakes in three sections, in one run", "testdata/three.yaml", nil, ExitFailed, "check-config-three.txt"},
		{"valid", "testdata/good.yaml", nil, ExitOK, "check-config-good.txt"},
		{"valid, with the environment", "testdata/good.yaml", map[string]string{"LLMRELAY_METRICS_LISTEN": "off"}, ExitOK, "check-config-env.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, []string{"check-config", tt.file}, tt.environ, "")
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.wantCode, r.stderr)
			}
			got, other := r.stdout, r.stderr
			if tt.wantCode != ExitOK {
				got, other = r.stderr, r.stdout
			}
			if other != "" {
				t.Errorf("unexpected output: %q", other)
			}
			golden(t, tt.golden, got)
		})
	}
	t.Run("file from the environment", func(t *testing.T) {
		r := runCLI(t.Context(), t, []string{"check-config"}, map[string]string{"LLMRELAY_CONFIG": "testdata/good.yaml"}, "")
		if r.code != ExitOK || !strings.HasPrefix(r.stdout, "# testdata/good.yaml is valid.") {
			t.Errorf("exit %d, stdout %q", r.code, r.stdout)
		}
	})
	t.Run("what only the adapters check, every provider's, on its line", func(t *testing.T) {
		file := writeConfig(t, "providers:\n  - name: oa\n    kind: openai\n    api_key_env: LLMRELAY_TEST_UNSET_KEY\n"+
			"  - name: claude\n    kind: anthropic\n")
		r := runCLI(t.Context(), t, []string{"check-config", file}, nil, "")
		for _, want := range []string{
			":4: providers[0].api_key_env: names LLMRELAY_TEST_UNSET_KEY, but that environment variable is unset or empty\n",
			":5: providers[1].api_key_env: required: the anthropic provider needs an API key",
		} {
			if r.code != ExitFailed || !strings.Contains(r.stderr, want) {
				t.Errorf("exit %d, stderr %q; want %q", r.code, r.stderr, want)
			}
		}
	})
	// serve reads these before it listens and fails without them;
	// check-config called such files valid.
	t.Run("what serve reads beyond the file", func(t *testing.T) {
		for _, tc := range []struct{ config, want string }{
			{"tls: {cert_file: testdata/no-such-cert.pem, key_file: testdata/no-such-key.pem}\n", "tls: open testdata/no-such-cert.pem: no such file or directory"},
			{"http_tls: {cert_file: testdata/good.yaml, key_file: testdata/good.yaml}\n", "http_tls: tls: failed to find any PEM data in certificate input"},
			{"state: {store: redis, redis: {address: 127.0.0.1:6379, password_env: LLMRELAY_TEST_UNSET_PASSWORD}}\n",
				"state: state.redis.password_env: $LLMRELAY_TEST_UNSET_PASSWORD is empty or unset"},
			{"state: {store: redis, redis: {address: 127.0.0.1:6379, tls: {enabled: true, ca_file: testdata/good.yaml}}}\n",
				"state: state.redis.tls.ca_file: testdata/good.yaml holds no PEM certificate"},
			{"tools: {mcp_servers: [{name: e, url: http://127.0.0.1:1/mcp, allow: [\"*\"], headers_env: {Authorization: LLMRELAY_TEST_UNSET_AUTH}}]}\n",
				"tools.mcp_servers[0].headers_env.Authorization names LLMRELAY_TEST_UNSET_AUTH, but that environment variable is unset or empty"},
			{"tools: {mcp_servers: [{name: e, url: https://127.0.0.1:1/mcp, allow: [\"*\"], ca_file: testdata/good.yaml}]}\n",
				"tools.mcp_servers[0].ca_file: testdata/good.yaml holds no PEM certificate"},
		} {
			r := runCLI(t.Context(), t, []string{"check-config", writeConfig(t, tc.config)}, nil, "")
			if r.code != ExitFailed || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("%s: exit %d, stderr %q; want %q", strings.TrimSpace(tc.config), r.code, r.stderr, tc.want)
			}
		}
	})
	t.Run("a route target its provider does not serve", func(t *testing.T) {
		file := writeConfig(t, "routes:\n  - name: smart\n    targets: [{model: mock/gpt-4.1}]\n")
		r := runCLI(t.Context(), t, []string{"check-config", file}, nil, "")
		if r.code != ExitFailed || !strings.Contains(r.stderr, `:3: routes[0].targets[0].model: unknown model "gpt-4.1" for provider "mock"`) {
			t.Errorf("exit %d, stderr %q; want the target named", r.code, r.stderr)
		}
	})
	// A key whose only pattern is a typo of its provider was valid, and
	// every call of it was refused MODEL_NOT_ALLOWED without a word from
	// check-config.
	t.Run("a warning, and --strict", func(t *testing.T) {
		file := writeConfig(t, "auth:\n  keys:\n    - name: app\n      sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n"+
			"      scopes: [generate]\n      models: [\"mok/*\"]\n")
		want := "warning: " + file + `:6: auth.keys[0].models: no pattern of key "app" matches a configured provider's model or a route: ` +
			"every call of the key is refused MODEL_NOT_ALLOWED; did you mean mock/*?\n"
		r := runCLI(t.Context(), t, []string{"check-config", file}, nil, "")
		if r.code != ExitOK || r.stderr != want {
			t.Errorf("exit %d, stderr %q; want 0 and %q", r.code, r.stderr, want)
		}
		if !strings.HasPrefix(r.stdout, "# "+file+" is valid.") || !strings.Contains(r.stdout, "# 1 warning on stderr") {
			t.Errorf("stdout %q; want the configuration, with its warning counted", r.stdout)
		}
		r = runCLI(t.Context(), t, []string{"check-config", "--strict", file}, nil, "")
		if r.code != ExitFailed || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "1 warning, and --strict fails on warnings") || r.stdout != "" {
			t.Errorf("--strict: exit %d, stdout %q, stderr %q; want 1, the warning and nothing on stdout", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("the routes example", func(t *testing.T) {
		r := runCLI(t.Context(), t, []string{"check-config", "../../examples/config/routes.yaml"}, nil, "")
		if r.code != ExitOK {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("the masked values", func(t *testing.T) {
		r := runCLI(t.Context(), t, []string{"check-config", "testdata/good.yaml"}, nil, "")
		if strings.Contains(r.stdout, "local-dev-token") {
			t.Errorf("check-config printed a secret:\n%s", r.stdout)
		}
	})
}

// TestKeysHelpNamesEveryScope: the help of keys create and keys update
// lists every scope a key may be given, so that an operator making a key
// for an indexing job finds embed there.
func TestKeysHelpNamesEveryScope(t *testing.T) {
	for _, cmd := range []string{"create", "update"} {
		help := runCLI(t.Context(), t, []string{"help", "keys", cmd}, nil, "").stdout
		line := ""
		for l := range strings.Lines(help) {
			if strings.Contains(l, "--scope SCOPE") {
				line = l
			}
		}
		for _, s := range auth.ScopeNames() {
			if !strings.Contains(line, " "+s) {
				t.Errorf("keys %s --help: the --scope line %q does not name the scope %s", cmd, strings.TrimSpace(line), s)
			}
		}
	}
}
