package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadWithNothingGivesTheEmbeddedDefault(t *testing.T) {
	cfg, err := Load(Flags{}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:50051" {
		t.Errorf("listen %q, want 127.0.0.1:50051", cfg.Listen)
	}
	if len(cfg.Providers) != 1 || cfg.Providers[0].Name != "mock" || cfg.Providers[0].Kind != "mock" {
		t.Errorf("providers %+v, want just the mock", cfg.Providers)
	}
	if cfg.Retry.DefaultMaxAttempts != 3 || cfg.Retry.MaxAttemptsLimit != 10 || cfg.Retry.InitialBackoff != 500*time.Millisecond || cfg.Retry.MaxBackoff != 8*time.Second {
		t.Errorf("retry defaults %+v", cfg.Retry)
	}
}

// TestListenIsDefault: only an address no file, variable or flag set is
// the embedded default's, which the server may replace when it is taken;
// one given as the very same address is not.
func TestListenIsDefault(t *testing.T) {
	metrics := "127.0.0.1:9464"
	tests := []struct {
		name                string
		flags               Flags
		env                 map[string]string
		listen, metricsFrom bool // want ListenIsDefault of listen, metrics_listen
	}{
		{"nothing given", Flags{}, nil, true, true},
		{"a file that sets neither", Flags{ConfigPath: writeFile(t, "shutdown_grace: 3s\n")}, nil, true, true},
		{"a file that sets listen", Flags{ConfigPath: writeFile(t, "listen: 127.0.0.1:50051\n")}, nil, false, true},
		{"the variable", Flags{}, map[string]string{EnvMetricsListen: metrics}, true, false},
		{"the flag, with the default's address", Flags{MetricsListen: &metrics}, nil, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(tt.flags, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ListenIsDefault("listen") != tt.listen || cfg.ListenIsDefault("metrics_listen") != tt.metricsFrom {
				t.Errorf("ListenIsDefault: listen %v, metrics_listen %v; want %v, %v",
					cfg.ListenIsDefault("listen"), cfg.ListenIsDefault("metrics_listen"), tt.listen, tt.metricsFrom)
			}
		})
	}
	if Default().ListenIsDefault("listen") {
		t.Error("a config not loaded says its address is the default's")
	}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "llmrelay.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadOrder(t *testing.T) {
	file := writeFile(t, `
listen: 127.0.0.1:7000
shutdown_grace: 3s
retry:
  initial_backoff: 250ms
providers:
  - name: local
    kind: openai
    base_url: http://127.0.0.1:11434/v1
    models: [llama3.1]
`)
	tests := []struct {
		name       string
		flags      Flags
		env        map[string]string
		wantListen string
	}{
		{"file via flag", Flags{ConfigPath: file}, nil, "127.0.0.1:7000"},
		{"file via env", Flags{}, map[string]string{EnvConfig: file}, "127.0.0.1:7000"},
		{"env overrides file", Flags{ConfigPath: file}, map[string]string{EnvListen: "127.0.0.1:7001"}, "127.0.0.1:7001"},
		{"flag overrides env", Flags{ConfigPath: file, Listen: "127.0.0.1:7002"}, map[string]string{EnvListen: "127.0.0.1:7001"}, "127.0.0.1:7002"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(tc.flags, env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Listen != tc.wantListen {
				t.Errorf("listen %q, want %q", cfg.Listen, tc.wantListen)
			}
			if cfg.ShutdownGrace != 3*time.Second || cfg.Retry.InitialBackoff != 250*time.Millisecond {
				t.Errorf("file values not applied: grace %v, initial_backoff %v", cfg.ShutdownGrace, cfg.Retry.InitialBackoff)
			}
			if cfg.Retry.MaxBackoff != 8*time.Second {
				t.Errorf("unset field lost its default: max_backoff %v", cfg.Retry.MaxBackoff)
			}
			if len(cfg.Providers) != 1 || cfg.Providers[0].Name != "local" {
				t.Errorf("providers %+v, want only the configured one", cfg.Providers)
			}
		})
	}
}

func TestLoadRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"typo", "listne: 127.0.0.1:1\n", "listne: unknown field; did you mean listen?"},
		{"bad listen", "listen: nowhere\n", "listen"},
		{"bad duration", "shutdown_grace: soon\n", `shutdown_grace: "soon" is not a duration`},
		{"duplicate provider", "providers: [{name: a, kind: mock}, {name: a, kind: mock}]\n", "listed twice"},
		{"provider without kind", "providers: [{name: a}]\n", "kind: required"},
		{"slash in name", "providers: [{name: a/b, kind: mock}]\n", `providers[0].name: "a/b" cannot be called`},
		{"upper-case name", "providers: [{name: Mock, kind: mock}]\n", `providers[0].name: "Mock" cannot be called`},
		{"name with a dot", "providers: [{name: open.ai, kind: openai}]\n", `(for example "open-ai")`},
		{"name too long", "providers: [{name: " + strings.Repeat("a", 64) + ", kind: mock}]\n", "cannot be called"},
		{"unknown redirect policy", "providers: [{name: a, kind: mock, redirects: always}]\n", `providers[0].redirects: "always" is not never or same_origin`},
		{"negative transport timeout", "providers: [{name: a, kind: mock, transport: {dial_timeout: -1s}}]\n", "providers[0].transport.dial_timeout: must not be negative"},
		{"client certificate without key", "providers: [{name: a, kind: mock, transport: {cert_file: c.pem}}]\n", "cert_file and key_file go together"},
		{"transport timeout the first event timeout overrides", "providers: [{name: a, kind: mock, transport: {response_header_timeout: 5m}}]\n", "providers[0].transport.response_header_timeout: 5m is not shorter than the first event timeout (2m)"},
		{"transport timeout against the provider's first event timeout", "providers: [{name: a, kind: mock, first_event_timeout: 10s, transport: {dial_timeout: 10s}}]\n", "providers[0].transport.dial_timeout: 10s is not shorter than the first event timeout (10s)"},
		{"auth throttle without a rate", "auth: {throttle: {burst: 5, per_second: 0}}\n", "auth.throttle"},
		{"attempts over limit", "retry: {default_max_attempts: 11}\n", "default_max_attempts"},
		{"half tls", "tls: {cert_file: a.pem}\n", "tls"},
		{"bad level", "log: {level: loud}\n", "log.level"},
		{"negative budget", "retry: {budget: {budget_percent: -5}}\n", "retry.budget.budget_percent: -5 is not within 0..1000"},
		{"output default over the limit", "limits: {default_max_output_bytes: 10, max_output_bytes: 5}\n", "limits.default_max_output_bytes: 10 is not within 1..max_output_bytes (5)"},
		{"heartbeat below its minimum", "heartbeat: {interval: 100ms}\n", "heartbeat.interval: 100ms is not 0 (off) or at least min_interval (1s)"},
		{"budget denying every retry", "retry: {budget: {budget_percent: 0, min_retry_concurrency: 0}}\n", "would deny every retry"},
		{"partial object interval over a minute", "structured_output: {partial_object_min_interval: 2m}\n", "structured_output.partial_object_min_interval: 2m is not within 0..1m"},
		{"no validation budget", "structured_output: {validation_budget: 0}\n", "structured_output.validation_budget: must be positive"},
		{"negative drain delay", "drain_delay: -1s\n", "drain_delay"},
		{"negative connection age", "limits: {max_connection_age: -1m}\n", "max_connection_age"},
		{"negative connection age grace", "limits: {max_connection_age_grace: -1s}\n", "max_connection_age_grace"},
		{"no Resume readers per key", "resume: {max_readers_per_key: 0}\n", "resume.max_readers_per_key: must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(Flags{ConfigPath: writeFile(t, tc.yaml)}, env(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := Load(Flags{ConfigPath: filepath.Join(t.TempDir(), "missing.yaml")}, env(nil)); err == nil {
		t.Error("a missing config file loaded without error")
	}
}

func TestConnectionAgeGrace(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       time.Duration
	}{
		{"unset: the longest deadline", "", 600 * time.Second},
		{"unset follows deadlines.max", "deadlines: {max: 20m}\n", 20 * time.Minute},
		{"set", "limits: {max_connection_age_grace: 45s}\n", 45 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.ConnectionAgeGrace(); got != tc.want {
				t.Errorf("ConnectionAgeGrace() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDrainAndConnectionAgeLoad(t *testing.T) {
	cfg, err := Parse([]byte("drain_delay: 7s\nlimits: {max_connection_age: 5m, max_connection_age_grace: 2m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DrainDelay != 7*time.Second || cfg.Limits.MaxConnectionAge != 5*time.Minute || cfg.Limits.MaxConnectionAgeGrace != 2*time.Minute {
		t.Errorf("drain_delay %v, max_connection_age %v, grace %v; want 7s, 5m, 2m", cfg.DrainDelay, cfg.Limits.MaxConnectionAge, cfg.Limits.MaxConnectionAgeGrace)
	}
	if d := Default(); d.DrainDelay != 0 || d.Limits.MaxConnectionAge != 30*time.Minute {
		t.Errorf("defaults: drain_delay %v, max_connection_age %v; want 0 and 30m", d.DrainDelay, d.Limits.MaxConnectionAge)
	}
}

// TestHTTPListen: the HTTP doors listen on 127.0.0.1:8080 by default;
// "off" in the file, the variable or the flag turns them off (in that
// order of precedence); anything but loopback needs keys, like listen; and
// http_tls needs both of its files.
func TestHTTPListen(t *testing.T) {
	off, addr := "off", "127.0.0.1:18080"
	tests := []struct {
		name  string
		flags Flags
		env   map[string]string
		want  string
	}{
		{"the default", Flags{}, nil, "127.0.0.1:8080"},
		{"off in the file", Flags{ConfigPath: writeFile(t, "http_listen: off\n")}, nil, ""},
		{"the variable", Flags{ConfigPath: writeFile(t, "http_listen: off\n")}, map[string]string{EnvHTTPListen: addr}, addr},
		{"the flag over the variable", Flags{HTTPListen: &off}, map[string]string{EnvHTTPListen: addr}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(tt.flags, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.HTTPListen != tt.want {
				t.Errorf("http_listen %q, want %q", cfg.HTTPListen, tt.want)
			}
		})
	}
	for body, want := range map[string]string{
		"http_listen: 0.0.0.0:8080\n":       "http_listen: 0.0.0.0:8080 is not a loopback address and auth.keys is empty",
		"http_listen: 8080\n":               "http_listen",
		"http_tls: {cert_file: a.pem}\n":    "http_tls.key_file: required with cert_file",
		"http_listen: off\nlisten: 50051\n": "listen",
	} {
		if _, err := Parse([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

// TestListenersNeedPortsOfTheirOwn: two listeners set to one address are
// refused when the config is checked, naming both settings, rather than
// at start by a bind error that asks whether another llmrelay is running.
func TestListenersNeedPortsOfTheirOwn(t *testing.T) {
	file := writeFile(t, "listen: 127.0.0.1:7000\nmetrics_listen: 127.0.0.1:7001\n")
	same, everywhere := "127.0.0.1:7000", "0.0.0.0:7001"
	refused := []struct {
		name  string
		flags Flags
		env   map[string]string
		want  string
	}{
		{"in the file", Flags{ConfigPath: writeFile(t, "listen: 127.0.0.1:7000\nhttp_listen: 127.0.0.1:7000\n")}, nil,
			":2: http_listen: 127.0.0.1:7000 is also listen's address: each listener needs a port of its own"},
		{"a flag over the file", Flags{ConfigPath: file, HTTPListen: &same}, nil,
			"http_listen (from the command line): 127.0.0.1:7000 is also listen's address"},
		{"every interface and loopback", Flags{ConfigPath: file}, map[string]string{EnvHTTPListen: everywhere},
			"metrics_listen: 127.0.0.1:7001 is also http_listen's address"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.flags, env(tt.env))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load: %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
	for name, body := range map[string]string{
		"free ports":                         "listen: 127.0.0.1:0\nhttp_listen: 127.0.0.1:0\nmetrics_listen: 127.0.0.1:0\n",
		"other hosts":                        "listen: 127.0.0.1:7000\nhttp_listen: 127.0.0.2:7000\nmetrics_listen: off\n",
		"the default's port, which may move": "listen: 127.0.0.1:8080\n",
	} {
		if _, err := Load(Flags{ConfigPath: writeFile(t, body)}, env(nil)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
