package mcptest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// NewListingServer starts an MCP server on loopback that lists tools as
// given (the JSON array of tools/list's result, written by hand, so that
// it may hold what an SDK would refuse to serve: a schema that is not an
// object, two tools of one name) and answers every tools/call with the
// text "called <name>". It answers with JSON documents, in one session.
// It returns the server's endpoint.
func NewListingServer(t testing.TB, tools string, opts ...ListingOption) string {
	t.Helper()
	o := listingOptions{pages: 1}
	for _, f := range opts {
		f(&o)
	}
	var served atomic.Int64
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
			result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "listing", "version": "1"}}
		case "tools/list":
			page := map[string]any{"tools": json.RawMessage(tools)}
			if served.Add(1) < int64(o.pages) {
				page["nextCursor"] = "more"
			}
			result = page
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "called " + req.Params.Name}}}
		default:
			result = map[string]any{}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "listing")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// ListingOption changes how a listing server lists.
type ListingOption func(*listingOptions)

type listingOptions struct{ pages int }

// Pages makes the listing n pages long, each of the tools given (their
// names repeat from page to page).
func Pages(n int) ListingOption {
	return func(o *listingOptions) { o.pages = n }
}
