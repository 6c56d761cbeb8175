package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// vectors parses embed's stdout: one JSON array of numbers a line.
func vectors(t *testing.T, stdout string) [][]float64 {
	t.Helper()
	var out [][]float64
	for i, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var v []float64
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %d is not a JSON array of numbers: %q", i+1, line)
		}
		out = append(out, v)
	}
	return out
}

// TestEmbed: llmrelay embed prints one vector per text, in order, one a
// line, and what answered on stderr; the texts come from the arguments or
// from stdin's lines; errors are worded as generate's are.
func TestEmbed(t *testing.T) {
	addr := relay(t, false)
	env := map[string]string{EnvAddr: addr}
	tests := []struct {
		name       string
		args       []string
		stdin      string
		code       int
		vectors    int // how many lines of stdout
		values     int // in each
		stderrHave []string
	}{
		{name: "each argument is a text: a vector each, the usage on stderr",
			args: []string{"embed", "-m", "mock/echo", "the cat sat", "a dog"}, vectors: 2, values: 8,
			stderrHave: []string{"llmrelay: mock/echo, 2 embeddings of 8 values, 5 input tokens, 1 attempt\n"}},
		{name: "each line of stdin is a text, CRLF or not",
			args: []string{"embed", "--model", "mock/echo"}, stdin: "the cat sat\r\na dog\nfish\n", vectors: 3, values: 8,
			stderrHave: []string{"3 embeddings of 8 values"}},
		{name: "- reads stdin; a last line without a newline counts",
			args: []string{"embed", "-m", "mock/echo", "-"}, stdin: "one\ntwo", vectors: 2, values: 8},
		{name: "--dimensions",
			args: []string{"embed", "-m", "mock/echo", "--dimensions", "3", "hi"}, vectors: 1, values: 3,
			stderrHave: []string{"llmrelay: mock/echo, 1 embedding of 3 values, 1 input token, 1 attempt\n"}},
		{name: "a retried call says how many attempts it took",
			args: []string{"embed", "-m", "mock/echo", "--provider-options", `{"faults": [{"status": 503}]}`, "hi"}, vectors: 1, values: 8,
			stderrHave: []string{", 2 attempts\n"}},
		{name: "an unknown provider: the code, the reason and the message",
			args: []string{"embed", "-m", "nope/x", "hi"}, code: ExitFailed,
			stderrHave: []string{"llmrelay: " + addr + ": INVALID_ARGUMENT UNKNOWN_PROVIDER: model: unknown provider \"nope\"", "\n  request id ", modelHintLine}},
		{name: "a provider that rejects the request",
			args: []string{"embed", "-m", "mock/echo", "--provider-options", `{"faults": [{"status": 400}]}`, "hi"}, code: ExitFailed,
			stderrHave: []string{"INVALID_ARGUMENT PROVIDER_REJECTED"}},
		{name: "no model", args: []string{"embed", "hi"}, code: ExitUsage,
			stderrHave: []string{"embed: -m MODEL is required", "Run 'llmrelay help embed' for usage."}},
		{name: "no text", args: []string{"embed", "-m", "mock/echo"}, code: ExitUsage,
			stderrHave: []string{"embed: no TEXT given (as arguments or as lines of stdin)"}},
		{name: "an empty line: the vectors would no longer match the lines",
			args: []string{"embed", "-m", "mock/echo"}, stdin: "one\n\ntwo\n", code: ExitUsage,
			stderrHave: []string{"embed: stdin line 2 is empty"}},
		{name: "an empty argument", args: []string{"embed", "-m", "mock/echo", "one", ""}, code: ExitUsage,
			stderrHave: []string{"embed: TEXT 2 is empty"}},
		{name: "too many dimensions", args: []string{"embed", "-m", "mock/echo", "--dimensions", "70000", "hi"}, code: ExitUsage,
			stderrHave: []string{"embed: --dimensions 70000 is more than 65536"}},
		{name: "zero dimensions: not the model's length, which leaving it out asks for",
			args: []string{"embed", "-m", "mock/echo", "--dimensions", "0", "hi"}, code: ExitUsage,
			stderrHave: []string{"embed: --dimensions 0 is not a length: give 1 to 65536, or leave it out for the model's own"}},
		{name: "a negative timeout", args: []string{"embed", "-m", "mock/echo", "--timeout", "-1s", "hi"}, code: ExitUsage,
			stderrHave: []string{"embed: --timeout -1s is negative"}},
		{name: "bad provider options", args: []string{"embed", "-m", "mock/echo", "--provider-options", "[1]", "hi"}, code: ExitUsage,
			stderrHave: []string{"--provider-options is not a JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, tt.args, env, tt.stdin)
			if r.code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			for _, s := range tt.stderrHave {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if tt.code != ExitOK {
				if r.stdout != "" {
					t.Errorf("a failed call printed %q on stdout", r.stdout)
				}
				return
			}
			vs := vectors(t, r.stdout)
			if len(vs) != tt.vectors {
				t.Fatalf("%d vectors, want %d:\n%s", len(vs), tt.vectors, r.stdout)
			}
			for i, v := range vs {
				norm := 0.0
				for _, x := range v {
					norm += x * x
				}
				// The mock's vectors are unit length: the values came through whole.
				if len(v) != tt.values || math.Abs(norm-1) > 1e-5 {
					t.Errorf("vector %d: %d values of norm %v, want %d of norm 1", i, len(v), norm, tt.values)
				}
			}
		})
	}
}

// TestEmbedKeepsTheOrder: the vector on line i is input i's, wherever the
// texts came from, and --json prints the whole response.
func TestEmbedKeepsTheOrder(t *testing.T) {
	addr := relay(t, false)
	env := map[string]string{EnvAddr: addr}
	one := runCLI(t.Context(), t, []string{"embed", "-m", "mock/echo", "a dog"}, env, "")
	both := runCLI(t.Context(), t, []string{"embed", "-m", "mock/echo"}, env, "the cat sat\na dog\n")
	if one.code != ExitOK || both.code != ExitOK {
		t.Fatalf("exit %d and %d: %s %s", one.code, both.code, one.stderr, both.stderr)
	}
	lines := strings.Split(both.stdout, "\n")
	if lines[1]+"\n" != one.stdout || lines[0] == lines[1] {
		t.Errorf("line 2 of the two texts' output is not the vector of the second text alone:\n%s\nvs\n%s", both.stdout, one.stdout)
	}

	r := runCLI(t.Context(), t, []string{"embed", "--json", "-m", "mock/echo", "--dimensions", "4", "the cat sat", "a dog"}, env, "")
	var resp struct {
		Embeddings []struct{ Values []float64 }
		Provider   string
		Model      string
		Usage      struct{ InputTokens string }
		Attempts   int
	}
	if err := json.Unmarshal([]byte(r.stdout), &resp); r.code != ExitOK || err != nil || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("--json: exit %d, %v: %q %s", r.code, err, r.stdout, r.stderr)
	}
	if len(resp.Embeddings) != 2 || len(resp.Embeddings[1].Values) != 4 || resp.Provider != "mock" || resp.Model != "echo" ||
		resp.Usage.InputTokens != "5" || resp.Attempts != 1 {
		t.Errorf("--json: %+v", resp)
	}
	if r.stderr != "" {
		t.Errorf("--json printed %q on stderr", r.stderr)
	}
}
