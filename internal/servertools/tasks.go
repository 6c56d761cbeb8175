package servertools

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MCP's tasks extension lets a tool say, in its listing, that it must run
// as a task (`"execution": {"taskSupport": "required"}`): a plain
// tools/call of it fails ("requires task augmentation"). llmrelay runs no
// tasks, so it does not offer such a tool: a model offered it could never
// call it. The go-sdk's Tool (v1.8.0) has no execution field, and drops
// it as it decodes tools/list; its middleware sees the decoded result
// only, and a Connection wrapped around its streamable transport would
// hide that transport's session hooks from the SDK. sseTransport sees
// every answer's bytes before the SDK decodes them, as it does for
// progress: it notes, in the session's taskNotes, which tools of each
// tools/list answer must run as tasks, and the listing leaves them out.

// taskNotes are the tools of a session's tools/list answers that must run
// as tasks, by the cursor of the page that listed them ("" for the
// first). A page answered again replaces what its last answer said; a
// page the SDK serves from its cache (ttlMs) keeps it. It is safe for
// concurrent use.
type taskNotes struct {
	mu    sync.Mutex
	pages map[string]map[string]bool
}

func newTaskNotes() *taskNotes {
	return &taskNotes{pages: map[string]map[string]bool{}}
}

// note reads msg, the JSON-RPC answer to the tools/list of the page at
// cursor, as the server sent it. An answer that is not a listing (an
// error, a malformed one, which the SDK refuses) notes nothing.
func (n *taskNotes) note(cursor string, msg []byte) {
	m, err := jsonrpc.DecodeMessage(msg)
	resp, ok := m.(*jsonrpc.Response)
	if err != nil || !ok || resp.Error != nil {
		return
	}
	var page struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(resp.Result, &page) != nil {
		return
	}
	required := map[string]bool{}
	for _, raw := range page.Tools {
		// One tool at a time: a tool whose execution is not what MCP
		// says (the SDK ignores it) does not hide the others'.
		var t struct {
			Name      string `json:"name"`
			Execution struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		}
		if json.Unmarshal(raw, &t) == nil && t.Execution.TaskSupport == "required" {
			required[t.Name] = true
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(required) == 0 {
		delete(n.pages, cursor)
		return
	}
	n.pages[cursor] = required
}

// required reports whether the tool named name, on the page at cursor,
// must run as a task. (A page that lists two tools of one name, one of
// which must, makes the name one that must: a call by it may reach that
// one.)
func (n *taskNotes) required(cursor, name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pages[cursor][name]
}

// listingCursor returns the cursor of the tools/list call that r posts
// ("" for the first page); ok is false when r posts anything else.
func listingCursor(r *http.Request) (cursor string, ok bool) {
	if r.Method != http.MethodPost || r.GetBody == nil {
		return "", false
	}
	body, err := r.GetBody()
	if err != nil {
		return "", false
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil || !bytes.Contains(b, []byte(`"tools/list"`)) { // a call's arguments are not decoded again
		return "", false
	}
	m, err := jsonrpc.DecodeMessage(b)
	req, isReq := m.(*jsonrpc.Request)
	if err != nil || !isReq || req.Method != "tools/list" || !req.ID.IsValid() {
		return "", false
	}
	var params struct {
		Cursor string `json:"cursor"`
	}
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params, &params) // null params: the first page
	}
	return params.Cursor, true
}
