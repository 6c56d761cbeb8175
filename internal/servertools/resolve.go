package servertools

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
)

// Why a request's server tools cannot be offered (ResolveError.Err).
var (
	// ErrNotPermitted: the API key's `tools` patterns do not allow the tool.
	ErrNotPermitted = errors.New("the API key may not use this server tool")
	// ErrUnknown: no configured MCP server offers the tool.
	ErrUnknown = errors.New("no MCP server offers this tool")
	// ErrUnavailable: the tool's MCP server is not answering.
	ErrUnavailable = errors.New("the tool's MCP server is not answering")
	// ErrRemoved: the tool, offered in the call's turn before, is no
	// longer offered by any configured MCP server: a reload removed its
	// server, or its tool, while the call ran.
	ErrRemoved = errors.New("no MCP server offers this tool any more")
)

// ResolveError says which entry of a request's server tools cannot be
// offered, and why (Err: ErrNotPermitted, ErrUnknown, ErrUnavailable or
// ErrRemoved).
type ResolveError struct {
	// Field is the request field, "server_tools[i]".
	Field string
	// Entry is the entry as the request wrote it.
	Entry string
	// Err is the sentinel; Detail says more, for the caller.
	Err    error
	Detail string
	// RetryAfter is when the server may answer again (ErrUnavailable).
	RetryAfter time.Duration
}

func (e *ResolveError) Error() string {
	msg := fmt.Sprintf("%s: %s: %v", e.Field, e.Entry, e.Err)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

func (e *ResolveError) Unwrap() error { return e.Err }

// Offer is the server tools offered to the model in one turn of a call,
// found by the name the model calls them.
type Offer struct {
	tools   []*Tool
	byModel map[string]*Tool
}

// Tools returns the tools offered, sorted by name.
func (o *Offer) Tools() []*Tool {
	if o == nil {
		return nil
	}
	return o.tools
}

// Lookup returns the tool the model calls modelName, if offered.
func (o *Offer) Lookup(modelName string) (*Tool, bool) {
	if o == nil {
		return nil, false
	}
	t, ok := o.byModel[modelName]
	return t, ok
}

// Len returns how many tools are offered.
func (o *Offer) Len() int {
	if o == nil {
		return 0
	}
	return len(o.tools)
}

// Resolve decides which server tools a call of the API key named key
// offers the model for a request's server_tools entries: a tool's name
// must be one the key may use (ErrNotPermitted), that a configured
// server's `allow` offers (ErrUnknown) and whose server answers
// (ErrUnavailable); a pattern offers every available tool it matches that
// the key may use, and must match at least one. It reads the current
// config and scopes, so a call resolving again before each turn sees a
// reload's changes. Errors are *ResolveError. No entries: a nil Offer.
//
// prev is the offer of the call's turn before (nil for the first): a tool
// it offered whose server is down right now (a moment's reconnection, say)
// stays offered, so that a conversation's tools do not change with a
// server's hiccup; calling it waits for the server, up to its timeout.
// Permissions and the config are checked afresh all the same: an entry
// that named or matched tools prev offered that the key may no longer use
// is ErrNotPermitted; one that a reload left without any (their server or
// tools removed), ErrRemoved.
func (h *Host) Resolve(key string, entries []string, prev *Offer) (*Offer, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	h.mu.Lock()
	scopes := h.scopes
	h.mu.Unlock()
	cat := h.catalog.Load()
	o := &Offer{byModel: map[string]*Tool{}}
	add := func(t *Tool) {
		if _, dup := o.byModel[t.ModelName]; !dup {
			o.byModel[t.ModelName] = t
			o.tools = append(o.tools, t)
		}
	}
	for i, e := range entries {
		fail := func(err error, detail string) *ResolveError {
			re := &ResolveError{Field: fmt.Sprintf("server_tools[%d]", i), Entry: e, Err: err, Detail: detail}
			if err == ErrUnavailable {
				re.RetryAfter = h.opts.ReconnectMin
			}
			return re
		}
		if !hasPattern(e) {
			server, _, ok := splitName(e)
			switch {
			case !ok:
				return nil, fail(ErrUnknown, `a server tool is named "<server>/<tool>", e.g. everything/echo`)
			case !scopes.allows(key, e):
				return nil, fail(ErrNotPermitted, "")
			}
			t := cat.byName[e]
			kept, wasOffered := prev.byName(e)
			switch {
			case t != nil && t.Available:
				add(t)
			case wasOffered && (t != nil || cat.isDown(server)):
				add(kept)
			case t != nil || cat.isDown(server):
				// A server that never answered has no tools listed: its
				// tool may well exist.
				return nil, fail(ErrUnavailable, "MCP server "+server+" is not answering")
			case wasOffered:
				return nil, fail(ErrRemoved, "a reload of llmrelay's configuration removed it while the call ran")
			default:
				return nil, fail(ErrUnknown, "ListTools lists the server tools you may use")
			}
			continue
		}
		n := 0
		for _, t := range cat.tools {
			_, wasOffered := prev.byName(t.Name)
			if (t.Available || wasOffered) && auth.MatchPattern(e, t.Name) && scopes.allows(key, t.Name) {
				add(t)
				n++
			}
		}
		for _, t := range prev.Tools() {
			// A server that went down since keeps its tools listed; one
			// whose tools were dropped from the catalog is left out.
			if cat.byName[t.Name] == nil && cat.isDown(t.Server) && auth.MatchPattern(e, t.Name) && scopes.allows(key, t.Name) {
				add(t)
				n++
			}
		}
		if n > 0 {
			continue
		}
		// The key's permission decides first, as for a name: a key whose
		// tools were narrowed while the call ran (the admin API, or a
		// reload of its config) may no longer use what the turn before
		// offered, though the servers still offer it.
		for _, t := range prev.Tools() {
			if auth.MatchPattern(e, t.Name) && !scopes.allows(key, t.Name) {
				return nil, fail(ErrNotPermitted, "it matched "+t.Name+" in the call's turn before")
			}
		}
		first, _, _ := strings.Cut(e, "/")
		for _, s := range cat.down {
			if auth.MatchPattern(first, s) || strings.HasPrefix(e, "**") {
				return nil, fail(ErrUnavailable, "it matches no tool of the MCP servers that answer, and server "+s+" is not answering")
			}
		}
		if slices.ContainsFunc(prev.Tools(), func(t *Tool) bool { return auth.MatchPattern(e, t.Name) }) {
			return nil, fail(ErrRemoved, "it matched tools in the call's turn before; a reload of llmrelay's configuration removed them while the call ran")
		}
		return nil, fail(ErrUnknown, "it matches no server tool the API key may use; ListTools lists them")
	}
	return o, nil
}

// byName returns the tool of the offer named name.
func (o *Offer) byName(name string) (*Tool, bool) {
	for _, t := range o.Tools() {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// isDown reports whether the configured server named name does not answer.
func (c *catalog) isDown(name string) bool {
	for _, s := range c.down {
		if s == name {
			return true
		}
	}
	return false
}

// List returns the tools the API key named key may use, of the server
// named server only when it is not empty, with their availability, and
// the configured servers of which the key may use a tool, each with the
// number of those tools (Tools). A server that never listed its tools is
// included when the key's patterns may cover one of them
// (auth.MatchPatternUnder), with none. A key learns nothing of the other
// servers, not even their names. With open scopes (the server has no API
// keys), every tool and every server.
func (h *Host) List(key, server string) ([]*Tool, []ServerStatus) {
	h.mu.Lock()
	scopes := h.scopes
	h.mu.Unlock()
	cat := h.catalog.Load()
	var tools []*Tool
	usable := map[string]int{}
	for _, t := range cat.tools {
		if (server == "" || t.Server == server) && scopes.allows(key, t.Name) {
			tools = append(tools, t)
			usable[t.Server]++
		}
	}
	var servers []ServerStatus
	for _, s := range cat.servers {
		if server != "" && s.Name != server {
			continue
		}
		if !scopes.Open {
			if usable[s.Name] == 0 && (!s.ListedAt.IsZero() || !scopes.mayReach(key, s.Name)) {
				continue
			}
			s.Tools = usable[s.Name]
		}
		servers = append(servers, s)
	}
	return tools, servers
}
