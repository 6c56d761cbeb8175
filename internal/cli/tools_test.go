package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/freeport"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/servertools"
	"github.com/llmrelay/llmrelay/internal/servertools/mcptest"
)

// toolsRelay starts a real llmrelay on a free loopback port with the mock
// provider and two MCP servers: a real @modelcontextprotocol/server-everything
// (everything: echo and trigger-long-running-operation) and one that is
// down (down); its one key (testKey) may use the tools keyTools names.
func toolsRelay(t *testing.T, keyTools []string) string {
	t.Helper()
	e := mcptest.StartEverything(t)
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = config.DefaultProviders()
	cfg.Tools.MCPServers = []servertools.ServerConfig{
		{Name: "everything", URL: e.URL, Allow: []string{"echo", "trigger-long-running-operation"}, Timeout: 2 * time.Minute},
		{Name: "down", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", freeport.For(t)), Allow: []string{"*"}},
	}
	cfg.Auth.Keys = []config.APIKey{{Name: "cli", SHA256: auth.HashKey(testKey),
		Scopes: []string{"generate", "models.list"}, Models: []string{"mock/*"}, Tools: keyTools}}
	addr, _ := servertest.Listen(t, cfg)
	return addr
}

// TestTools: llmrelay tools lists the tools the key may use, with their
// availability and description, names the MCP servers that are down, and
// prints the response as JSON with --json; a --server it does not have
// exits 1, naming those it has.
func TestTools(t *testing.T) {
	addr := toolsRelay(t, []string{"everything/echo", "down/*"})
	env := map[string]string{EnvAddr: addr, EnvAPIKey: testKey}

	r := runCLI(t.Context(), t, []string{"tools"}, env, "")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := "TOOL             AVAILABLE  DESCRIPTION\n" +
		"everything/echo  yes        Echoes back the input string\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant (only the tool the key may use):\n%s", r.stdout, want)
	}
	if want := "llmrelay: MCP server down is not answering: its tools cannot be offered until it does\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}

	r = runCLI(t.Context(), t, []string{"tools", "--json", "--server", "everything"}, env, "")
	if r.code != ExitOK {
		t.Fatalf("--json: exit %d: %s", r.code, r.stderr)
	}
	var resp struct {
		Tools []struct {
			Name, ModelName string
			Available       bool
			InputSchema     map[string]any
		}
		Servers []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
		t.Fatalf("--json printed no JSON: %v\n%s", err, r.stdout)
	}
	if strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("--json printed the response over several lines, want one:\n%s", r.stdout)
	}
	if len(resp.Tools) != 1 || resp.Tools[0].ModelName != "everything__echo" || !resp.Tools[0].Available || resp.Tools[0].InputSchema["type"] != "object" ||
		len(resp.Servers) != 1 || resp.Servers[0].Name != "everything" {
		t.Errorf("--json --server everything: %+v", resp)
	}

	// A server it does not have is an error naming those it has (it said
	// the server had no MCP servers at all, and exited 0).
	for _, args := range [][]string{{"tools", "--server", "nope"}, {"tools", "--server", "nope", "--json"}} {
		r = runCLI(t.Context(), t, args, env, "")
		want := "llmrelay: tools: " + addr + " has no MCP server \"nope\" the key may use; those the key may use are down, everything\n"
		if r.code != ExitFailed || r.stdout != "" || r.stderr != want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1, stderr %q", strings.Join(args, " "), r.code, r.stdout, r.stderr, want)
		}
	}

	r = runCLI(t.Context(), t, []string{"tools", "--key", "wrong"}, env, "")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "UNAUTHENTICATED") {
		t.Errorf("a wrong key: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCLI(t.Context(), t, []string{"tools", "extra"}, env, ""); r.code != ExitUsage {
		t.Errorf("a stray argument: exit %d, want %d", r.code, ExitUsage)
	}
}

// TestToolsShowsOnlyTheKeysServers: an MCP server none of whose tools the
// key may use is not shown, neither as down on stderr nor by --server; a
// key that may use no tool sees none.
func TestToolsShowsOnlyTheKeysServers(t *testing.T) {
	addr := toolsRelay(t, []string{"everything/echo"})
	env := map[string]string{EnvAddr: addr, EnvAPIKey: testKey}
	r := runCLI(t.Context(), t, []string{"tools"}, env, "")
	want := "TOOL             AVAILABLE  DESCRIPTION\n" +
		"everything/echo  yes        Echoes back the input string\n"
	if r.code != ExitOK || r.stdout != want || r.stderr != "" {
		t.Errorf("exit %d, stdout:\n%s\nstderr %q; want exit 0, no word of the server down, stdout:\n%s", r.code, r.stdout, r.stderr, want)
	}
	r = runCLI(t.Context(), t, []string{"tools", "--server", "down"}, env, "")
	if want := "llmrelay: tools: " + addr + " has no MCP server \"down\" the key may use; those the key may use are everything\n"; r.code != ExitFailed || r.stderr != want {
		t.Errorf("--server down: exit %d, stderr %q; want exit 1, stderr %q", r.code, r.stderr, want)
	}

	addr = toolsRelay(t, nil)
	env = map[string]string{EnvAddr: addr, EnvAPIKey: testKey}
	r = runCLI(t.Context(), t, []string{"tools"}, env, "")
	if want := "llmrelay: no server tools: the server has no MCP servers (tools.mcp_servers in its config), or none with a tool the key may use (its tools patterns)\n"; r.code != ExitOK || r.stdout != "" || r.stderr != want {
		t.Errorf("a key without tools: exit %d, stdout %q, stderr %q; want exit 0, stderr %q", r.code, r.stdout, r.stderr, want)
	}
}

// TestGenerateServerTools: generate --server-tools offers the tools; the
// tools' progress and results are notices on stderr, each turn's text
// starts on a new line, and a retry in the second turn takes back only
// that turn's text; control characters of a tool's result do not reach
// the terminal in its notice. --json prints the tool events.
func TestGenerateServerTools(t *testing.T) {
	addr := toolsRelay(t, []string{"everything/*"})
	env := map[string]string{EnvAddr: addr, EnvAPIKey: testKey}
	// Turn 1 (attempt 1) says a few words and calls echo; turn 2's first
	// attempt (2) drops after its first word; attempt 3 answers.
	options := `{"script": [{"text": "Let me ask. ", "tool_calls": [{"name": "everything__echo", "arguments": {"message": "hello"}}]}],
		"faults": [{}, {"drop_after": 1}, {}]}`
	r := runCLI(t.Context(), t, []string{"generate", "-m", "mock/echo", "--server-tools", "everything/echo", "--provider-options", options, "say hello"}, env, "")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if want := "Let me ask. \nEcho: \nEcho: hello\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	for _, want := range []string{
		"llmrelay: tool everything/echo (mock_1_0) returned: Echo: hello\n",
		"attempt 3 in ", "; discard the 6 characters above: turn 2's reply starts over\n",
		"llmrelay: mock/echo, stop, ", ", 3 attempts, 2 turns\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}

	// What the tool returned is the MCP server's: its escapes and carriage
	// returns do not reach the terminal in the notice.
	odd := `{"script": [{"tool_calls": [{"name": "everything__echo", "arguments": {"message": "\u001b]0;pwned\u0007\u001b[2Jred\rover\tx"}}]}]}`
	r = runCLI(t.Context(), t, []string{"generate", "-m", "mock/echo", "--server-tools", "everything/echo", "--provider-options", odd, "say it"}, env, "")
	if r.code != ExitOK {
		t.Fatalf("odd content: exit %d: %s", r.code, r.stderr)
	}
	if want := "llmrelay: tool everything/echo (mock_1_0) returned: Echo: \ufffd]0;pwned\ufffd\ufffd[2Jred\ufffdover x\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("odd content: stderr lacks %q:\n%q", want, r.stderr)
	}

	progress := `{"script": [{"tool_calls": [{"name": "everything__trigger-long-running-operation", "arguments": {"duration": 1, "steps": 2}}]}]}`
	r = runCLI(t.Context(), t, []string{"generate", "-m", "mock/echo", "--server-tools", "everything/*", "--provider-options", progress, "run it"}, env, "")
	if r.code != ExitOK {
		t.Fatalf("progress: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"llmrelay: tool everything/trigger-long-running-operation (mock_1_0) is running: 1/2\n",
		"llmrelay: tool everything/trigger-long-running-operation (mock_1_0) is running: 2/2\n",
		"llmrelay: tool everything/trigger-long-running-operation (mock_1_0) returned: Long running operation completed.",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress: stderr lacks %q:\n%s", want, r.stderr)
		}
	}

	r = runCLI(t.Context(), t, []string{"generate", "--json", "-m", "mock/echo", "--server-tools", "everything/*", "--provider-options", progress, "run it"}, env, "")
	if r.code != ExitOK {
		t.Fatalf("--json: exit %d: %s", r.code, r.stderr)
	}
	var kinds []string
	for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		for _, k := range []string{"toolProgress", "toolResult", "final"} {
			if _, ok := ev[k]; ok {
				kinds = append(kinds, fmt.Sprintf("%s t%v", k, ev["turn"]))
			}
		}
	}
	if want := []string{"toolProgress t1", "toolProgress t1", "toolResult t1", "final t2"}; !slices.Equal(kinds, want) {
		t.Errorf("--json events %q, want %q", kinds, want)
	}

	r = runCLI(t.Context(), t, []string{"generate", "-m", "mock/echo", "--server-tools", "down/echo", "hi"}, env, "")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "PERMISSION_DENIED SERVER_TOOL_NOT_PERMITTED") {
		t.Errorf("a tool the key may not use: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestToolDescriptionsArePrintable: a tool description an MCP server wrote
// reaches the table as text: no escape retitles or clears the terminal,
// no carriage return overwrites the row.
func TestToolDescriptionsArePrintable(t *testing.T) {
	for in, want := range map[string]string{
		"Echoes back\nthe input":           "Echoes back …",
		"a\x1b]0;owned\x07b":               "a\uFFFD]0;owned\uFFFDb",
		"cleared\x1b[2J\rfirst\tcolumn\nx": "cleared\uFFFD[2J\uFFFDfirst column …",
	} {
		if got := firstLine(in); got != want {
			t.Errorf("firstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
