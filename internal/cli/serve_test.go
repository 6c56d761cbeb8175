package cli

import (
	"bytes"
	"context"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// watchWriter is a goroutine-safe buffer that closes seen when what it has
// been written contains want.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func newWatchWriter(want string) *watchWriter {
	return &watchWriter{want: want, seen: make(chan struct{})}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	before := strings.Contains(w.buf.String(), w.want)
	w.buf.Write(p)
	if !before && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestServeStopsCleanlyWhenItsContextEnds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		environ map[string]string
	}{
		{"flags", []string{"--listen", "127.0.0.1:0", "--metrics-listen", "off"}, nil},
		{"serve command, environment", []string{"serve"}, map[string]string{"LLMRELAY_LISTEN": "127.0.0.1:0", "LLMRELAY_METRICS_LISTEN": "off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			stderr := newWatchWriter("llmrelay serving")
			done := make(chan int, 1)
			go func() {
				done <- Run(ctx, tc.args, Env{Stdout: &bytes.Buffer{}, Stderr: stderr, Getenv: func(k string) string { return tc.environ[k] }})
			}()
			select {
			case <-stderr.seen:
			case code := <-done:
				t.Fatalf("exited %d before serving: %s", code, stderr)
			case <-time.After(60 * time.Second):
				t.Fatalf("not serving after a minute: %s", stderr)
			}
			cancel()
			select {
			case code := <-done:
				if code != ExitOK {
					t.Fatalf("exit %d after its context ended: %s", code, stderr)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("Run did not return after its context ended")
			}
			if strings.Contains(stderr.String(), "metrics serving") {
				t.Errorf("metrics were turned off, but: %s", stderr)
			}
		})
	}
}

// TestAddressInUse: a second instance on a taken metrics port is told
// which setting holds the address and how to change it, in one line.
func TestAddressInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"metrics", []string{"--listen", "127.0.0.1:0", "--metrics-listen", addr},
			"llmrelay: metrics_listen: " + addr + " is already in use (is another llmrelay running?); choose another address with " +
				"--metrics-listen HOST:PORT, $LLMRELAY_METRICS_LISTEN or metrics_listen in the config file, or turn metrics off with --metrics-listen off\n"},
		{"grpc", []string{"--listen", addr, "--metrics-listen", "off"},
			"llmrelay: listen: " + addr + " is already in use (is another llmrelay running?); choose another address with " +
				"--listen HOST:PORT, $LLMRELAY_LISTEN or listen in the config file\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, tt.args, nil, "")
			if r.code != ExitFailed || r.stderr != tt.want {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and:\n%s", r.code, r.stderr, ExitFailed, tt.want)
			}
		})
	}
}

// TestUsageErrors: every mistake on the command line is one message,
// prefixed, with the exit code that tells a usage error from a failure.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string // all of stderr
	}{
		{"unknown flag", []string{"--no-such-flag"}, ExitUsage,
			"llmrelay: serve: unknown flag --no-such-flag; the flags are --config, --http-listen, --listen, --metrics-listen, --version\nRun 'llmrelay help' for usage.\n"},
		{"flag of a command without flags", []string{"hash-key", "--key", "k"}, ExitUsage,
			"llmrelay: hash-key: unknown flag --key; it takes no flags\nRun 'llmrelay help hash-key' for usage.\n"},
		{"flag without its value", []string{"serve", "--listen"}, ExitUsage,
			"llmrelay: serve: flag --listen needs a value\nRun 'llmrelay help' for usage.\n"},
		{"unknown command", []string{"stray"}, ExitUsage,
			"llmrelay: unknown command \"stray\"; the commands are serve, generate, embed, models, tools, hash-key, check-config, health, keys, version\nRun 'llmrelay help' for usage.\n"},
		{"argument to serve", []string{"serve", "stray"}, ExitUsage,
			"llmrelay: serve: unexpected argument \"stray\" (serve takes only flags)\nRun 'llmrelay help' for usage.\n"},
		{"help on an unknown command", []string{"help", "nope"}, ExitUsage,
			"llmrelay: help: unknown command \"nope\"; the commands are serve, generate, embed, models, tools, hash-key, check-config, health, keys, version\nRun 'llmrelay help' for usage.\n"},
		{"keys without its command's name", []string{"keys", "make"}, ExitUsage,
			"llmrelay: keys: unknown command \"make\"; its commands are create, list, get, update, revoke, usage, teams\nRun 'llmrelay help keys' for usage.\n"},
		{"keys create without a name", []string{"keys", "create", "--scope", "generate"}, ExitUsage,
			"llmrelay: keys create: name the key: llmrelay keys create NAME\nRun 'llmrelay help keys create' for usage.\n"},
		{"keys create with a budget not in the config's shape", []string{"keys", "create", "ci", "--budget", "{window: day, max_usd: 5}"}, ExitUsage,
			"llmrelay: keys create: --budget \"{window: day, max_usd: 5}\" (#1): max_usd: unknown field; the fields here are max_cost_usd, max_tokens, window; write it as '{window: day, max_cost_usd: 5}'\nRun 'llmrelay help keys create' for usage.\n"},
		{"keys update without a change", []string{"keys", "update", "ci"}, ExitUsage,
			"llmrelay: keys update: nothing to change: give the flags of what changes (--scope, --model, --team, --budget, --expires, --rps, --burst, --max-streams, --metadata)\nRun 'llmrelay help keys update' for usage.\n"},
		{"help on a keys command that is not", []string{"help", "keys", "nope"}, ExitUsage,
			"llmrelay: help: keys has no command \"nope\"; its commands are create, list, get, update, revoke, usage, teams\nRun 'llmrelay help keys' for usage.\n"},
		{"check-config without a file", []string{"check-config"}, ExitUsage,
			"llmrelay: check-config: name the config FILE to check (or set $LLMRELAY_CONFIG)\nRun 'llmrelay help check-config' for usage.\n"},
		{"check-config with two files", []string{"check-config", "a.yaml", "b.yaml"}, ExitUsage,
			"llmrelay: check-config takes one FILE, not 2 arguments\nRun 'llmrelay help check-config' for usage.\n"},
		{"models with no time to wait", []string{"models", "--timeout", "0"}, ExitUsage,
			"llmrelay: models: --timeout 0s: give how long to wait for the server, e.g. 30s\nRun 'llmrelay help models' for usage.\n"},
		{"tools with a negative wait", []string{"tools", "--timeout", "-1s"}, ExitUsage,
			"llmrelay: tools: --timeout -1s: give how long to wait for the server, e.g. 30s\nRun 'llmrelay help tools' for usage.\n"},
		// A duration without its unit says so, as in the config file.
		{"a timeout without its unit", []string{"generate", "-m", "mock/echo", "--timeout", "5", "hi"}, ExitUsage,
			"llmrelay: generate: --timeout 5 has no unit; use a Go duration such as 30s or 1m30s (units ms, s, m, h)\nRun 'llmrelay help generate' for usage.\n"},
		{"a timeout that is not a duration", []string{"models", "--timeout", "soon"}, ExitUsage,
			"llmrelay: models: --timeout \"soon\" is not a duration; use a Go duration such as 30s or 1m30s (units ms, s, m, h)\nRun 'llmrelay help models' for usage.\n"},
		// A number or a boolean it cannot read names the value and what
		// the flag takes, where the flag package says "parse error".
		{"a negative count", []string{"embed", "-m", "mock/echo", "--dimensions", "-3", "hi"}, ExitUsage,
			"llmrelay: embed: --dimensions \"-3\" is negative\nRun 'llmrelay help embed' for usage.\n"},
		{"a count that is not a number", []string{"keys", "create", "ci", "--max-streams", "1.5"}, ExitUsage,
			"llmrelay: keys create: --max-streams \"1.5\" is not a whole number\nRun 'llmrelay help keys create' for usage.\n"},
		{"a count too large", []string{"keys", "create", "ci", "--burst", "99999999999999999999"}, ExitUsage,
			"llmrelay: keys create: --burst \"99999999999999999999\" is out of range\nRun 'llmrelay help keys create' for usage.\n"},
		{"a rate that is not a number", []string{"keys", "update", "ci", "--rps", "fast"}, ExitUsage,
			"llmrelay: keys update: --rps \"fast\" is not a number\nRun 'llmrelay help keys update' for usage.\n"},
		{"a boolean that is not", []string{"generate", "--json=maybe", "-m", "mock/echo", "hi"}, ExitUsage,
			"llmrelay: generate: --json \"maybe\" is not true or false\nRun 'llmrelay help generate' for usage.\n"},
		{"health with no time to wait", []string{"health", "--timeout", "0s"}, ExitUsage,
			"llmrelay: health: --timeout 0s: give how long to wait for the server, e.g. 30s\nRun 'llmrelay help health' for usage.\n"},
		{"a port for --listen", []string{"--listen", "50061"}, ExitFailed,
			"llmrelay: listen (from the command line): \"50061\" is a port without a host; use 127.0.0.1:50061 (this machine only) or 0.0.0.0:50061 (every interface)\n"},
		{"missing config file", []string{"--config", "/does/not/exist.yaml"}, ExitFailed,
			"llmrelay: config file /does/not/exist.yaml: no such file or directory\n"},
		{"a directory for the config file", []string{"--config", "/"}, ExitFailed,
			"llmrelay: config file /: is a directory\n"},
		{"check-config of a directory", []string{"check-config", "/"}, ExitFailed,
			"llmrelay: config file /: is a directory\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, tt.args, nil, "")
			if r.code != tt.wantCode || r.stderr != tt.want || r.stdout != "" {
				t.Errorf("llmrelay %s: exit %d, stdout %q, stderr:\n%s\nwant exit %d, no stdout, stderr:\n%s",
					strings.Join(tt.args, " "), r.code, r.stdout, r.stderr, tt.wantCode, tt.want)
			}
		})
	}
}

// TestServeTracingVariables: an OTEL_* value llmrelay does not support
// stops serve at start with a message naming the variable.
func TestServeTracingVariables(t *testing.T) {
	tests := []struct {
		name    string
		environ map[string]string
		want    string
	}{
		{"exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"},
			`llmrelay: OTEL_TRACES_EXPORTER="zipkin": unsupported: llmrelay exports traces with "otlp"; "none" turns them off` + "\n"},
		{"protocol", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			`llmrelay: OTEL_EXPORTER_OTLP_PROTOCOL="http/json": unsupported: use grpc or http/protobuf` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, []string{"--listen", "127.0.0.1:0", "--metrics-listen", "off"}, tt.environ, "")
			if r.code != ExitFailed || r.stderr != tt.want {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and:\n%s", r.code, r.stderr, ExitFailed, tt.want)
			}
		})
	}
}

// TestTwoDefaultServersSideBySide: two servers on the embedded default
// (what two `make run`s start) both serve: the second finds the default
// addresses taken, listens on free ports instead and says so; each answers
// health checks on the address it logged. An address someone chose is
// not replaced (TestAddressInUse).
func TestTwoDefaultServersSideBySide(t *testing.T) {
	start := func() (addr string, log *watchWriter) {
		ctx, cancel := context.WithCancel(t.Context())
		log = newWatchWriter("llmrelay serving")
		done := make(chan int, 1)
		go func() {
			done <- Run(ctx, nil, Env{Stdout: &bytes.Buffer{}, Stderr: log, Getenv: func(string) string { return "" }})
		}()
		t.Cleanup(func() {
			cancel()
			if code := <-done; code != ExitOK {
				t.Errorf("exit %d: %s", code, log)
			}
		})
		select {
		case <-log.seen:
		case code := <-done:
			done <- code
			t.Fatalf("exited %d before serving: %s", code, log)
		case <-time.After(60 * time.Second):
			t.Fatalf("not serving after a minute: %s", log)
		}
		m := regexp.MustCompile(`msg="llmrelay serving" listen=(\S+)`).FindStringSubmatch(log.String())
		if m == nil {
			t.Fatalf("no address in %s", log)
		}
		return m[1], log
	}
	first, _ := start()
	second, log := start()
	if first == second {
		t.Fatalf("both serve on %s", first)
	}
	for _, setting := range []string{"listen", "metrics_listen"} {
		if !strings.Contains(log.String(), "level=WARN msg=\""+setting+": the default address is in use") {
			t.Errorf("the second server did not say that it left the default %s:\n%s", setting, log)
		}
	}
	for _, addr := range []string{first, second} {
		r := runCLI(t.Context(), t, []string{"health", "--addr", addr}, nil, "")
		if r.code != ExitOK {
			t.Errorf("health of %s: exit %d, %s%s", addr, r.code, r.stdout, r.stderr)
		}
	}
}

// TestServeExitsWithinItsShutdownBudget: with a trace collector that
// accepts connections and never answers, serve still exits within the
// shutdown budget it logs ("at_most", what a kill timeout is planned
// from): exporting the last spans gave up after 5 s, past the budget.
func TestServeExitsWithinItsShutdownBudget(t *testing.T) {
	collector, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer collector.Close()
	go func() {
		var held []net.Conn // accepted, never answered
		for {
			c, err := collector.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	cfg := writeConfig(t, "listen: 127.0.0.1:0\nhttp_listen: \"\"\nmetrics_listen: \"\"\nshutdown_grace: 0s\n")
	environ := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + collector.Addr().String()}
	for k, v := range environ { // the OTLP exporter reads them itself
		t.Setenv(k, v)
	}
	ctx, stop := context.WithCancel(t.Context())
	log := newWatchWriter("llmrelay serving")
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"--config", cfg}, Env{Stdout: &bytes.Buffer{}, Stderr: log, Getenv: func(k string) string { return environ[k] }, BuildInfo: fakeBuild})
	}()
	select {
	case <-log.seen:
	case code := <-done:
		t.Fatalf("exited %d before serving: %s", code, log)
	}
	addr := regexp.MustCompile(`msg="llmrelay serving" listen=(\S+)`).FindStringSubmatch(log.String())[1]
	if r := runCLI(t.Context(), t, []string{"generate", "--addr", addr, "-m", "mock/echo", "hi"}, nil, ""); r.code != ExitOK {
		t.Fatalf("generate: exit %d: %s", r.code, r.stderr)
	}
	start := time.Now()
	stop()
	code := <-done
	took := time.Since(start)
	m := regexp.MustCompile(`at_most=(\S+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no at_most in the log:\n%s", log)
	}
	budget, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if code != ExitOK || took > budget {
		t.Fatalf("exit %d %v after the stop, budget (at_most) %v:\n%s", code, took.Round(time.Millisecond), budget, log)
	}
	if !strings.Contains(log.String(), "exporting the last spans") {
		t.Errorf("the unanswered export was not logged:\n%s", log)
	}
}
