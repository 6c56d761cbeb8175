package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestProblemsNameTheSettingAndLine pins the messages a person sees for a
// config file with mistakes: the setting's path, the file's line, what is
// wrong in words, and the fix where there is an obvious one.
func TestProblemsNameTheSettingAndLine(t *testing.T) {
	const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	tests := []struct {
		name, yaml string
		want       string // the whole error text
	}{
		{"misspelled field", "listn: 127.0.0.1:1\n",
			"config:1: listn: unknown field; did you mean listen?"},
		{"camel case", "metricsListen: 127.0.0.1:1\n",
			"config:1: metricsListen: unknown field; did you mean metrics_listen?"},
		{"misspelled nested field", "retry:\n  intial_backoff: 1s\n",
			"config:2: retry.intial_backoff: unknown field; did you mean initial_backoff?"},
		{"field in the wrong section", "initial_backoff: 1s\n",
			"config:1: initial_backoff: unknown field; did you mean retry.initial_backoff? (initial_backoff belongs in retry)"},
		{"a removed setting", "retry:\n  budget: {max_tokens: 100}\n",
			"config:2: retry.budget.max_tokens: removed: the retry budget is no longer a token bucket (which could wedge); " +
				"it bounds the retries in flight with budget_percent (default 20) and min_retry_concurrency (default 3), " +
				"or enabled: false turns it off (docs/retries.md)"},
		{"nothing close", "deadlines:\n  whenever: 1s\n",
			"config:2: deadlines.whenever: unknown field; the fields in deadlines are default, first_event, max, max_first_event, max_stream_idle, min_stream_timeout, stream_idle"},
		{"misspelled field of a list item", "providers:\n  - name: a\n    kind: mock\n  - name: b\n    knd: mock\n",
			"config:5: providers[1].knd: unknown field; did you mean kind?"},
		{"duration without a unit", "shutdown_grace: 30\n",
			"config:1: shutdown_grace: 30 has no unit; use a Go duration such as 30s or 1m30s (units ms, s, m, h)"},
		{"duration in words", "retry:\n  max_backoff: 1 minute\n",
			`config:2: retry.max_backoff: "1 minute" is not a duration; use a Go duration such as 30s or 1m30s (units ms, s, m, h)`},
		{"duration as a list", "deadlines: {max: [1s]}\n",
			"config:1: deadlines.max: want a duration, not a list; use a Go duration such as 30s or 1m30s (units ms, s, m, h)"},
		{"word for a number", "limits:\n  provider_queue: lots\n",
			`config:2: limits.provider_queue: want a whole number, not "lots"`},
		{"a fraction for a whole number", "providers: [{name: up, kind: mock, max_concurrent: 2.7}]\n",
			`config:1: providers[0].max_concurrent: want a whole number, not "2.7"`},
		{"a fraction for a token cap", "teams: [{name: t, budgets: [{window: day, max_cost_usd: 1, max_tokens: 1.5}]}]\n",
			`config:1: teams[0].budgets[0].max_tokens: want a whole number, not "1.5"`},
		{"a fraction for an unsigned number", "limits:\n  max_concurrent_streams_per_conn: 10.5\n",
			`config:2: limits.max_concurrent_streams_per_conn: want a whole number, 0 or more, not "10.5"`},
		{"negative for an unsigned number", "limits:\n  max_concurrent_streams_per_conn: -1\n",
			`config:2: limits.max_concurrent_streams_per_conn: want a whole number, 0 or more, not "-1"`},
		{"NaN for a number", "retry:\n  budget: {budget_percent: .nan}\n",
			`config:2: retry.budget.budget_percent: want a finite number, not ".nan"`},
		{"infinity for a number", "auth:\n  throttle:\n    per_second: .Inf\n",
			`config:3: auth.throttle.per_second: want a finite number, not ".Inf"`},
		{"negative infinity for a price", "providers: [{name: up, kind: mock}]\npricing:\n  models:\n    up/echo: {input: 1, output: -.inf}\n",
			`config:4: pricing.models.up/echo.output: want a finite number, not "-.inf"`},
		{"value for a section", "retry: 3\n",
			`config:1: retry: want a section of settings (one "name: value" per line), not "3"`},
		{"value for a list", "providers: mock\n",
			`config:1: providers: want a list (one "- item" per line, or [a, b]), not "mock"`},
		{"set twice", "listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n",
			"config:2: listen: set twice (first on line 1)"},
		{"a second document", "listen: 127.0.0.1:1\n---\nshutdown_grace: 30s\n",
			"config:2: the file holds more than one YAML document (this \"---\" starts the second); llmrelay reads one: put every setting in one document"},
		{"a second document after a leading marker", "---\nlisten: 127.0.0.1:1\n---\nauth: {keys: []}\n",
			"config:3: the file holds more than one YAML document (this \"---\" starts the second); llmrelay reads one: put every setting in one document"},
		{"not YAML", "retry: {max_backoff: 1s\n",
			"config:1: not valid YAML: did not find expected ',' or '}'"},
		{"unquoted colon", "log:\n  level: a: b\n",
			`config:2: not valid YAML: mapping values are not allowed in this context; a value that contains ": " must be quoted`},
		{"the whole hash-key line pasted, unquoted", "auth:\n  keys:\n    - name: k\n      sha256: sha256: " + hash + "\n",
			`config:4: not valid YAML: the whole line that hash-key prints was pasted after "sha256:"; write "sha256:" once: sha256: 9f86d081884c…`},
		{"a problem found after parsing, on its own line", "retry:\n  initial_backoff: 10s\n",
			"config:2: retry.max_backoff: 8s is shorter than initial_backoff (10s)"},
		{"a port alone", "listen: 50061\n",
			`config:1: listen: "50061" is a port without a host; use 127.0.0.1:50061 (this machine only) or 0.0.0.0:50061 (every interface)`},
		{"a bad port", "metrics_listen: 127.0.0.1:http-ish\n",
			`config:1: metrics_listen: "127.0.0.1:http-ish": the port must be a number from 0 to 65535, as in 127.0.0.1:9464; "" or off turns the metrics endpoint off`},
		{"several problems, in file order", "retry:\n  max_backoff: soon\nlistn: x\nshutdown_grace: 5\n",
			"config has 3 problems:\n" +
				"  config:2: retry.max_backoff: \"soon\" is not a duration; use a Go duration such as 30s or 1m30s (units ms, s, m, h)\n" +
				"  config:3: listn: unknown field; did you mean listen?\n" +
				"  config:4: shutdown_grace: 5 has no unit; use a Go duration such as 30s or 1m30s (units ms, s, m, h)"},
		{"a stream idle timeout under the floor", "deadlines:\n  stream_idle: 50ms\n",
			"config:2: deadlines.stream_idle: 50ms is shorter than min_stream_timeout (100ms)"},
		{"a first event timeout longer than its max", "deadlines:\n  first_event: 20m\n",
			"config:2: deadlines.max_first_event: 10m is shorter than first_event (20m)"},
		{"a provider's first event timeout under the floor", "providers:\n  - name: a\n    kind: mock\n    first_event_timeout: 1ms\n",
			"config:4: providers[0].first_event_timeout: 1ms is not 0 (the server's deadlines.first_event) or at least min_stream_timeout (100ms)"},
		{"an option key both allowed and denied", "providers:\n  - name: a\n    kind: openai\n    provider_options:\n      allow: [seed]\n      deny: [seed]\n",
			`config:5: providers[0].provider_options.allow[0]: "seed" is also in provider_options.deny`},
		{"an option name with a space, which no key has", "providers:\n  - name: a\n    kind: anthropic\n    provider_options:\n      deny: [container, 'mcp_servers ']\n",
			`config:5: providers[0].provider_options.deny[1]: "mcp_servers " is not a provider option's name: letters, digits, '_' and '-' only, as the provider's API spells it`},
		{"an option path, where the policy names top-level keys", "providers:\n  - name: a\n    kind: anthropic\n    provider_options:\n      deny:\n        - container.id\n",
			`config:6: providers[0].provider_options.deny[0]: "container.id" is a path; the policy names top-level keys only ("container" refuses or allows the whole key)`},
		{"an option listed twice", "providers:\n  - name: a\n    kind: openai\n    provider_options:\n      allow: [seed, verbosity, seed]\n",
			`config:5: providers[0].provider_options.allow[2]: "seed" is listed twice (also provider_options.allow[0])`},
		{"three mistakes in three sections, of shape and after parsing, in one report",
			"providers:\n  - name: oa\n    kind: opnai\nretry:\n  max_backoff: 30\nroutes:\n  - name: smart\n    balance: weigted\n    targets: [{model: oa/gpt-4.1}]\n",
			"config has 3 problems:\n" +
				`  config:3: providers[0].kind: "opnai" is not anthropic, gemini, mock or openai; did you mean openai?` + "\n" +
				"  config:5: retry.max_backoff: 30 has no unit; use a Go duration such as 30s or 1m30s (units ms, s, m, h)\n" +
				`  config:8: routes[0].balance: "weigted" is not ordered or weighted; did you mean weighted?`},
		{"a tab in the indentation", "retry:\n\tinitial_backoff: 1s\n",
			"config:2: not valid YAML: tab characters are not allowed in YAML; indent with spaces"},
		{"a tab in the indentation, blamed on the line before", "log:\n  level: info\n\tformat: json\n",
			"config:3: not valid YAML: tab characters are not allowed in YAML; indent with spaces"},
		{"a misspelled provider kind", "providers:\n  - name: claude\n    kind: antropic\n",
			`config:3: providers[0].kind: "antropic" is not anthropic, gemini, mock or openai; did you mean anthropic?`},
		{"a provider kind far from any", "providers:\n  - name: local\n    kind: ollama\n",
			`config:3: providers[0].kind: "ollama" is not anthropic, gemini, mock or openai`},
		{"a misspelled closed choice", "state:\n  on_store_failure: fial_open\n",
			`config:2: state.on_store_failure: "fial_open" is not fail_open or fail_closed; did you mean fail_open?`},
		{"a misspelled field is not also reported missing", "providers:\n  - name: a\n    knd: mock\n",
			"config:3: providers[0].knd: unknown field; did you mean kind?"},
		{"a value left out for its type is not also checked", "retry:\n  initial_backoff: 10s\n  max_backoff: soon\n",
			`config:3: retry.max_backoff: "soon" is not a duration; use a Go duration such as 30s or 1m30s (units ms, s, m, h)`},
		{"a default deadline below the stream timeouts' floor", "deadlines:\n  default: 50ms\n",
			"config:2: deadlines.default: 50ms is shorter than min_stream_timeout (100ms): every call that sets no deadline would end " +
				"before an attempt could wait that long for its provider; raise default (or lower min_stream_timeout)"},
		{"a floor raised above the default deadline", "deadlines:\n  min_stream_timeout: 5m\n  stream_idle: 5m\n  first_event: 5m\n",
			"config:2: deadlines.default: 2m is shorter than min_stream_timeout (5m): every call that sets no deadline would end " +
				"before an attempt could wait that long for its provider; raise default (or lower min_stream_timeout)"},
		{"a route timeout below the floor", "routes:\n  - name: fast\n    timeout: 10ms\n    targets: [{model: mock/echo}]\n",
			"config:3: routes[0].timeout: 10ms is shorter than deadlines.min_stream_timeout (100ms): every call of the route would end before an attempt could wait that long for its provider"},
		{"a provider timeout below the floor", "providers:\n  - name: a\n    kind: mock\n    timeout: 20ms\n",
			"config:4: providers[0].timeout: 20ms is shorter than deadlines.min_stream_timeout (100ms): every request to the provider would end " +
				"before an attempt could wait that long for it; raise timeout or leave it unset"},
		{"every key's problem", "auth:\n  keys:\n    - name: a\n      sha256: nothex\n      scopes: [generate]\n      models: ['*']\n    - name: b\n      sha256: " + hash + "\n      scopes: [generate]\n      models: ['*']\n    - name: b\n      sha256: " + hash + "\n      scopes: [generate]\n      models: ['*']\n",
			"config has 2 problems:\n" +
				"  config:4: auth.keys[0].sha256: must be 64 hex digits (what `llmrelay hash-key` prints after \"sha256: \"), not the key itself\n" +
				`  config:11: auth.keys[2].name: "b" is already used by auth.keys[1]`},
		{"several problems after parsing", "deadlines:\n  default: 1h\n  max: 10m\nlog:\n  level: loud\n",
			"config has 2 problems:\n" +
				"  config:3: deadlines.max: 10m is shorter than default (1h)\n" +
				`  config:5: log.level: "loud" is not debug, info, warn or error`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want %q", tt.yaml, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse(%q):\n got %s\nwant %s", tt.yaml, err, tt.want)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Errorf("%T is not a *FieldError", err)
			}
			for _, internal := range []string{"config.Config", "time.Duration", "!!str", "!!int", "unmarshal"} {
				if strings.Contains(err.Error(), internal) {
					t.Errorf("the message shows Go internals (%s): %s", internal, err)
				}
			}
		})
	}
}

func TestValuesThatAreAccepted(t *testing.T) {
	const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	key := func(sha string) string {
		return "auth:\n  keys:\n    - name: k\n      sha256: " + sha + "\n      scopes: [generate]\n      models: ['*']\n"
	}
	tests := []struct {
		name, yaml string
		check      func(*Config) bool
	}{
		{"a bare 0 duration", "shutdown_grace: 0\n", func(c *Config) bool { return c.ShutdownGrace == 0 }},
		{"a compound duration", "retry: {max_backoff: 1m30s}\n", func(c *Config) bool { return c.Retry.MaxBackoff == 90*time.Second }},
		{"an empty value keeps the default", "retry:\n  max_backoff:\n", func(c *Config) bool { return c.Retry.MaxBackoff == 8*time.Second }},
		{"metrics off", "metrics_listen: off\n", func(c *Config) bool { return c.MetricsListen == "" }},
		{"the hash-key line, quoted", key(`"sha256: ` + hash + `"`), func(c *Config) bool { return len(c.Auth.Keys) == 1 }},
		{"the hash-key line without its space", key("sha256:" + hash), func(c *Config) bool { return len(c.Auth.Keys) == 1 }},
		{"anchors and aliases", "deadlines: &d {stream_idle: 20s}\n", func(c *Config) bool { return c.Deadlines.StreamIdle == 20*time.Second }},
		{"one document between markers", "---\nshutdown_grace: 30s\n...\n", func(c *Config) bool { return c.ShutdownGrace == 30*time.Second }},
		{"a marker and nothing after the document", "shutdown_grace: 30s\n---\n", func(c *Config) bool { return c.ShutdownGrace == 30*time.Second }},
		{"option names no adapter knows yet", "providers:\n  - name: a\n    kind: anthropic\n    provider_options:\n      deny: [mcp_servers, container, some-future_Option2]\n      allow: [top_k]\n",
			func(c *Config) bool {
				return len(c.Providers) == 1 && len(c.Providers[0].ProviderOptions.Deny) == 3 && c.Providers[0].ProviderOptions.Allow[0] == "top_k"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(cfg) {
				t.Errorf("Parse(%q) gave %+v", tt.yaml, cfg)
			}
		})
	}
}

// TestProblemsNameTheOverride: a bad value from a flag or an environment
// variable is reported as coming from there, not from the file's line, and a
// port alone gets one message (not a second about authentication too).
func TestProblemsNameTheOverride(t *testing.T) {
	file := writeFile(t, "listen: 127.0.0.1:7000\nmetrics_listen: 127.0.0.1:7001\n")
	none := ""
	tests := []struct {
		name  string
		flags Flags
		env   map[string]string
		want  string
	}{
		{"port alone on the command line", Flags{ConfigPath: file, Listen: "50061"}, nil,
			`listen (from the command line): "50061" is a port without a host; use 127.0.0.1:50061 (this machine only) or 0.0.0.0:50061 (every interface)`},
		{"bad metrics address in the environment", Flags{ConfigPath: file}, map[string]string{EnvMetricsListen: "nowhere"},
			`metrics_listen (from $LLMRELAY_METRICS_LISTEN): "nowhere" is not host:port, such as 127.0.0.1:9464; "" or off turns the metrics endpoint off`},
		{"missing file named by the environment", Flags{}, map[string]string{EnvConfig: "/does/not/exist.yaml"},
			"config file /does/not/exist.yaml (from $LLMRELAY_CONFIG): no such file or directory"},
		{"flag wins over a good file value", Flags{ConfigPath: file, MetricsListen: &none, Listen: "0.0.0.0:7000"}, nil,
			"listen (from the command line): 0.0.0.0:7000 is not a loopback address and auth.keys is empty: refusing to serve without authentication; " +
				"add keys (`llmrelay hash-key` prints a key's sha256) or listen on 127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.flags, env(tt.env))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Load:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestMetricsListenOverrides(t *testing.T) {
	file := writeFile(t, "metrics_listen: 127.0.0.1:7001\n")
	empty, addr := "", "127.0.0.1:7003"
	tests := []struct {
		name  string
		flags Flags
		env   map[string]string
		want  string
	}{
		{"file", Flags{ConfigPath: file}, nil, "127.0.0.1:7001"},
		{"environment", Flags{ConfigPath: file}, map[string]string{EnvMetricsListen: "127.0.0.1:7002"}, "127.0.0.1:7002"},
		{"environment off", Flags{ConfigPath: file}, map[string]string{EnvMetricsListen: "off"}, ""},
		{"flag over environment", Flags{ConfigPath: file, MetricsListen: &addr}, map[string]string{EnvMetricsListen: "127.0.0.1:7002"}, addr},
		{"empty flag turns it off", Flags{ConfigPath: file, MetricsListen: &empty}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(tt.flags, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.MetricsListen != tt.want {
				t.Errorf("metrics_listen %q, want %q", cfg.MetricsListen, tt.want)
			}
		})
	}
}

// TestAliasBomb: a few lines of aliases of aliases, which would expand to
// billions of values, are refused quickly, not expanded.
func TestAliasBomb(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		bomb += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n"
		prev = name
	}
	bomb += "providers:\n  - name: x\n    kind: mock\n    models: *" + prev + "\n"
	if _, err := Parse([]byte(bomb)); err == nil {
		t.Fatal("an alias bomb loaded")
	}
}
