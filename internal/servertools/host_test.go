package servertools

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/freeport"
	"github.com/llmrelay/llmrelay/internal/logtest"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/servertools/mcptest"
)

// wide is the deadline of every wait on a test server: far beyond what
// any step takes, even on a loaded machine.
const wide = 2 * time.Minute

func testHost(t *testing.T, cfg Config, scopes Scopes) *Host {
	t.Helper()
	h := NewHost(Options{ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond, Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	p, err := Prepare(cfg, scopes, func(string) string { return "secret" })
	if err != nil {
		t.Fatal(err)
	}
	h.Apply(p)
	t.Cleanup(h.Close)
	return h
}

func config(servers ...ServerConfig) Config {
	c := DefaultConfig()
	c.MCPServers = servers
	return c
}

func waitAvailable(t *testing.T, h *Host, server string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wide)
	defer cancel()
	if err := h.WaitAvailable(ctx, server); err != nil {
		t.Fatal(err)
	}
}

// waitUntil waits until cond holds, re-checking it at every change of the
// host's catalog.
func waitUntil(t *testing.T, h *Host, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(wide)
	for {
		h.mu.Lock()
		changed := h.changed
		h.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// poll waits until cond holds, checking it every few milliseconds: for
// conditions nothing signals.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wide)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func tool(t *testing.T, h *Host, key, name string) *Tool {
	t.Helper()
	o, err := h.Resolve(key, []string{name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl, ok := o.Lookup(o.Tools()[0].ModelName)
	if !ok || tl.Name != name {
		t.Fatalf("resolved %v, want %s", o.Tools(), name)
	}
	return tl
}

func TestEverything(t *testing.T) {
	e := mcptest.StartEverything(t)
	// simulate-research-query must run as an MCP task, which llmrelay does
	// not run: allowed, it is still not offered.
	h := testHost(t, config(ServerConfig{Name: "everything", URL: e.URL, Allow: []string{"echo", "get-sum", "trigger-long-running-operation", "get-structured-content", "get-tiny-image", "get-resource-reference", "get-annotated-message", "simulate-research-query"}}), Scopes{Open: true})
	waitAvailable(t, h, "everything")
	ctx := context.Background()

	t.Run("lists the allowed tools with their schemas, but one that must run as a task", func(t *testing.T) {
		tools, servers := h.List("", "")
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
		want := "everything/echo everything/get-annotated-message everything/get-resource-reference everything/get-structured-content everything/get-sum everything/get-tiny-image everything/trigger-long-running-operation"
		if got := strings.Join(names, " "); got != want {
			t.Fatalf("tools %q, want %q", got, want)
		}
		echo := tools[0]
		if echo.ModelName != "everything__echo" || !echo.Available || !echo.Idempotent || !strings.Contains(string(echo.InputSchema), `"message"`) || echo.Description == "" {
			t.Fatalf("echo = %+v (schema %s)", echo, echo.InputSchema)
		}
		if len(servers) != 1 || !servers[0].Available || servers[0].Tools != 7 || servers[0].ListedAt.IsZero() {
			t.Fatalf("servers = %+v", servers)
		}
	})
	t.Run("echo", func(t *testing.T) {
		res, err := h.Call(ctx, tool(t, h, "", "everything/echo"), `{"message":"hello"}`, nil)
		if err != nil || res.Content != "Echo: hello" || res.IsError || res.Attempts != 1 {
			t.Fatalf("res = %+v, %v", res, err)
		}
	})
	t.Run("progress before the result", func(t *testing.T) {
		var mu sync.Mutex
		var got []Progress
		res, err := h.Call(ctx, tool(t, h, "", "everything/trigger-long-running-operation"), `{"duration":0.2,"steps":2}`, func(p Progress) {
			mu.Lock()
			got = append(got, p)
			mu.Unlock()
		})
		mu.Lock()
		defer mu.Unlock()
		if err != nil || !strings.Contains(res.Content, "Steps: 2") {
			t.Fatalf("res = %+v, %v", res, err)
		}
		if len(got) < 2 || got[1].Progress != 2 || !got[1].HasTotal || got[1].Total != 2 {
			t.Fatalf("progress %+v", got)
		}
	})
	t.Run("an image is an image, in its place", func(t *testing.T) {
		res, err := h.Call(ctx, tool(t, h, "", "everything/get-tiny-image"), ``, nil)
		if err != nil || res.Content != "Here's the image you requested:\nThe image above is the MCP logo." || len(res.Parts) != 3 ||
			res.Parts[1].Image == nil || res.Parts[1].Image.MediaType != "image/png" || !bytes.HasPrefix(res.Parts[1].Image.Data, []byte("\x89PNG")) {
			t.Fatalf("res = %+v, %v", res, err)
		}
	})
	t.Run("an embedded resource's text reaches the model, sent as a blob too", func(t *testing.T) {
		for _, typ := range []string{"Text", "Blob"} {
			res, err := h.Call(ctx, tool(t, h, "", "everything/get-resource-reference"), `{"resourceType":"`+typ+`","resourceId":1}`, nil)
			if err != nil || res.IsError || !strings.Contains(res.Content, "\nResource 1: This is a ") {
				t.Errorf("%s: res = %+v, %v", typ, res, err)
			}
		}
	})
	t.Run("structured content repeated as text reaches the model once", func(t *testing.T) {
		res, err := h.Call(ctx, tool(t, h, "", "everything/get-structured-content"), `{"location":"New York"}`, nil)
		if err != nil || res.IsError || res.Content != `{"temperature":33,"conditions":"Cloudy","humidity":82}` {
			t.Fatalf("res = %+v, %v", res, err)
		}
	})
	t.Run("content for the user only is not the model's", func(t *testing.T) {
		const note = "[llmrelay: the tool succeeded; its result, 2 content parts, is meant for the user only: it went to the user, not to the model]"
		res, err := h.Call(ctx, tool(t, h, "", "everything/get-annotated-message"), `{"messageType":"success","includeImage":true}`, nil)
		if err != nil || res.IsError || res.Content != note || res.Parts != nil ||
			!strings.HasPrefix(res.UserContent, "Operation completed successfully\n[image: image/png, ") {
			t.Fatalf("res = %+v, %v", res, err)
		}
		res, err = h.Call(ctx, tool(t, h, "", "everything/get-annotated-message"), `{"messageType":"debug"}`, nil)
		if err != nil || res.Content != "Debug: Cache hit ratio 0.95, latency 150ms" || res.UserContent != "" {
			t.Fatalf("res = %+v, %v", res, err)
		}
		res, err = h.Call(ctx, tool(t, h, "", "everything/get-annotated-message"), `{"messageType":"error"}`, nil)
		if err != nil || res.Content != "Error: Operation failed" || res.UserContent != "" {
			t.Fatalf("res = %+v, %v", res, err)
		}
	})
	t.Run("bad arguments reach the model as an error", func(t *testing.T) {
		res, err := h.Call(ctx, tool(t, h, "", "everything/get-sum"), `[1,2]`, nil)
		if err != nil || !res.IsError || res.Outcome != OutcomeRefused || res.Attempts != 0 {
			t.Fatalf("res = %+v, %v", res, err)
		}
	})
}

func TestGoServer(t *testing.T) {
	g := mcptest.NewGoServer(t)
	h := testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true})
	waitAvailable(t, h, "go")
	ctx := context.Background()

	t.Run("a tool error is an error result", func(t *testing.T) {
		res, err := h.Call(ctx, tool(t, h, "", "go/fail"), `{"message":"no such city"}`, nil)
		if err != nil || !res.IsError || res.Content != "no such city" || res.Outcome != OutcomeToolError || res.Attempts != 1 {
			t.Fatalf("res = %+v, %v", res, err)
		}
	})
	t.Run("a long result is cut, with a note", func(t *testing.T) {
		res, err := h.Call(ctx, tool(t, h, "", "go/big"), fmt.Sprintf(`{"bytes":%d}`, 3*DefaultMaxResultBytes), nil)
		if err != nil || !res.Truncated || len(res.Content) > DefaultMaxResultBytes || !strings.HasSuffix(res.Content, fmt.Sprintf("cut here, at %d of its %d bytes]", DefaultMaxResultBytes, 3*DefaultMaxResultBytes)) {
			t.Fatalf("res = %d bytes, truncated %v, %v: ...%s", len(res.Content), res.Truncated, err, res.Content[max(0, len(res.Content)-80):])
		}
	})
	t.Run("progress", func(t *testing.T) {
		var n int
		res, err := h.Call(ctx, tool(t, h, "", "go/progress"), `{"steps":3}`, func(p Progress) { n++ })
		if err != nil || res.Content != "3 steps done" || n != 3 {
			t.Fatalf("res = %+v, %v, %d progress reports", res, err, n)
		}
	})
	t.Run("an unknown tool at the server is refused", func(t *testing.T) {
		res, err := h.Call(ctx, &Tool{Name: "go/nosuch", Server: "go", ServerTool: "nosuch"}, `{}`, nil)
		if err != nil || !res.IsError || res.Outcome != OutcomeRefused {
			t.Fatalf("res = %+v, %v", res, err)
		}
	})
}

// TestKilledMidCall: a server killed (and restarted) during a call: an
// idempotent tool is tried again on the restarted server, a
// non-idempotent one gives the model an error result.
func TestKilledMidCall(t *testing.T) {
	for _, tc := range []struct {
		tool         string
		wantContent  string
		wantError    bool
		wantAttempts int
		wantCalls    int
	}{
		{tool: "block", wantContent: "done on generation 2", wantAttempts: 2, wantCalls: 2},
		{tool: "block_once", wantContent: "could not reach MCP server go, or it dropped the call", wantError: true, wantAttempts: 1, wantCalls: 1},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			g := mcptest.NewGoServer(t)
			h := testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true})
			waitAvailable(t, h, "go")
			tl := tool(t, h, "", "go/"+tc.tool)
			if tl.Idempotent != (tc.wantAttempts > 1) {
				t.Fatalf("%s: idempotent %v", tc.tool, tl.Idempotent)
			}
			done := make(chan Result, 1)
			go func() {
				res, err := h.Call(context.Background(), tl, `{}`, nil)
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			<-g.Started
			g.Kill()
			res := <-done
			if res.IsError != tc.wantError || !strings.Contains(res.Content, tc.wantContent) || res.Attempts != tc.wantAttempts {
				t.Fatalf("res = %+v", res)
			}
			if n := g.Calls(tc.tool); n != tc.wantCalls {
				t.Fatalf("the server saw %d calls, want %d", n, tc.wantCalls)
			}
		})
	}
}

// answerKinds are the two ways a server may answer a request over the
// streamable HTTP transport: an event stream, or one JSON document.
var answerKinds = []struct {
	name string
	opts []mcptest.Option
}{
	{"event stream", nil},
	{"JSON", []mcptest.Option{mcptest.JSONResponses()}},
}

// sessionKept returns a check that the server's session when it was
// called is still the live one: a failure of one call did not end it.
func sessionKept(t *testing.T, h *Host, server string) func() {
	t.Helper()
	c := h.servers[server]
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	return func() {
		t.Helper()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.gen != gen || c.session == nil {
			t.Fatalf("the session was lost (generation %d, was %d)", c.gen, gen)
		}
	}
}

// TestDeadlineCancelsAtServer: a call whose context ends while its tool
// hangs is cancelled at the MCP server.
func TestDeadlineCancelsAtServer(t *testing.T) {
	// A JSON answer is read whole before the SDK sees it: the call's end
	// must still reach the server.
	for _, tc := range answerKinds {
		t.Run(tc.name, func(t *testing.T) {
			g := mcptest.NewGoServer(t, tc.opts...)
			h := testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true})
			waitAvailable(t, h, "go")
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := h.Call(ctx, tool(t, h, "", "go/hang"), `{}`, nil)
				errc <- err
			}()
			<-g.Started
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("Call returned %v, want the context's end", err)
			}
			select {
			case <-g.Cancelled:
			case <-time.After(wide):
				t.Fatal("the tool was not cancelled at the server")
			}
		})
	}
}

// TestTimeout: a tool that does not return within its server's timeout is
// an error result, and is cancelled at the server.
func TestTimeout(t *testing.T) {
	g := mcptest.NewGoServer(t)
	h := testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: 300 * time.Millisecond}), Scopes{Open: true})
	waitAvailable(t, h, "go")
	res, err := h.Call(context.Background(), tool(t, h, "", "go/hang"), `{}`, nil)
	if err != nil || !res.IsError || res.Outcome != OutcomeTimeout || res.Content != "the tool did not return within 300ms" {
		t.Fatalf("res = %+v, %v", res, err)
	}
	select {
	case <-g.Cancelled:
	case <-time.After(wide):
		t.Fatal("the tool was not cancelled at the server")
	}
}

// TestResolve: which tools a key's call may offer, by name or pattern.
func TestResolve(t *testing.T) {
	g := mcptest.NewGoServer(t)
	down := fmt.Sprintf("http://127.0.0.1:%d/mcp", freeport.For(t))
	scopes := Scopes{Keys: map[string][]string{
		"all":  {"*"},
		"echo": {"go/echo"},
		"go":   {"go/*"},
		"down": {"down/echo"},
		"none": nil,
	}, Stored: func(key string) []string {
		if key == "stored" { // a key made through the admin API
			return []string{"go/fail"}
		}
		return nil
	}}
	h := testHost(t, config(
		ServerConfig{Name: "go", URL: g.URL, Allow: []string{"echo", "fail", "progress"}, Timeout: wide},
		ServerConfig{Name: "down", URL: down, Allow: []string{"*"}},
	), scopes)
	waitAvailable(t, h, "go")
	for _, tc := range []struct {
		key     string
		entries []string
		want    string // the model names offered, or the error
	}{
		{"echo", []string{"go/echo"}, "go__echo"},
		{"go", []string{"go/*"}, "go__echo go__fail go__progress"},
		{"echo", []string{"go/*"}, "go__echo"}, // a pattern offers what the key may use
		{"all", []string{"**"}, "go__echo go__fail go__progress"},
		{"echo", []string{"go/fail"}, "server_tools[0]: go/fail: " + ErrNotPermitted.Error()},
		{"none", []string{"go/echo"}, "server_tools[0]: go/echo: " + ErrNotPermitted.Error()},
		{"none", []string{"go/*"}, "server_tools[0]: go/*: " + ErrUnknown.Error() + " (it matches no server tool the API key may use; ListTools lists them)"},
		{"all", []string{"go/gate"}, "server_tools[0]: go/gate: " + ErrUnknown.Error() + " (ListTools lists the server tools you may use)"}, // not in allow
		{"all", []string{"nosuch/echo"}, "server_tools[0]: nosuch/echo: " + ErrUnknown.Error() + " (ListTools lists the server tools you may use)"},
		{"all", []string{"echo"}, `server_tools[0]: echo: ` + ErrUnknown.Error() + ` (a server tool is named "<server>/<tool>", e.g. everything/echo)`},
		{"all", []string{"go/echo", "down/anything"}, "server_tools[1]: down/anything: " + ErrUnavailable.Error() + " (MCP server down is not answering)"},
		{"all", []string{"down/*"}, "server_tools[0]: down/*: " + ErrUnavailable.Error() + " (it matches no tool of the MCP servers that answer, and server down is not answering)"},
		{"unknown-key", []string{"go/echo"}, "server_tools[0]: go/echo: " + ErrNotPermitted.Error()},
		{"stored", []string{"go/*"}, "go__fail"},
		{"stored", []string{"go/echo"}, "server_tools[0]: go/echo: " + ErrNotPermitted.Error()},
	} {
		t.Run(tc.key+" "+strings.Join(tc.entries, ","), func(t *testing.T) {
			o, err := h.Resolve(tc.key, tc.entries, nil)
			got := ""
			if err != nil {
				got = err.Error()
				var re *ResolveError
				if !errors.As(err, &re) {
					t.Fatalf("%T is not a *ResolveError", err)
				}
			} else {
				var names []string
				for _, tl := range o.Tools() {
					names = append(names, tl.ModelName)
				}
				got = strings.Join(names, " ")
			}
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	// List shows a key its tools only, and only the servers it may use a
	// tool of, counting those tools: a server that never answered, to the
	// keys whose patterns may cover a tool of it.
	for _, tc := range []struct {
		key, server string
		tools       string // the names listed
		servers     string // the servers listed: name, availability, tools
	}{
		{"echo", "", "go/echo", "go up 1"},
		{"go", "", "go/echo go/fail go/progress", "go up 3"},
		{"all", "", "go/echo go/fail go/progress", "down down 0, go up 3"},
		{"down", "", "", "down down 0"},
		{"stored", "", "go/fail", "go up 1"},
		{"none", "", "", ""},
		{"unknown-key", "", "", ""},
		{"echo", "down", "", ""},
		{"all", "go", "go/echo go/fail go/progress", "go up 3"},
	} {
		t.Run("List "+tc.key+" "+cmp.Or(tc.server, "every server"), func(t *testing.T) {
			tools, servers := h.List(tc.key, tc.server)
			var names, states []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			for _, sv := range servers {
				states = append(states, fmt.Sprintf("%s %s %d", sv.Name, map[bool]string{true: "up", false: "down"}[sv.Available], sv.Tools))
			}
			if got := strings.Join(names, " "); got != tc.tools {
				t.Errorf("tools %q, want %q", got, tc.tools)
			}
			if got := strings.Join(states, ", "); got != tc.servers {
				t.Errorf("servers %q, want %q", got, tc.servers)
			}
		})
	}
}

// TestServerDownAtStart: a server that does not answer at start is
// unavailable, and its tools become available once it answers.
func TestServerDownAtStart(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freeport.For(t))
	h := testHost(t, config(ServerConfig{Name: "late", URL: "http://" + addr + "/mcp", Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true})
	if _, err := h.Resolve("", []string{"late/echo"}, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Resolve before the server answers: %v", err)
	}
	mcptest.NewGoServerAt(t, addr)
	waitAvailable(t, h, "late")
	if _, err := h.Resolve("", []string{"late/echo"}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestListChanged: a server's tools/list_changed makes the host list its
// tools again.
func TestListChanged(t *testing.T) {
	g := mcptest.NewGoServer(t)
	h := testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true})
	waitAvailable(t, h, "go")
	g.AddTool("late_tool")
	waitUntil(t, h, "go/late_tool is listed", func() bool {
		_, err := h.Resolve("", []string{"go/late_tool"}, nil)
		return err == nil
	})
}

// TestReload: Apply changes what a server offers and drops a server that
// left the config.
func TestReload(t *testing.T) {
	g := mcptest.NewGoServer(t)
	h := testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true})
	waitAvailable(t, h, "go")
	apply := func(cfg Config) {
		p, err := Prepare(cfg, Scopes{Open: true}, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		h.Apply(p)
	}
	apply(config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"echo"}, Timeout: wide}))
	if tools, _ := h.List("", ""); len(tools) != 1 || tools[0].Name != "go/echo" {
		t.Fatalf("after allowing echo only: %v", tools)
	}
	apply(config())
	if tools, servers := h.List("", ""); len(tools) != 0 || len(servers) != 0 {
		t.Fatalf("after removing the server: %v %v", tools, servers)
	}
	if _, err := h.Resolve("", []string{"go/echo"}, nil); !errors.Is(err, ErrUnknown) {
		t.Fatalf("Resolve after removing the server: %v", err)
	}
}

// TestHeaders: the configured headers, read from the environment, reach
// the server.
func TestHeaders(t *testing.T) {
	g := mcptest.NewGoServer(t)
	h := testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, HeadersEnv: map[string]string{"Authorization": "GO_AUTH"}}), Scopes{Open: true})
	waitAvailable(t, h, "go")
	if got := g.Header().Get("Authorization"); got != "secret" {
		t.Fatalf("Authorization %q, want the variable's value", got)
	}
}

// TestMaxConcurrency: calls beyond a server's max_concurrency wait for a
// slot before they reach the server.
func TestMaxConcurrency(t *testing.T) {
	g := mcptest.NewGoServer(t)
	h := testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, MaxConcurrency: 2, Timeout: wide}), Scopes{Open: true})
	waitAvailable(t, h, "go")
	gate := tool(t, h, "", "go/gate")
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, err := h.Call(context.Background(), gate, `{}`, nil); err != nil || res.Content != "through" {
				t.Errorf("res = %+v, %v", res, err)
			}
		}()
	}
	<-g.Started
	<-g.Started
	c := h.servers["go"]
	poll(t, "the third call waits for a slot", func() bool { return c.queued.Load() == 1 })
	if n := g.Calls("gate"); n != 2 {
		t.Fatalf("%d calls reached the server, want 2", n)
	}
	g.Release <- struct{}{}
	<-g.Started // the third, once a slot is free
	g.Release <- struct{}{}
	g.Release <- struct{}{}
	wg.Wait()
}

// TestResolveKeepsAToolWhileItsServerIsDown: a later turn keeps offering
// a tool of the turn before whose server went down; a new call cannot
// have it.
func TestResolveKeepsAToolWhileItsServerIsDown(t *testing.T) {
	g := mcptest.NewGoServer(t)
	h := testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true})
	waitAvailable(t, h, "go")
	byName, _ := h.Resolve("", []string{"go/echo"}, nil)
	byPattern, _ := h.Resolve("", []string{"go/*"}, nil)
	g.Close()
	waitUntil(t, h, "the server is down", func() bool {
		_, servers := h.List("", "")
		return !servers[0].Available
	})
	for entry, first := range map[string]*Offer{"go/echo": byName, "go/*": byPattern} {
		if _, err := h.Resolve("", []string{entry}, nil); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("%s for a new call: %v, want ErrUnavailable", entry, err)
		}
		again, err := h.Resolve("", []string{entry}, first)
		if err != nil || again.Len() != first.Len() || first.Len() == 0 {
			t.Fatalf("%s for the next turn: %v, %v; want the %d tools of the turn before", entry, again.Tools(), err, first.Len())
		}
	}
}

// TestResolveNextTurnOfANarrowedKey: before a later turn, an entry whose
// tools of the turn before the key may no longer use (its tools narrowed
// through the admin API while the call ran) is not permitted, by name or
// by pattern; only tools gone from the servers are removed.
func TestResolveNextTurnOfANarrowedKey(t *testing.T) {
	g := mcptest.NewGoServer(t)
	var stored atomic.Pointer[[]string]
	stored.Store(&[]string{"go/*"})
	scopes := Scopes{Stored: func(key string) []string {
		if key == "stored" {
			return *stored.Load()
		}
		return nil
	}}
	cfg := config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"echo", "fail"}, Timeout: wide})
	h := testHost(t, cfg, scopes)
	waitAvailable(t, h, "go")
	entries := []string{"go/echo", "go/e*"}
	first := map[string]*Offer{}
	for _, e := range entries {
		o, err := h.Resolve("stored", []string{e}, nil)
		if err != nil || o.Len() != 1 {
			t.Fatalf("%s in the first turn: %v, %v", e, o.Tools(), err)
		}
		first[e] = o
	}
	stored.Store(&[]string{"go/fail"})
	for _, e := range entries {
		if _, err := h.Resolve("stored", []string{e}, first[e]); !errors.Is(err, ErrNotPermitted) {
			t.Errorf("%s after the key was narrowed: %v, want ErrNotPermitted", e, err)
		}
	}
	stored.Store(&[]string{"go/*"})
	p, err := Prepare(config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"fail"}, Timeout: wide}), scopes, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	h.Apply(p)
	for _, e := range entries {
		if _, err := h.Resolve("stored", []string{e}, first[e]); !errors.Is(err, ErrRemoved) {
			t.Errorf("%s after a reload removed go/echo: %v, want ErrRemoved", e, err)
		}
	}
}

// denyRetries is a retry budget that allows no retry.
type denyRetries struct{ asked atomic.Int32 }

func (d *denyRetries) Begin(context.Context) func() { return func() {} }
func (d *denyRetries) Retry(context.Context) (func(), bool) {
	d.asked.Add(1)
	return nil, false
}

// TestRetryBudget: an idempotent tool whose server failed is not called
// again when the server's retry budget says no.
func TestRetryBudget(t *testing.T) {
	g := mcptest.NewGoServer(t)
	budget := &denyRetries{}
	h := NewHost(Options{Budget: func(server string) retry.Throttle {
		if server != "go" {
			t.Errorf("budget asked for %q", server)
		}
		return budget
	}})
	t.Cleanup(h.Close)
	p, err := Prepare(config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	h.Apply(p)
	waitAvailable(t, h, "go")
	done := make(chan Result, 1)
	go func() {
		res, _ := h.Call(context.Background(), tool(t, h, "", "go/block"), `{}`, nil)
		done <- res
	}()
	<-g.Started
	g.Kill()
	res := <-done
	if !res.IsError || res.Attempts != 1 || !strings.Contains(res.Content, "retry budget") || budget.asked.Load() != 1 {
		t.Fatalf("res = %+v, budget asked %d times", res, budget.asked.Load())
	}
}

// TestAnAnswerOverMaxResponseBytes: a tool's answer longer than its
// server's max_response_bytes is not read: the call gets an error result
// at once (not tried again, though the tool were idempotent), and the
// session, with every other call it carries, goes on. Whether the server
// answers with one JSON document or an event stream. Many small events
// of one stream are not one long answer.
func TestAnAnswerOverMaxResponseBytes(t *testing.T) {
	for _, tc := range answerKinds {
		t.Run(tc.name, func(t *testing.T) {
			g := mcptest.NewGoServer(t, tc.opts...)
			const limit = 64 << 10
			h := testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Idempotent: []string{"*"}, Timeout: wide, MaxResponseBytes: limit}), Scopes{Open: true})
			waitAvailable(t, h, "go")
			kept := sessionKept(t, h, "go")
			ctx := context.Background()

			res, err := h.Call(ctx, tool(t, h, "", "go/big"), fmt.Sprintf(`{"bytes":%d}`, 4*limit), nil)
			want := fmt.Sprintf("llmrelay did not read the tool's result: the MCP server's answer is larger than its max_response_bytes (%d bytes)", limit)
			if err != nil || !res.IsError || res.Outcome != OutcomeTooLarge || res.Attempts != 1 || res.Content != want {
				t.Fatalf("res = %q (%d bytes), error %v, outcome %s, %d attempts, %v", res.Content[:min(len(res.Content), 200)], len(res.Content), res.IsError, res.Outcome, res.Attempts, err)
			}
			if n := g.Calls("big"); n != 1 {
				t.Fatalf("the server saw %d calls of big, want 1", n)
			}
			res, err = h.Call(ctx, tool(t, h, "", "go/big"), fmt.Sprintf(`{"bytes":%d}`, limit/2), nil)
			if err != nil || res.IsError || len(res.Content) != limit/2 {
				t.Fatalf("an answer within the bound: %d bytes, error %v, %v", len(res.Content), res.IsError, err)
			}
			if tc.opts == nil {
				var reports int
				res, err = h.Call(ctx, tool(t, h, "", "go/progress"), `{"steps":2000}`, func(Progress) { reports++ })
				if err != nil || res.Content != "2000 steps done" || reports != 2000 {
					t.Fatalf("2000 progress events: %+v, %v, %d reports", res, err, reports)
				}
			}
			kept()
		})
	}
}

// TestToolsNoModelCouldBeOfferedAreLeftOut: a tool whose input schema is
// not an object's (every provider refuses such a function, failing every
// call that offers it), a second tool of a name, or one without a name is
// not offered, nor one whose name holds control characters (an escape
// that would retitle or clear the terminal of whoever lists it, a line
// break that would forge a log line); the server's other tools are.
func TestToolsNoModelCouldBeOfferedAreLeftOut(t *testing.T) {
	raw := mcptest.NewRawServer(t, `[
		{"name": "good", "description": "the first", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
		{"name": "text", "inputSchema": {"type": "string"}},
		{"name": "untyped", "inputSchema": {"properties": {"q": {"type": "string"}}}},
		{"name": "list", "inputSchema": [1, 2]},
		{"name": "bare"},
		{"name": "good", "description": "the second", "inputSchema": {"type": "object"}},
		{"name": "", "inputSchema": {"type": "object"}},
		{"name": "evil\u001b]0;owned\u0007", "inputSchema": {"type": "object"}},
		{"name": "two\nlines", "inputSchema": {"type": "object"}}]`)
	h := testHost(t, config(ServerConfig{Name: "raw", URL: raw.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true})
	waitAvailable(t, h, "raw")
	tools, servers := h.List("", "")
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name+": "+tl.Description)
	}
	if want := []string{"raw/bare: ", "raw/good: the first"}; !slices.Equal(names, want) || servers[0].Tools != 2 {
		t.Fatalf("offered %q (server counts %d), want %q", names, servers[0].Tools, want)
	}
	res, err := h.Call(context.Background(), tool(t, h, "", "raw/good"), `{"q":"x"}`, nil)
	if err != nil || res.IsError || res.Content != "called good" {
		t.Fatalf("res = %+v, %v", res, err)
	}
}

// TestToolsThatMustRunAsTasksAreLeftOut: a tool whose listing says it
// must run as an MCP task (execution.taskSupport "required") is not
// offered, on whatever page of the listing, whether the server answers
// with a JSON document or an event stream: llmrelay runs no tasks, so
// every call of it would fail. A warning names it. A tool that may run as
// one ("optional"), or says nothing of it, is offered, and so is one whose
// execution is not what MCP says (the SDK takes it as it takes the rest).
// The first page is longer than the lines the event stream's scanner
// keeps of other answers (a description of 32 KiB).
func TestToolsThatMustRunAsTasksAreLeftOut(t *testing.T) {
	first := `[
		{"name": "research", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
		{"name": "maybe", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}},
		{"name": "never", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "forbidden"}},
		{"name": "odd", "inputSchema": {"type": "object"}, "execution": "required"},
		{"name": "plain", "description": "` + strings.Repeat("words ", 32<<10/6) + `", "inputSchema": {"type": "object"}}]`
	second := `[
		{"name": "deep", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
		{"name": "later", "inputSchema": {"type": "object"}}]`
	for _, tc := range []struct {
		name string
		opts []mcptest.RawOption
	}{
		{"a JSON answer", []mcptest.RawOption{mcptest.MorePages(second)}},
		{"an event stream", []mcptest.RawOption{mcptest.MorePages(second), mcptest.SSE()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := mcptest.NewRawServer(t, first, tc.opts...)
			var logs logtest.Buffer
			h := NewHost(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			t.Cleanup(h.Close)
			p, err := Prepare(config(ServerConfig{Name: "raw", URL: raw.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true}, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			h.Apply(p)
			waitAvailable(t, h, "raw")
			tools, servers := h.List("", "")
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			if want := []string{"raw/later", "raw/maybe", "raw/never", "raw/odd", "raw/plain"}; !slices.Equal(names, want) || servers[0].Tools != len(want) {
				t.Fatalf("offered %q (server counts %d), want %q", names, servers[0].Tools, want)
			}
			if _, err := h.Resolve("", []string{"raw/research"}, nil); err == nil {
				t.Error("raw/research resolves: a request may offer it")
			}
			for _, name := range []string{"research", "deep"} {
				if !slices.ContainsFunc(strings.Split(logs.String(), "\n"), func(l string) bool {
					return strings.Contains(l, "MCP server's tool not offered") && strings.Contains(l, "tool="+name+" ") && strings.Contains(l, "execution.taskSupport: required")
				}) {
					t.Errorf("no warning names %s as a tool that must run as a task:\n%s", name, logs.String())
				}
			}
		})
	}
}

// TestAListingWithoutEnd: a server whose tools/list pages go on and on
// (here 1000 pages of 500 tools, a server that names a next page on every
// page would never end) is not listed to the end: it is unavailable, and
// its tools are not offered.
func TestAListingWithoutEnd(t *testing.T) {
	page := make([]string, 500)
	for i := range page {
		page[i] = fmt.Sprintf(`{"name": "t%d", "inputSchema": {"type": "object"}}`, i)
	}
	raw := mcptest.NewRawServer(t, "["+strings.Join(page, ",")+"]", mcptest.Pages(1000))
	h := testHost(t, config(ServerConfig{Name: "raw", URL: raw.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true})
	ctx, cancel := context.WithTimeout(context.Background(), wide)
	defer cancel()
	h.Settle(ctx)
	if ctx.Err() != nil {
		t.Fatal("the first listing did not end")
	}
	if tools, servers := h.List("", ""); len(tools) != 0 || servers[0].Available {
		t.Fatalf("%d tools offered, server available %v", len(tools), servers[0].Available)
	}
}

// TestAListingOfEmptyPagesWithoutEnd: a server whose listing is pages
// without a tool, each naming the next, is refused as a malformed listing
// after a few of them: it is down, and its warning says why, instead of
// being listed until its timeout (30 s) every time llmrelay reconnects.
func TestAListingOfEmptyPagesWithoutEnd(t *testing.T) {
	raw := mcptest.NewRawServer(t, "[]", mcptest.Pages(1<<30))
	var logs logtest.Buffer
	// No reconnection within the test: the pages served are the first
	// listing's.
	h := NewHost(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), ReconnectMin: wide, ReconnectMax: wide})
	t.Cleanup(h.Close)
	p, err := Prepare(config(ServerConfig{Name: "raw", URL: raw.URL, Allow: []string{"*"}}), Scopes{Open: true}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	h.Apply(p)
	poll(t, "the server is said to be unavailable", func() bool { return strings.Contains(logs.String(), "MCP server unavailable") })
	if _, servers := h.List("", ""); servers[0].Available {
		t.Fatal("a server whose listing never ends is available")
	}
	if got := raw.Pages(); got != maxEmptyPages+1 {
		t.Errorf("the listing read %d pages without a tool, want %d (the bound, and the page past it)", got, maxEmptyPages+1)
	}
	if s := logs.String(); !strings.Contains(s, "a malformed listing: more than 16 pages without a tool") {
		t.Errorf("the log, want the server unavailable for a malformed listing:\n%s", s)
	}
}

// TestCAFile: an MCP server over HTTPS whose certificate no system
// authority issued is reached with its authority as ca_file, and not
// without; a ca_file that holds no certificate fails Prepare, naming it.
func TestCAFile(t *testing.T) {
	g := mcptest.NewGoServer(t, mcptest.TLS())
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, g.CertificatePEM(), 0o600); err != nil {
		t.Fatal(err)
	}

	h := testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true})
	ctx, cancel := context.WithTimeout(context.Background(), wide)
	defer cancel()
	h.Settle(ctx)
	if _, servers := h.List("", ""); servers[0].Available {
		t.Fatal("reached a server whose certificate no trusted authority issued")
	}

	h = testHost(t, config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: wide, CAFile: ca}), Scopes{Open: true})
	waitAvailable(t, h, "go")
	res, err := h.Call(context.Background(), tool(t, h, "", "go/echo"), `{"message":"over TLS"}`, nil)
	if err != nil || res.Content != "Echo: over TLS" {
		t.Fatalf("res = %+v, %v", res, err)
	}

	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("no certificate here"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Prepare(config(ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, CAFile: notPEM}), Scopes{}, os.Getenv)
	if err == nil || !strings.Contains(err.Error(), "tools.mcp_servers[0].ca_file") || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Fatalf("Prepare with a ca_file of no certificate: %v", err)
	}
}

// TestRedirectsStayWithinTheOrigin: a 307 within the url's own origin is
// followed, the server's headers with it; a redirect to another origin is
// not, so that the headers (its credentials) reach no other host: the
// server is unavailable and the other host hears nothing.
func TestRedirectsStayWithinTheOrigin(t *testing.T) {
	g := mcptest.NewGoServer(t)
	target, err := url.Parse(g.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/here":
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
		case "/away":
			http.Redirect(w, r, g.URL, http.StatusTemporaryRedirect)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(front.Close)

	away := testHost(t, config(ServerConfig{Name: "away", URL: front.URL + "/away", Allow: []string{"*"}, Timeout: wide, HeadersEnv: map[string]string{"Authorization": "GO_AUTH"}}), Scopes{Open: true})
	ctx, cancel := context.WithTimeout(context.Background(), wide)
	defer cancel()
	away.Settle(ctx)
	if _, servers := away.List("", ""); servers[0].Available {
		t.Fatal("a server reached through a redirect to another origin")
	}
	if h := g.Header(); h != nil {
		t.Fatalf("the other origin heard a request, Authorization %q", h.Get("Authorization"))
	}

	here := testHost(t, config(ServerConfig{Name: "here", URL: front.URL + "/here", Allow: []string{"*"}, Timeout: wide, HeadersEnv: map[string]string{"Authorization": "GO_AUTH"}}), Scopes{Open: true})
	waitAvailable(t, here, "here")
	res, err := here.Call(context.Background(), tool(t, here, "", "here/echo"), `{"message":"redirected"}`, nil)
	if err != nil || res.Content != "Echo: redirected" || g.Header().Get("Authorization") != "secret" {
		t.Fatalf("res = %+v, %v; Authorization %q", res, err, g.Header().Get("Authorization"))
	}
}

// TestAResultThatDoesNotDecode: a result that is not an MCP tool result
// (not an object, a content list that is not a list, binary data that is
// not base64, a content part of a type the SDK does not know) is an error
// result saying so, at once: the tool is not called again, though
// idempotent, and the session, which answered, goes on.
func TestAResultThatDoesNotDecode(t *testing.T) {
	results := map[string]string{
		"array":   `[1, 2]`,
		"string":  `{"content": "text"}`,
		"blob":    `{"content": [{"type": "image", "data": "!!", "mimeType": "image/png"}]}`,
		"unknown": `{"content": [{"type": "hologram", "frames": 3}]}`,
	}
	var tools []string
	for name := range results {
		tools = append(tools, fmt.Sprintf(`{"name": %q, "inputSchema": {"type": "object"}}`, name))
	}
	tools = append(tools, `{"name": "fine", "inputSchema": {"type": "object"}}`)
	raw := mcptest.NewRawServer(t, "["+strings.Join(tools, ",")+"]", mcptest.Results(results))
	h := testHost(t, config(ServerConfig{Name: "raw", URL: raw.URL, Allow: []string{"*"}, Idempotent: []string{"*"}, Timeout: wide}), Scopes{Open: true})
	waitAvailable(t, h, "raw")
	kept := sessionKept(t, h, "raw")
	for name, want := range map[string]string{
		"array":   "a result that is not a JSON object",
		"string":  `a result whose "content" is of another type than MCP's`,
		"blob":    "binary content that is not base64",
		"unknown": "a content part of a type llmrelay does not know",
	} {
		res, err := h.Call(context.Background(), tool(t, h, "", "raw/"+name), `{}`, nil)
		want = "llmrelay could not read the tool's result: MCP server raw answered with " + want
		if err != nil || !res.IsError || res.Outcome != OutcomeMalformed || res.Attempts != 1 || res.Content != want || raw.Calls(name) != 1 {
			t.Errorf("%s: res = %+v, %v; the server saw %d calls", name, res, err, raw.Calls(name))
		}
	}
	res, err := h.Call(context.Background(), tool(t, h, "", "raw/fine"), `{}`, nil)
	if err != nil || res.Content != "called fine" {
		t.Fatalf("fine: res = %+v, %v", res, err)
	}
	kept()
}

// TestTheURLsQueryStaysOutOfTheLog: a server's url may carry a token in
// its query (check-config masks it); the warnings about a server that
// cannot be reached, which quote the request that failed, leave it out,
// and still name the server's address.
func TestTheURLsQueryStaysOutOfTheLog(t *testing.T) {
	const secret = "mcp-query-token-7c1e"
	addr := fmt.Sprintf("127.0.0.1:%d", freeport.For(t))
	var logs logtest.Buffer
	h := NewHost(Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond})
	t.Cleanup(h.Close)
	p, err := Prepare(config(ServerConfig{Name: "down", URL: "http://" + addr + "/mcp?token=" + secret, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	h.Apply(p)
	poll(t, "the server is said to be unavailable", func() bool { return strings.Contains(logs.String(), "MCP server unavailable") })
	if s := logs.String(); strings.Contains(s, secret) || !strings.Contains(s, addr+"/mcp") {
		t.Fatalf("the log, want the server's address without its query:\n%s", s)
	}
}

// TestResultsQuotingTheServersCredentialsAreRedacted: an MCP server that
// quotes the credentials llmrelay sends it (its headers_env values) in a
// result or an error does not hand them to the model and the client,
// which see every tool result.
func TestResultsQuotingTheServersCredentialsAreRedacted(t *testing.T) {
	const secret = "mcp-header-secret-7a1b"
	// longleak's result is cut (max_tool_result_bytes 1024) 8 bytes into
	// the credential it quotes: redacted after the cut, its first 8 bytes
	// were left.
	const limit, total = 1024, 1500
	cut := limit - len(fmt.Sprintf("\n[llmrelay: the tool's result was cut here, at %d of its %d bytes]", limit, total))
	long := strings.Repeat("x", cut-8) + secret
	long += strings.Repeat("y", total-len(long))
	results := map[string]string{
		"leak":     `{"content": [{"type": "text", "text": "bad token: Bearer ` + secret + `"}], "isError": true}`,
		"longleak": `{"content": [{"type": "text", "text": "` + long + `"}]}`,
		"userleak": `{"content": [{"type": "text", "text": "signed in with ` + secret + `", "annotations": {"audience": ["user"]}}, {"type": "text", "text": "` + long + `", "annotations": {"audience": ["user"]}}]}`,
	}
	raw := mcptest.NewRawServer(t, `[{"name": "leak", "inputSchema": {"type": "object"}}, {"name": "longleak", "inputSchema": {"type": "object"}}, {"name": "userleak", "inputSchema": {"type": "object"}}]`, mcptest.Results(results))
	h := NewHost(Options{ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond})
	t.Cleanup(h.Close)
	cfg := config(ServerConfig{Name: "raw", URL: raw.URL, Allow: []string{"*"}, Timeout: wide,
		HeadersEnv: map[string]string{"Authorization": "RAW_AUTH"}})
	cfg.MaxResultBytes = limit
	p, err := Prepare(cfg, Scopes{Open: true}, func(string) string { return "Bearer " + secret })
	if err != nil {
		t.Fatal(err)
	}
	h.Apply(p)
	waitAvailable(t, h, "raw")
	res, err := h.Call(context.Background(), tool(t, h, "", "raw/leak"), `{}`, nil)
	if err != nil || strings.Contains(res.Content, secret) || !strings.Contains(res.Content, "bad token") {
		t.Fatalf("res = %+v, %v; want the result without the credential", res, err)
	}
	res, err = h.Call(context.Background(), tool(t, h, "", "raw/longleak"), `{}`, nil)
	if err != nil || !res.Truncated || strings.Contains(res.Content, secret[:8]) {
		t.Fatalf("res = %+v, %v; want it cut, with no part of the credential", res, err)
	}
	// The parts for the user alone, which the client gets, are redacted
	// and bounded as the model's are.
	res, err = h.Call(context.Background(), tool(t, h, "", "raw/userleak"), `{}`, nil)
	if err != nil || !res.Truncated || len(res.UserContent) > limit || strings.Contains(res.UserContent, secret[:8]) ||
		!strings.HasPrefix(res.UserContent, "signed in with [redacted]\n") || strings.Contains(res.Content, "signed in") {
		t.Fatalf("res = %+v, %v; want the user's text redacted and cut", res, err)
	}
}

// TestResultContentFromAServer: what an MCP server's result says reaches
// the model as MCP means it, decoded by the SDK from the server's JSON:
// parts meant for the user only (annotations' audience ["user"]) are the
// client's, not the model's, which is told of them; structured content
// the text does not repeat follows the text; audio is a line saying what
// it is, whatever the server sent of it, never a failure or nothing.
func TestResultContentFromAServer(t *testing.T) {
	wav := base64.StdEncoding.EncodeToString([]byte("RIFF\x24\x00\x00\x00WAVE"))
	results := map[string]string{
		"useronly": `{"content": [{"type": "text", "text": "Operation completed successfully", "annotations": {"priority": 0.7, "audience": ["user"]}}]}`,
		"mixed": `{"content": [
			{"type": "text", "text": "Debug: cache hit ratio 0.95", "annotations": {"audience": ["assistant"]}},
			{"type": "text", "text": "Saved your file.", "annotations": {"audience": ["user"]}},
			{"type": "text", "text": "Both see this.", "annotations": {"audience": ["user", "assistant"]}}]}`,
		"structured": `{"content": [{"type": "text", "text": "It is cloudy in New York."}], "structuredContent": {"temperature": 33, "conditions": "Cloudy"}}`,
		"repeated":   `{"content": [{"type": "text", "text": "{\"temperature\":33,\"conditions\":\"Cloudy\"}"}], "structuredContent": {"temperature": 33, "conditions": "Cloudy"}}`,
		"audio":      `{"content": [{"type": "text", "text": "Your recording:"}, {"type": "audio", "data": "` + wav + `", "mimeType": "audio/wav"}]}`,
		"silence":    `{"content": [{"type": "audio", "data": "", "mimeType": "audio/wav"}]}`,
		"untyped":    `{"content": [{"type": "audio", "data": "` + wav + `"}]}`,
	}
	var tools []string
	for name := range results {
		tools = append(tools, fmt.Sprintf(`{"name": %q, "inputSchema": {"type": "object"}}`, name))
	}
	raw := mcptest.NewRawServer(t, "["+strings.Join(tools, ",")+"]", mcptest.Results(results))
	h := testHost(t, config(ServerConfig{Name: "raw", URL: raw.URL, Allow: []string{"*"}, Timeout: wide}), Scopes{Open: true})
	waitAvailable(t, h, "raw")
	for _, tc := range []struct{ tool, want, wantUser string }{
		{tool: "useronly",
			want:     "[llmrelay: the tool succeeded; its result, 1 content part, is meant for the user only: it went to the user, not to the model]",
			wantUser: "Operation completed successfully"},
		{tool: "mixed",
			want:     "Debug: cache hit ratio 0.95\nBoth see this.\n[llmrelay: 1 content part more of the result, meant for the user only, went to the user, not to the model]",
			wantUser: "Saved your file."},
		{tool: "structured", want: "It is cloudy in New York.\n[structured content]\n" + `{"conditions":"Cloudy","temperature":33}`},
		{tool: "repeated", want: `{"temperature":33,"conditions":"Cloudy"}`},
		{tool: "audio", want: "Your recording:\n[audio: audio/wav, 12 bytes, not shown]"},
		{tool: "silence", want: "[audio: audio/wav, 0 bytes, not shown]"},
		{tool: "untyped", want: "[audio: unknown type, 12 bytes, not shown]"},
	} {
		res, err := h.Call(context.Background(), tool(t, h, "", "raw/"+tc.tool), `{}`, nil)
		if err != nil || res.IsError || res.Content != tc.want || res.UserContent != tc.wantUser {
			t.Errorf("%s: res = %+v, %v;\nwant content %q, for the user %q", tc.tool, res, err, tc.want, tc.wantUser)
		}
	}
}
