package mcptest

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GoServer is an MCP server built with the official go-sdk, served over
// streamable HTTP on loopback, whose tools a test drives:
//
//   - echo {message} answers "Echo: <message>" (idempotentHint);
//   - fail {message} returns a result with isError and the message;
//   - big {bytes} answers that many bytes of text;
//   - block and block_once {} signal Started, then block until the
//     server is killed (Kill); on a restarted server they answer at once
//     with the server's generation ("done on generation 2"). block says
//     idempotentHint, block_once says nothing;
//   - hang {} signals Started and blocks until the server cancels it
//     (the client's notifications/cancelled), then closes Cancelled;
//   - progress {steps} sends steps progress notifications, then answers;
//   - gate {} signals Started, then waits for Release.
//
// Kill cuts every connection and restarts the server behind the same
// address, with none of its sessions: what a crash and a restart look
// like to a client.
type GoServer struct {
	// URL is the server's endpoint, http://127.0.0.1:<port>/mcp.
	URL string
	// Started receives the name of a blocking tool (block, block_once,
	// hang) once it runs.
	Started chan string
	// Cancelled is closed when a hang call was cancelled at the server.
	Cancelled chan struct{}

	// Release lets one gate call return.
	Release chan struct{}

	srv        *httptest.Server
	gen        atomic.Int32
	handler    atomic.Pointer[mcp.StreamableHTTPHandler]
	server     atomic.Pointer[mcp.Server]
	header     atomic.Pointer[http.Header]
	calls      sync.Map // tool name -> *atomic.Int32
	cancelOnce sync.Once
	mu         sync.Mutex
	killed     chan struct{} // closed by Kill, for generation gen's blocking tools

	jsonResponses bool
	tls           bool
}

// Option changes how a GoServer answers.
type Option func(*GoServer)

// JSONResponses makes the server answer each request with one JSON
// document (application/json) instead of an event stream: the
// streamable HTTP transport allows either.
func JSONResponses() Option { return func(g *GoServer) { g.jsonResponses = true } }

// TLS serves the server over HTTPS (an https URL), with a certificate
// for 127.0.0.1 from an authority of its own: CertificatePEM.
func TLS() Option { return func(g *GoServer) { g.tls = true } }

// CertificatePEM returns the PEM certificate of a TLS server (the
// authority a client must trust), nil for one in the clear.
func (g *GoServer) CertificatePEM() []byte {
	if g.srv.TLS == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: g.srv.Certificate().Raw})
}

// NewGoServer starts a GoServer on a free loopback port and closes it
// when the test ends.
func NewGoServer(t testing.TB, opts ...Option) *GoServer {
	return NewGoServerAt(t, "127.0.0.1:0", opts...)
}

// NewGoServerAt starts a GoServer listening on addr (a loopback address).
func NewGoServerAt(t testing.TB, addr string, opts ...Option) *GoServer {
	t.Helper()
	g := &GoServer{Started: make(chan string, 16), Cancelled: make(chan struct{}), Release: make(chan struct{}), killed: make(chan struct{})}
	for _, o := range opts {
		o(g)
	}
	g.gen.Store(1)
	g.handler.Store(g.newHandler(1, g.killed))
	g.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" {
			http.NotFound(w, r)
			return
		}
		h := r.Header.Clone()
		g.header.Store(&h)
		g.handler.Load().ServeHTTP(w, r)
	}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	g.srv.Listener.Close()
	g.srv.Listener = ln
	if g.tls {
		// A client that does not trust the certificate is what the
		// tests of TLS make: its refused handshakes are no news.
		g.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		g.srv.StartTLS()
	} else {
		g.srv.Start()
	}
	g.URL = g.srv.URL + "/mcp"
	t.Cleanup(g.Close)
	return g
}

// Close stops the server for good: its connections are cut and its
// address refuses connections.
func (g *GoServer) Close() {
	g.mu.Lock()
	select {
	case <-g.killed:
	default:
		close(g.killed)
	}
	g.mu.Unlock()
	g.srv.CloseClientConnections()
	g.srv.Close()
	closeSessions(g.server.Load())
}

// Kill cuts every connection to the server and restarts it, with no
// session of the previous generation: calls in flight fail at the client,
// and the blocking tools of the new generation answer at once.
func (g *GoServer) Kill() {
	g.mu.Lock()
	old, oldServer := g.killed, g.server.Load()
	g.killed = make(chan struct{})
	gen := g.gen.Add(1)
	g.handler.Store(g.newHandler(gen, g.killed))
	g.mu.Unlock()
	// The connections go first: the killed generation's blocking tools
	// then return into connections that are gone, as a crashed server's
	// never return at all.
	g.srv.CloseClientConnections()
	close(old)
	closeSessions(oldServer)
}

// closeSessions ends the sessions a generation of the server still holds
// (a dead process holds none).
func closeSessions(s *mcp.Server) {
	for ss := range s.Sessions() {
		_ = ss.Close()
	}
}

// Header returns the headers of the last request the server received.
func (g *GoServer) Header() http.Header {
	if h := g.header.Load(); h != nil {
		return *h
	}
	return nil
}

// AddTool adds a tool that answers its own name to the running server,
// which tells its clients that its tools changed (tools/list_changed).
func (g *GoServer) AddTool(name string) {
	g.server.Load().AddTool(&mcp.Tool{Name: name, Description: "Added while the server ran", InputSchema: object(nil)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text(name), nil })
}

// Calls returns how many times the tool was called, over every generation.
func (g *GoServer) Calls(tool string) int {
	v, ok := g.calls.Load(tool)
	if !ok {
		return 0
	}
	return int(v.(*atomic.Int32).Load())
}

func (g *GoServer) count(tool string) {
	v, _ := g.calls.LoadOrStore(tool, new(atomic.Int32))
	v.(*atomic.Int32).Add(1)
}

// object is an input schema with the given properties.
func object(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// newHandler makes generation gen of the server; killed is closed when
// it is killed.
func (g *GoServer) newHandler(gen int32, killed chan struct{}) *mcp.StreamableHTTPHandler {
	s := mcp.NewServer(&mcp.Implementation{Name: "llmrelay-test", Version: fmt.Sprint(gen)}, nil)
	args := func(req *mcp.CallToolRequest) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	idem := &mcp.ToolAnnotations{IdempotentHint: true}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echoes back the message", Annotations: idem,
		InputSchema: object(map[string]any{"message": map[string]any{"type": "string"}}, "message")},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			g.count("echo")
			return text(fmt.Sprintf("Echo: %v", args(req)["message"])), nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Fails with the message",
		InputSchema: object(map[string]any{"message": map[string]any{"type": "string"}})},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			g.count("fail")
			r := text(fmt.Sprintf("%v", args(req)["message"]))
			r.IsError = true
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "big", Description: "Answers that many bytes",
		InputSchema: object(map[string]any{"bytes": map[string]any{"type": "integer"}})},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			g.count("big")
			n, _ := args(req)["bytes"].(float64)
			return text(strings.Repeat("é", int(n)/2)), nil
		})
	block := func(name string) mcp.ToolHandler {
		return func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			g.count(name)
			if gen > 1 {
				return text(fmt.Sprintf("done on generation %d", gen)), nil
			}
			g.Started <- name
			select {
			case <-killed:
			case <-ctx.Done():
			}
			return text("killed"), nil
		}
	}
	s.AddTool(&mcp.Tool{Name: "block", Description: "Blocks until the server is killed", Annotations: idem, InputSchema: object(nil)}, block("block"))
	s.AddTool(&mcp.Tool{Name: "block_once", Description: "Blocks until the server is killed", InputSchema: object(nil)}, block("block_once"))
	s.AddTool(&mcp.Tool{Name: "hang", Description: "Never returns", InputSchema: object(nil)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			g.count("hang")
			g.Started <- "hang"
			select {
			case <-ctx.Done():
				g.cancelOnce.Do(func() { close(g.Cancelled) })
			case <-killed:
			}
			return text("cancelled"), nil
		})
	s.AddTool(&mcp.Tool{Name: "progress", Description: "Reports progress, then answers",
		InputSchema: object(map[string]any{"steps": map[string]any{"type": "integer"}})},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			g.count("progress")
			n, _ := args(req)["steps"].(float64)
			tok := req.Params.GetProgressToken()
			for i := 1; i <= int(n) && tok != nil; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: n, Message: fmt.Sprintf("step %d", i)})
			}
			return text(fmt.Sprintf("%d steps done", int(n))), nil
		})
	s.AddTool(&mcp.Tool{Name: "gate", Description: "Signals Started, then waits for Release", InputSchema: object(nil)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			g.count("gate")
			g.Started <- "gate"
			select {
			case <-g.Release:
			case <-ctx.Done():
			case <-killed:
			}
			return text("through"), nil
		})
	g.server.Store(s)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: g.jsonResponses})
}
