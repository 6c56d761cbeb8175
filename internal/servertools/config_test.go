package servertools

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// problems is a setting.Problems that hands every problem to a func.
type problems func(path, format string, args ...any)

func (f problems) Bad(path, format string, args ...any) { f(path, format, args...) }
func (f problems) Between(path, _, format string, args ...any) {
	f(path, format, args...)
}

func TestCheck(t *testing.T) {
	good := ServerConfig{Name: "everything", URL: "http://127.0.0.1:3001/mcp", Allow: []string{"*"}, HeadersEnv: map[string]string{"Authorization": "EVERYTHING_AUTH"}}
	for _, tc := range []struct {
		name  string
		edit  func(c *Config)
		paths []string
	}{
		{"the issue's example", func(c *Config) {}, nil},
		{"no servers", func(c *Config) { c.MCPServers = nil }, nil},
		{"no name", func(c *Config) { c.MCPServers[0].Name = "" }, []string{"mcp_servers[0].name"}},
		{"a name with __", func(c *Config) { c.MCPServers[0].Name = "a__b" }, []string{"mcp_servers[0].name"}},
		{"a name with /", func(c *Config) { c.MCPServers[0].Name = "a/b" }, []string{"mcp_servers[0].name"}},
		{"a name starting with a digit", func(c *Config) { c.MCPServers[0].Name = "1x" }, []string{"mcp_servers[0].name"}},
		{"twice", func(c *Config) { c.MCPServers = append(c.MCPServers, c.MCPServers[0]) }, []string{"mcp_servers[1].name"}},
		{"no url", func(c *Config) { c.MCPServers[0].URL = "" }, []string{"mcp_servers[0].url"}},
		{"not http", func(c *Config) { c.MCPServers[0].URL = "stdio:///usr/bin/x" }, []string{"mcp_servers[0].url"}},
		{"credentials in the url", func(c *Config) { c.MCPServers[0].URL = "https://u:p@h/mcp" }, []string{"mcp_servers[0].url"}},
		{"a reserved header", func(c *Config) { c.MCPServers[0].HeadersEnv = map[string]string{"mcp-session-id": "X"} }, []string{"mcp_servers[0].headers_env.mcp-session-id"}},
		{"a bad variable", func(c *Config) { c.MCPServers[0].HeadersEnv = map[string]string{"X-Key": "1X"} }, []string{"mcp_servers[0].headers_env.X-Key"}},
		{"no allow", func(c *Config) { c.MCPServers[0].Allow = nil }, []string{"mcp_servers[0].allow"}},
		{"an empty pattern", func(c *Config) { c.MCPServers[0].Idempotent = []string{"echo", ""} }, []string{"mcp_servers[0].idempotent[1]"}},
		{"a negative timeout", func(c *Config) { c.MCPServers[0].Timeout = -time.Second }, []string{"mcp_servers[0].timeout"}},
		{"too many attempts", func(c *Config) { c.MCPServers[0].MaxAttempts = 11 }, []string{"mcp_servers[0].max_attempts"}},
		{"answers of up to 1 GiB", func(c *Config) { c.MCPServers[0].MaxResponseBytes = 1 << 30 }, nil},
		{"answers smaller than a result", func(c *Config) { c.MCPServers[0].MaxResponseBytes = 1000 }, []string{"mcp_servers[0].max_response_bytes"}},
		{"answers past 1 GiB", func(c *Config) { c.MCPServers[0].MaxResponseBytes = 1<<30 + 1 }, []string{"mcp_servers[0].max_response_bytes"}},
		{"negative answers", func(c *Config) { c.MCPServers[0].MaxResponseBytes = -1 }, []string{"mcp_servers[0].max_response_bytes"}},
		{"turns above the limit", func(c *Config) { c.MaxToolTurns = 40 }, []string{"max_tool_turns"}},
		{"no turns", func(c *Config) { c.MaxToolTurns = 0 }, []string{"max_tool_turns"}},
		{"results past a message's bound", func(c *Config) { c.MaxResultBytes = 2 << 20 }, []string{"max_tool_result_bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.MCPServers = []ServerConfig{good}
			tc.edit(&c)
			var paths []string
			c.Check(problems(func(path, format string, args ...any) {
				paths = append(paths, path)
				if msg := fmt.Sprintf(format, args...); strings.Contains(msg, "u:p@") {
					t.Errorf("%s: the message repeats the URL's credentials: %s", path, msg)
				}
			}))
			if !slices.Equal(paths, tc.paths) {
				t.Fatalf("problems at %v, want %v", paths, tc.paths)
			}
		})
	}
}

func TestPrepareReadsHeadersFromTheEnvironment(t *testing.T) {
	c := DefaultConfig()
	c.MCPServers = []ServerConfig{{Name: "s", URL: "http://127.0.0.1:1/mcp", Allow: []string{"*"}, HeadersEnv: map[string]string{"Authorization": "S_AUTH"}}}
	env := map[string]string{"S_AUTH": "Bearer secret-value"}
	p, err := Prepare(c, Scopes{}, func(k string) string { return env[k] })
	if err != nil || p.headers["s"].Get("Authorization") != "Bearer secret-value" {
		t.Fatalf("Prepare = %+v, %v", p, err)
	}
	// A secret file's newline is dropped: net/http refused the header, and
	// the server never connected.
	env["S_AUTH"] = "Bearer secret-value\n"
	if p, err = Prepare(c, Scopes{}, func(k string) string { return env[k] }); err != nil || p.headers["s"].Get("Authorization") != "Bearer secret-value" {
		t.Fatalf("Prepare with a trailing newline = %+v, %v", p, err)
	}
	for _, v := range []string{"", "Bearer secret-value\r\nX-Injected: 1"} {
		env["S_AUTH"] = v
		_, err = Prepare(c, Scopes{}, func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), "S_AUTH") || strings.Contains(err.Error(), "secret-value") {
			t.Fatalf("Prepare with S_AUTH=%q: %v", v, err)
		}
	}
}

func TestModelNames(t *testing.T) {
	for _, tc := range []struct{ server, tool, want string }{
		{"everything", "echo", "everything__echo"},
		{"everything", "trigger-long-running-operation", "everything__trigger-long-running-operation"},
		{"fs", "read.file/v2", "fs__read_file_v2"},
	} {
		if got := baseModelName(tc.server, tc.tool); got != tc.want {
			t.Errorf("%s/%s: %q, want %q", tc.server, tc.tool, got, tc.want)
		}
	}
	long := baseModelName("s", strings.Repeat("x", 100))
	if len(long) != maxModelName || long == baseModelName("s", strings.Repeat("x", 101)) {
		t.Errorf("long names: %q", long)
	}
}
