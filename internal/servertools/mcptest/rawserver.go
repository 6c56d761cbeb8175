package mcptest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// RawServer is an MCP server on loopback whose answers a test writes by
// hand, so that they may hold what an SDK would refuse to serve: a tool
// whose schema is not an object's, two tools of one name, a listing
// without end, a result that is not MCP's. It answers with JSON
// documents (or server-sent event streams: SSE), in one session; ping is
// answered.
type RawServer struct {
	// URL is its endpoint, http://127.0.0.1:<port>/mcp.
	URL string

	mu    sync.Mutex
	calls map[string]int
	// pages counts the pages of the listing served.
	pages atomic.Int64
}

// RawOption changes what a RawServer answers.
type RawOption func(*rawOptions)

type rawOptions struct {
	pages   int
	more    []string
	results map[string]string
	sse     bool
}

// Pages makes the listing n pages long, each of the tools given (their
// names repeat from page to page).
func Pages(n int) RawOption {
	return func(o *rawOptions) { o.pages = n }
}

// MorePages makes the listing go on after the tools given, with a page
// of each of these (JSON arrays of tools), in order: the first listed
// names the cursor "p1", which asks for more[0], and so on.
func MorePages(more ...string) RawOption {
	return func(o *rawOptions) { o.more = more }
}

// SSE makes it answer every call with a server-sent event stream that
// holds the answer, as servers built on the TypeScript SDK do, instead of
// a JSON document.
func SSE() RawOption {
	return func(o *rawOptions) { o.sse = true }
}

// Results sets the result of tools/call for the tools named, as raw JSON;
// any other tool answers the text "called <name>".
func Results(byTool map[string]string) RawOption {
	return func(o *rawOptions) { o.results = byTool }
}

// NewRawServer starts a RawServer that lists tools (the JSON array of
// tools/list's result) and closes it when the test ends.
func NewRawServer(t testing.TB, tools string, opts ...RawOption) *RawServer {
	t.Helper()
	o := rawOptions{pages: 1}
	for _, f := range opts {
		f(&o)
	}
	s := &RawServer{calls: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name            string `json:"name"`
				ProtocolVersion string `json:"protocolVersion"`
				Cursor          string `json:"cursor"`
			} `json:"params"`
		}
		if err != nil || json.Unmarshal(body, &req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if req.ID == nil { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "raw", "version": "1"}}
		case "tools/list":
			page := map[string]any{"tools": json.RawMessage(tools)}
			if s.pages.Add(1) < int64(o.pages) {
				page["nextCursor"] = "more"
			}
			i := 0 // the page asked for: 0 the first, i > 0 more[i-1]
			if n, ok := strings.CutPrefix(req.Params.Cursor, "p"); ok {
				i, _ = strconv.Atoi(n)
			}
			if i > 0 && i <= len(o.more) {
				page["tools"] = json.RawMessage(o.more[i-1])
			}
			if i < len(o.more) {
				page["nextCursor"] = fmt.Sprintf("p%d", i+1)
			}
			result = page
		case "tools/call":
			s.mu.Lock()
			s.calls[req.Params.Name]++
			s.mu.Unlock()
			if raw, ok := o.results[req.Params.Name]; ok {
				result = json.RawMessage(raw)
			} else {
				result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "called " + req.Params.Name}}}
			}
		default: // ping, and what else a client may ask
			result = map[string]any{}
		}
		w.Header().Set("Mcp-Session-Id", "raw")
		answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		if o.sse {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = fmt.Fprintf(w, "event: message\ndata: %s\n\n", answer)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/mcp"
	return s
}

// Pages returns how many pages of the listing it served, every listing's
// together.
func (s *RawServer) Pages() int { return int(s.pages.Load()) }

// Calls returns how many times the tool was called.
func (s *RawServer) Calls(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[tool]
}
