package config

import (
	"runtime"
	"strings"
	"testing"
)

// keysYAML configures one valid key (the hash of "test").
const keysYAML = `
auth:
  keys:
    - name: checkout-team
      sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
      scopes: [generate, models.list]
      models: ["openai/gpt-4o*", "mock/*"]
      requests_per_second: 20
      burst: 40
      max_concurrent_streams: 8
`

func TestOpenServerOnlyOnLoopback(t *testing.T) {
	tests := []struct {
		listen string
		keys   bool
		ok     bool
	}{
		{"127.0.0.1:50051", false, true},
		{"127.1.2.3:50051", false, true},
		{"[::1]:50051", false, true},
		{"localhost:50051", false, true},
		{"0.0.0.0:50051", false, false},
		{":50051", false, false},
		{"[::]:50051", false, false},
		{"10.0.0.7:50051", false, false},
		{"llmrelay.internal:50051", false, false},
		{"0.0.0.0:50051", true, true},
		{":50051", true, true},
	}
	for _, tc := range tests {
		name := tc.listen
		if tc.keys {
			name += " with keys"
		}
		t.Run(name, func(t *testing.T) {
			file := "listen: 127.0.0.1:1\n"
			if tc.keys {
				file += keysYAML
			}
			// The file listens on loopback; the --listen flag moves it, and
			// is held to the same rule.
			_, err := Load(Flags{ConfigPath: writeFile(t, file), Listen: tc.listen}, env(nil))
			if tc.ok && err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "refusing to serve without authentication")) {
				t.Fatalf("Load: %v, want the refusal to serve without keys", err)
			}
		})
	}
}

func TestAuthKeysAreChecked(t *testing.T) {
	cfg, err := Parse([]byte(keysYAML))
	if err != nil {
		t.Fatal(err)
	}
	k := cfg.Auth.Keys[0]
	if k.Name != "checkout-team" || k.Burst != 40 || k.MaxConcurrentStreams != 8 || len(k.Models) != 2 {
		t.Errorf("key decoded as %+v", k)
	}
	for name, tc := range map[string]struct{ yaml, want string }{
		"plain key": {strings.Replace(keysYAML, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "my-secret", 1),
			"config:5: auth.keys[0].sha256: must be 64 hex digits"},
		"unknown scope": {strings.Replace(keysYAML, "models.list]", "root]", 1),
			`config:6: auth.keys[0].scopes: has an unknown scope "root"`},
		"a burst without a rate": {strings.Replace(keysYAML, "      requests_per_second: 20\n", "", 1),
			"config:8: auth.keys[0].burst: is set without requests_per_second"},
		"a scope twice": {strings.Replace(keysYAML, "models.list]", "generate]", 1),
			`config:6: auth.keys[0].scopes[1]: "generate" is listed twice (also scopes[0]): list each once`},
	} {
		if _, err := Parse([]byte(tc.yaml)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error starting %q", name, err, tc.want)
		}
	}
}

func TestLimitsAreChecked(t *testing.T) {
	for yaml, want := range map[string]string{
		"limits: {max_request_bytes: 16777216}\n": "limits.max_request_bytes",
		"limits: {provider_queue: -1}\n":          "limits.provider_queue",
		"limits: {keepalive_min_time: 0s}\n":      "keepalive",
		"limits: {stream_workers: -2}\n":          "limits.stream_workers",
	} {
		if _, err := Parse([]byte(yaml)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error mentioning %s", yaml, err, want)
		}
	}
}

func TestStreamWorkerCount(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		want int
	}{
		{"listen: 127.0.0.1:0\n", 8 * runtime.GOMAXPROCS(0)},
		{"limits: {stream_workers: -1}\n", 0},
		{"limits: {stream_workers: 100}\n", 100},
	} {
		t.Run(tt.yaml, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Limits.StreamWorkerCount(); got != tt.want {
				t.Errorf("StreamWorkerCount() = %d, want %d", got, tt.want)
			}
		})
	}
}
