package cli

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/spend"
)

// modelHintLine is what a client command adds to a model the server does
// not know.
const modelHintLine = "\n  llmrelay models lists the models this server offers; a server gets a provider (openai, anthropic, gemini) from its config file: docs/providers.md\n"

// testKey is the API key of the server relay starts.
const testKey = "cli-test-key"

// relay starts a real llmrelay on a free loopback port, with the mock
// provider and, when keyed, one key (testKey) that may use it, and returns
// its address.
func relay(t *testing.T, keyed bool) string {
	t.Helper()
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = config.DefaultProviders()
	if keyed {
		cfg.Auth.Keys = []config.APIKey{{Name: "cli", SHA256: auth.HashKey(testKey),
			Scopes: []string{"generate", "models.list"}, Models: []string{"mock/*"}}}
	}
	addr, _ := servertest.Listen(t, cfg)
	return addr
}

func TestGenerate(t *testing.T) {
	addr := relay(t, false)
	env := map[string]string{EnvAddr: addr}
	tests := []struct {
		name       string
		args       []string
		stdin      string
		env        map[string]string
		code       int
		stdout     string
		stderrHave []string
	}{
		{name: "the reply streams to stdout, the usage to stderr",
			args: []string{"generate", "-m", "mock/echo", "hello", "brave new world"}, env: env,
			stdout:     "hello brave new world\n",
			stderrHave: []string{"llmrelay: mock/echo, stop, 4 input and 4 output tokens, 1 attempt\n"}},
		{name: "--addr wins over $LLMRELAY_ADDR",
			args: []string{"generate", "--addr", addr, "--model", "mock/echo", "hi"}, env: map[string]string{EnvAddr: "127.0.0.1:1"},
			stdout: "hi\n"},
		{name: "the prompt from stdin",
			args: []string{"generate", "-m", "mock/echo"}, stdin: "from stdin\n", env: env,
			stdout: "from stdin\n"},
		{name: "a retry that starts the reply over says so on stderr",
			args: []string{"generate", "-m", "mock/echo", "--provider-options", `{"faults": [{"drop_after": 2}]}`,
				"the quick brown fox"}, env: env,
			// The first attempt's text, cut off; then the whole reply.
			stdout: "the quick \nthe quick brown fox\n",
			stderrHave: []string{"llmrelay: attempt 1 failed (TRANSPORT PROVIDER_TRANSPORT_ERROR); attempt 2 in ",
				"on mock/echo; discard the 10 characters above: the reply starts over\n",
				"mock/echo, stop, 4 input and 4 output tokens, 2 attempts\n"}},
		{name: "an unknown provider: the code, the reason, the message and where the models are",
			args: []string{"generate", "-m", "openai/gpt-4o-mini", "hi"}, env: env, code: ExitFailed,
			stderrHave: []string{"llmrelay: " + addr + ": INVALID_ARGUMENT UNKNOWN_PROVIDER: model: unknown provider \"openai\"", "\n  request id ",
				modelHintLine}},
		{name: "a model that is no route: where the models are",
			args: []string{"generate", "-m", "gpt-4o-mini", "hi"}, env: env, code: ExitFailed,
			stderrHave: []string{"INVALID_ARGUMENT UNKNOWN_MODEL: ", modelHintLine}},
		{name: "a request breaking a field rule lists the field",
			args: []string{"generate", "-m", "mock/echo", "--provider-options", `{"faults": [{"status": "x"}]}`, "hi"}, env: env, code: ExitFailed,
			stderrHave: []string{"INVALID_ARGUMENT", "provider_options.faults[0].status"}},
		{name: "a deadline",
			args: []string{"generate", "-m", "mock/echo", "--timeout", "300ms", "--provider-options", `{"faults": [{"first_delay_ms": 60000}]}`, "hi"}, env: env, code: ExitFailed,
			stderrHave: []string{"DEADLINE_EXCEEDED"}},
		{name: "no model", args: []string{"generate", "hi"}, env: env, code: ExitUsage,
			stderrHave: []string{"generate: -m MODEL is required"}},
		{name: "a negative timeout", args: []string{"generate", "-m", "mock/echo", "--timeout", "-1s", "hi"}, env: env, code: ExitUsage,
			stderrHave: []string{"generate: --timeout -1s is negative"}},
		{name: "no prompt", args: []string{"generate", "-m", "mock/echo"}, env: env, code: ExitUsage,
			stderrHave: []string{"generate: no PROMPT given"}},
		{name: "--tls and --plaintext", args: []string{"generate", "--tls", "--plaintext", "-m", "mock/echo", "hi"}, env: env, code: ExitUsage,
			stderrHave: []string{"--tls and --plaintext both given"}},
		{name: "bad provider options", args: []string{"generate", "-m", "mock/echo", "--provider-options", "[1]", "hi"}, env: env, code: ExitUsage,
			stderrHave: []string{"--provider-options is not a JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, tt.args, tt.env, tt.stdin)
			if r.code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			if tt.code == ExitOK && r.stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, tt.stdout)
			}
			for _, s := range tt.stderrHave {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
		})
	}
}

func TestGenerateJSONPrintsEveryEvent(t *testing.T) {
	addr := relay(t, false)
	r := runCLI(t.Context(), t, []string{"generate", "--json", "-m", "mock/echo", "--provider-options", `{"faults": [{"drop_after": 1}]}`, "one two"},
		map[string]string{EnvAddr: addr}, "")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var kinds []string
	for i, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d is not JSON: %q", i+1, line)
		}
		for _, k := range []string{"delta", "willRetry", "final"} {
			if _, ok := ev[k]; ok {
				kinds = append(kinds, k)
			}
		}
	}
	if got, want := strings.Join(kinds, " "), "delta willRetry delta delta final"; got != want {
		t.Errorf("events %q, want %q:\n%s", got, want, r.stdout)
	}
}

func TestClientCommandsSendTheKey(t *testing.T) {
	addr := relay(t, true)
	r := runCLI(t.Context(), t, []string{"generate", "-m", "mock/echo", "hi"}, map[string]string{EnvAddr: addr}, "")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "UNAUTHENTICATED CREDENTIALS_MISSING") {
		t.Errorf("without a key: exit %d, stderr %q; want UNAUTHENTICATED CREDENTIALS_MISSING", r.code, r.stderr)
	}
	// The server's words name a header; the command says how to send one.
	if want := "\n  this server has API keys: give one with --key KEY or $LLMRELAY_API_KEY\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("without a key: stderr lacks %q:\n%s", want, r.stderr)
	}
	for _, env := range []map[string]string{
		{EnvAddr: addr, EnvAPIKey: testKey},
	} {
		if r := runCLI(t.Context(), t, []string{"generate", "-m", "mock/echo", "hi"}, env, ""); r.code != ExitOK || r.stdout != "hi\n" {
			t.Errorf("$%s: exit %d, stdout %q, stderr %q", EnvAPIKey, r.code, r.stdout, r.stderr)
		}
	}
	if r := runCLI(t.Context(), t, []string{"models", "--key", testKey}, map[string]string{EnvAddr: addr}, ""); r.code != ExitOK ||
		!strings.HasPrefix(r.stdout, "MODEL") || !strings.Contains(r.stdout, "\nmock/echo ") {
		t.Errorf("models --key: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestModelsJSON(t *testing.T) {
	addr := relay(t, false)
	r := runCLI(t.Context(), t, []string{"models", "--json", "--addr", addr}, nil, "")
	var resp struct {
		Models []struct{ ID string } `json:"models"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &resp); r.code != ExitOK || err != nil {
		t.Fatalf("exit %d, %v: %s %s", r.code, err, r.stdout, r.stderr)
	}
	var ids []string
	for _, m := range resp.Models {
		ids = append(ids, m.ID)
	}
	if got := strings.Join(ids, " "); !strings.Contains(got, "mock/echo") {
		t.Errorf("models %q lack mock/echo", got)
	}
}

// TestJSONIsOneDocumentALine: every --json output is JSON one document a
// line, as jq and line-reading scripts take it: generate's events, embed's
// and models' responses (models printed indented JSON over many lines).
func TestJSONIsOneDocumentALine(t *testing.T) {
	addr := relay(t, false)
	tests := []struct {
		name  string
		args  []string
		lines int
	}{
		{"generate: one event a line", []string{"generate", "--json", "-m", "mock/echo", "one two"}, 3},
		{"embed: the response", []string{"embed", "--json", "-m", "mock/echo", "one", "two"}, 1},
		{"models: the response", []string{"models", "--json"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, tt.args, map[string]string{EnvAddr: addr}, "")
			if r.code != ExitOK {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			if len(lines) != tt.lines {
				t.Errorf("%d lines, want %d:\n%s", len(lines), tt.lines, r.stdout)
			}
			for _, line := range lines {
				if !json.Valid([]byte(line)) || !strings.HasPrefix(line, "{") {
					t.Errorf("line %q is not a JSON object", line)
				}
			}
		})
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:50051": true, "localhost:1": true, "[::1]:50051": true, "dns:///localhost:1": true,
		"relay.example.com:443": false, "10.0.0.1:50051": false, "relay": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestGenerateOverBudgetSaysWhenToCallAgain: a key whose daily budget the
// day's calls used up is refused until the day's end, and the command
// says in how long as a person reads it: to the second (the millisecond
// in the day's last minute), not RetryInfo's nanoseconds. Each call
// reserves 5 output tokens, so that one fits an empty day: a reservation
// no day can hold is not told to wait.
func TestGenerateOverBudgetSaysWhenToCallAgain(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = config.DefaultProviders()
	cfg.Governance.DefaultOutputTokens = 5
	cfg.Auth.Keys = []config.APIKey{{Name: "cli", SHA256: auth.HashKey(testKey),
		Scopes: []string{"generate"}, Models: []string{"mock/*"},
		Budgets: []spend.Budget{{Window: spend.Day, MaxTokens: 20}}}}
	addr, _ := servertest.Listen(t, cfg)
	var r result
	for range 10 {
		r = runCLI(t.Context(), t, []string{"generate", "-m", "mock/echo", "hello there"}, map[string]string{EnvAddr: addr, EnvAPIKey: testKey}, "")
		if r.code != ExitOK {
			break
		}
	}
	if r.code != ExitFailed || !strings.Contains(r.stderr, "RESOURCE_EXHAUSTED BUDGET_EXHAUSTED") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 1, RESOURCE_EXHAUSTED BUDGET_EXHAUSTED", r.code, r.stderr)
	}
	if !regexp.MustCompile(`\n  the server suggests calling again in ((\d+h)?(\d+m)?\d+(\.\d{1,3})?s|\d+ms)\n`).MatchString(r.stderr) {
		t.Errorf("stderr does not say to the second when to call again:\n%s", r.stderr)
	}
}

func TestWaitFor(t *testing.T) {
	tests := []struct {
		in, want time.Duration
	}{
		{700 * time.Millisecond, 700 * time.Millisecond},
		{1234567 * time.Microsecond, 1235 * time.Millisecond},
		{2*time.Hour + 26*time.Minute + 39989440098*time.Nanosecond, 2*time.Hour + 26*time.Minute + 40*time.Second},
		{time.Minute, time.Minute},
		{0, 0},
	}
	for _, tt := range tests {
		if got := waitFor(tt.in); got != tt.want {
			t.Errorf("waitFor(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// cutOnFirstWrite is a stdout that cuts the proxy's connections once the
// reply has begun to arrive.
type cutOnFirstWrite struct {
	bytes.Buffer
	proxy *servertest.Proxy
	once  sync.Once
}

func (w *cutOnFirstWrite) Write(p []byte) (int, error) {
	w.once.Do(w.proxy.Cut)
	return w.Buffer.Write(p)
}

// TestGenerateResumableSurvivesADrop: a resumable call whose connection
// drops in the middle of the reply is picked up where it stopped, with a
// notice on stderr, and stdout holds the reply exactly as the model wrote
// it, with no line break where the connection dropped, so that
// `llmrelay generate --resumable ... > answer.txt` keeps the answer whole.
func TestGenerateResumableSurvivesADrop(t *testing.T) {
	proxy := servertest.StartProxy(t, relay(t, false))
	out := &cutOnFirstWrite{proxy: proxy}
	var errOut bytes.Buffer
	code := Run(t.Context(), []string{"generate", "--addr", proxy.Addr(), "--resumable", "-m", "mock/echo",
		// The words after the first come 100ms apart: the connection
		// drops before the rest of the reply has been sent.
		"--provider-options", `{"chunk_delay_ms": 100}`, "one two three four five"}, Env{
		Stdin: strings.NewReader(""), Stdout: out, Stderr: &errOut,
		Getenv: func(string) string { return "" }, BuildInfo: fakeBuild,
	})
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut.String())
	}
	if got, want := out.String(), "one two three four five\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	// The notice starts its own line on stderr: on a terminal it reads as
	// it would had stdout ended the line.
	if !strings.HasPrefix(errOut.String(), "\nllmrelay: the connection dropped (") || !strings.Contains(errOut.String(), "); resuming after event ") {
		t.Errorf("stderr does not begin with the resume notice on a line of its own:\n%q", errOut.String())
	}
	if !strings.HasSuffix(errOut.String(), "llmrelay: mock/echo, stop, 5 input and 5 output tokens, 1 attempt\n") {
		t.Errorf("stderr does not end with the usage:\n%s", errOut.String())
	}
}
