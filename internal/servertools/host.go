// Package servertools owns llmrelay's server tools: the tools of MCP
// servers (Model Context Protocol) that llmrelay runs for the model inside
// a call. It keeps one client connection to each configured server (the
// official go-sdk, streamable HTTP transport), lists each server's tools at
// start, on reload and on its tools/list_changed notification, knows which
// servers answer, decides which tools an API key may use (Resolve, List),
// and calls a tool (Call): within the server's concurrency bound, with a
// progress token whose notifications reach the caller, cancelled at the
// server when the call ends, tried again after a transport failure or a
// timeout only when the tool is idempotent, its result turned into the
// text the model is sent, bounded.
//
// The loop of turns that calls tools is the engine's (internal/engine);
// this package knows nothing of gRPC or of providers.
package servertools

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/net/http/httpguts"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/capool"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// Tool is a server tool llmrelay offers: a tool an MCP server listed that
// its config's `allow` patterns let through.
type Tool struct {
	// Name is the tool's name in requests, keys and ListTools:
	// "<server>/<tool>".
	Name string
	// Server is the MCP server's configured name; ServerTool the tool's
	// name at that server.
	Server, ServerTool string
	// ModelName is the name the model is offered the tool by (see
	// baseModelName): unique among the tools offered.
	ModelName string
	// Title and Description are the server's.
	Title, Description string
	// InputSchema is the JSON Schema of the tool's arguments, as the
	// server gave it.
	InputSchema json.RawMessage
	// Idempotent says the tool may be called again after a transport
	// failure or a timeout: its annotations say idempotentHint, or the
	// config's `idempotent` patterns match it.
	Idempotent bool
	// Available says the tool's server answers.
	Available bool
}

// ServerStatus is an MCP server's state, as ListTools shows it.
type ServerStatus struct {
	Name      string
	Available bool
	// ListedAt is when its tools were last listed; zero if never.
	ListedAt time.Time
	// Tools is how many tools llmrelay offers from it.
	Tools int
}

// Scopes say which server tools each API key may use: its `tools`
// patterns (auth.MatchPattern on "<server>/<tool>"), by key name. Open
// (the server has no API keys) allows every tool.
type Scopes struct {
	Open bool
	Keys map[string][]string
	// Stored returns the patterns of a key that is not in Keys: one made
	// through the admin API (internal/apikeys); nil: such keys may use no
	// tool.
	Stored func(key string) []string
}

// allows reports whether key may use the tool named name.
func (s Scopes) allows(key, name string) bool {
	if s.Open {
		return true
	}
	for _, p := range s.patterns(key) {
		if auth.MatchPattern(p, name) {
			return true
		}
	}
	return false
}

// mayReach reports whether key's patterns may cover a tool of the server
// named server whose tools are not known (one that never answered).
func (s Scopes) mayReach(key, server string) bool {
	if s.Open {
		return true
	}
	for _, p := range s.patterns(key) {
		if auth.MatchPatternUnder(p, server+"/") {
			return true
		}
	}
	return false
}

// patterns are the tools patterns of the key named key.
func (s Scopes) patterns(key string) []string {
	patterns, ok := s.Keys[key]
	if !ok && s.Stored != nil {
		patterns = s.Stored(key)
	}
	return patterns
}

// Options are a Host's dependencies; every field may be left zero.
type Options struct {
	Logger  *slog.Logger
	Metrics *metrics.Metrics
	// Budget returns an MCP server's retry budget, by the server's name
	// (nil, or a nil func: retries are bounded by max_attempts only).
	Budget func(server string) retry.Throttle
	// Backoff is the wait before try n+1 of an idempotent tool (nil:
	// 100ms doubled per try, at most 2s, jittered).
	Backoff func(n int) time.Duration
	// ReconnectMin and ReconnectMax bound the wait between attempts to
	// reach a server that is down: it starts at ReconnectMin and doubles up
	// to ReconnectMax (zero: 500ms and 30s).
	ReconnectMin, ReconnectMax time.Duration
}

// Host keeps the connections to the configured MCP servers and runs their
// tools. It outlives config reloads (Apply). It is safe for concurrent
// use.
type Host struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	cfg     Config
	scopes  Scopes
	servers map[string]*conn
	closed  bool
	// catalog is the tools and servers as of the last change.
	catalog atomic.Pointer[catalog]
	// tokens numbers the progress tokens of tool calls.
	tokens atomic.Uint64
	// changed is closed, and replaced, whenever the catalog changes.
	changed chan struct{}
}

// NewHost returns a Host with no servers; Apply gives it its config.
func NewHost(o Options) *Host {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ReconnectMin <= 0 {
		o.ReconnectMin = 500 * time.Millisecond
	}
	if o.ReconnectMax < o.ReconnectMin {
		o.ReconnectMax = max(30*time.Second, o.ReconnectMin)
	}
	h := &Host{opts: o, log: o.Logger, servers: map[string]*conn{}, cfg: DefaultConfig(), changed: make(chan struct{})}
	h.catalog.Store(&catalog{byName: map[string]*Tool{}})
	return h
}

// Prepared is a tools section ready to apply: checked by the config, with
// its servers' headers read from the environment and their ca_file
// bundles from their files, and the API keys' scopes.
type Prepared struct {
	cfg     Config
	headers map[string]http.Header
	// cas are the ca_file bundles, by server name (none: the system's).
	cas    map[string]caBundle
	scopes Scopes
}

// caBundle is a ca_file's pool, and its bytes: a reload reconnects the
// server when they change.
type caBundle struct {
	pool *x509.CertPool
	pem  []byte
}

// Prepare reads the headers of cfg's servers from the environment
// (getenv) and their ca_file bundles, and pairs cfg with the keys' scopes.
// It fails when a header's variable is unset or empty, or holds a control
// character once the whitespace around it is dropped, naming the
// variable, never its value; or when a ca_file cannot be read or holds no
// certificate.
func Prepare(cfg Config, scopes Scopes, getenv func(string) string) (*Prepared, error) {
	p := &Prepared{cfg: cfg, headers: map[string]http.Header{}, cas: map[string]caBundle{}, scopes: scopes}
	for i, s := range cfg.MCPServers {
		if s.CAFile != "" {
			pool, pem, err := capool.Read(s.CAFile)
			if err != nil {
				return nil, fmt.Errorf("tools.mcp_servers[%d].ca_file: %w", i, err)
			}
			p.cas[s.Name] = caBundle{pool: pool, pem: pem}
		}
		hdr := http.Header{}
		keys := make([]string, 0, len(s.HeadersEnv))
		for k := range s.HeadersEnv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env := s.HeadersEnv[k]
			v := strings.TrimSpace(getenv(env)) // a secret file's newline
			if v == "" {
				return nil, fmt.Errorf("tools.mcp_servers[%d].headers_env.%s names %s, but that environment variable is unset or empty", i, k, env)
			}
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, fmt.Errorf("tools.mcp_servers[%d].headers_env.%s names %s, whose value holds a line break or control character, which an HTTP header cannot carry (the value is not shown)", i, k, env)
			}
			hdr.Set(k, v)
		}
		p.headers[s.Name] = hdr
	}
	return p, nil
}

// Config returns the tools section the host runs with.
func (h *Host) Config() Config {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg
}

// Apply makes p the host's config: servers new to it are connected (in
// the background: a server that is down does not hold Apply up, its tools
// are unavailable until it answers), servers that left it are
// disconnected (their calls in flight fail), a server whose URL or
// headers changed is reconnected, and every other server keeps its
// connection and is listed again.
func (h *Host) Apply(p *Prepared) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.cfg, h.scopes = p.cfg, p.scopes
	var stopped []*conn
	keep := map[string]bool{}
	for _, sc := range p.cfg.MCPServers {
		keep[sc.Name] = true
		hdr, ca := p.headers[sc.Name], p.cas[sc.Name]
		c := h.servers[sc.Name]
		if c != nil && (c.url != sc.URL || !headersEqual(c.headers, hdr) || c.maxResponse != sc.responseBytes() || !bytes.Equal(c.caPEM, ca.pem)) {
			stopped = append(stopped, c)
			c = nil
		}
		if c == nil {
			c = h.newConn(sc, hdr, ca)
			h.servers[sc.Name] = c
			c.start()
			continue
		}
		c.reconfigure(sc)
	}
	for name, c := range h.servers {
		if !keep[name] {
			stopped = append(stopped, c)
			delete(h.servers, name)
			h.opts.Metrics.MCPServerRemoved(name)
		}
	}
	h.rebuildLocked()
	h.mu.Unlock()
	// A server's goroutine takes h.mu to report its state: stop them with
	// it released.
	for _, c := range stopped {
		c.stop()
	}
}

// Settle waits until every server has been tried once (connected and
// listed, or failed), or ctx ends: the server waits for it, briefly, before
// it serves, so that the first calls find the servers that answer.
func (h *Host) Settle(ctx context.Context) {
	h.mu.Lock()
	var tried []chan struct{}
	for _, c := range h.servers {
		tried = append(tried, c.tried)
	}
	h.mu.Unlock()
	for _, t := range tried {
		select {
		case <-t:
		case <-ctx.Done():
			return
		}
	}
}

// Close disconnects every server. Calls in flight fail.
func (h *Host) Close() {
	h.mu.Lock()
	h.closed = true
	servers := h.servers
	h.servers = map[string]*conn{}
	h.mu.Unlock()
	for _, c := range servers {
		c.stop()
	}
}

// catalog is the host's tools and servers at one moment.
type catalog struct {
	tools   []*Tool // sorted by Name
	byName  map[string]*Tool
	servers []ServerStatus // sorted by Name
	// down lists the servers that do not answer.
	down []string
}

// rebuild recomputes the catalog after a server's tools or state changed.
func (h *Host) rebuild() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rebuildLocked()
}

func (h *Host) rebuildLocked() {
	cat := &catalog{byName: map[string]*Tool{}}
	for _, c := range h.servers {
		st := c.status()
		cat.servers = append(cat.servers, st.ServerStatus)
		if !st.Available {
			cat.down = append(cat.down, st.Name)
		}
		cat.tools = append(cat.tools, st.tools...)
	}
	sort.Slice(cat.tools, func(i, j int) bool { return cat.tools[i].Name < cat.tools[j].Name })
	sort.Slice(cat.servers, func(i, j int) bool { return cat.servers[i].Name < cat.servers[j].Name })
	sort.Strings(cat.down)
	// Model names are unique over the catalog: a name taken by a tool that
	// sorts first makes the next one's hashed.
	taken := map[string]bool{}
	for _, t := range cat.tools {
		if taken[t.ModelName] {
			t.ModelName = hashedModelName(t.ModelName, t.Name)
		}
		taken[t.ModelName] = true
		cat.byName[t.Name] = t
	}
	h.catalog.Store(cat)
	close(h.changed)
	h.changed = make(chan struct{})
}

// WaitAvailable waits until the MCP server named server answers and its
// tools are listed, or ctx ends.
func (h *Host) WaitAvailable(ctx context.Context, server string) error {
	for {
		h.mu.Lock()
		changed := h.changed
		h.mu.Unlock()
		for _, s := range h.catalog.Load().servers {
			if s.Name == server && s.Available {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("MCP server %s: %w", server, ctx.Err())
		case <-changed:
		}
	}
}

// newConn makes the connection state of one server, not yet started; ca
// is its ca_file bundle, if any.
func (h *Host) newConn(sc ServerConfig, hdr http.Header, ca caBundle) *conn {
	base := http.DefaultTransport
	if ca.pool != nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: ca.pool}
		base = tr
	}
	c := &conn{
		h: h, name: sc.Name, url: sc.URL, headers: hdr, maxResponse: sc.responseBytes(), caPEM: ca.pem, base: base,
		cfg: sc, sem: make(chan struct{}, sc.concurrency()),
		up: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{}), tried: make(chan struct{}),
		progress: map[string]func(Progress){},
	}
	c.life, c.cancel = context.WithCancel(context.Background())
	c.client = mcp.NewClient(&mcp.Implementation{Name: "llmrelay", Version: "1"}, &mcp.ClientOptions{
		Logger:       h.log.With("mcp_server", sc.Name),
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.requestRelist()
		},
	})
	return c
}

func headersEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// conn is one MCP server: its session, its tools, its concurrency bound
// and the goroutine that keeps it connected.
type conn struct {
	h       *Host
	name    string
	url     string
	headers http.Header
	// maxResponse is max_response_bytes: its transport's bound, fixed for
	// the connection's life (a reload that changes it reconnects), as the
	// ca_file bundle is, and base, the HTTP transport that trusts it.
	maxResponse int
	caPEM       []byte
	base        http.RoundTripper
	client      *mcp.Client

	mu  sync.Mutex
	cfg ServerConfig
	// sem bounds the calls in flight (max_concurrency); a reload that
	// changes the bound makes a new one, calls in flight release the one
	// they took.
	sem chan struct{}
	// queued counts the calls waiting for a slot.
	queued atomic.Int32
	// session is the live session, nil while the server is down; gen
	// numbers sessions, so that a failure reported on an old one does not
	// end a newer one.
	session *mcp.ClientSession
	gen     uint64
	// tasks are the tools the live session's listings say must run as
	// tasks.
	tasks *taskNotes
	// up is closed while a session is up; a new one replaces it when the
	// session goes down.
	up chan struct{}
	// listed are the tools of the last listing (kept while the server is
	// down), listedAt when it was made.
	listed   []*mcp.Tool
	listedAt time.Time
	// progress routes progress notifications by token to the calls.
	progress map[string]func(Progress)

	// tried is closed once the first attempt to connect ended, either way.
	tried     chan struct{}
	triedOnce sync.Once

	wake   chan struct{}
	relist atomic.Bool
	// life ends when the connection is stopped (a reload removed the
	// server or reconnects it, the host closed): the calls in flight on
	// it end with it (errDisconnected).
	life   context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// connStatus is a server's state with its tools, for the catalog.
type connStatus struct {
	ServerStatus
	tools []*Tool
}

// status returns the server's state and its offered tools.
func (c *conn) status() connStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := connStatus{ServerStatus: ServerStatus{Name: c.name, Available: c.session != nil, ListedAt: c.listedAt}}
	for _, t := range c.listed {
		if !matchAny(c.cfg.Allow, t.Name) {
			continue
		}
		tool := &Tool{
			Name: c.name + "/" + t.Name, Server: c.name, ServerTool: t.Name,
			ModelName: baseModelName(c.name, t.Name),
			Title:     t.Title, Description: t.Description,
			Idempotent: t.Annotations != nil && t.Annotations.IdempotentHint || matchAny(c.cfg.Idempotent, t.Name),
			Available:  st.Available,
		}
		if t.InputSchema != nil {
			if b, err := json.Marshal(t.InputSchema); err == nil {
				tool.InputSchema = b
			}
		}
		if tool.Title == "" && t.Annotations != nil {
			tool.Title = t.Annotations.Title
		}
		st.tools = append(st.tools, tool)
	}
	st.Tools = len(st.tools)
	return st
}

func matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if auth.MatchPattern(p, s) {
			return true
		}
	}
	return false
}

// start starts the goroutine that keeps the server connected.
func (c *conn) start() {
	c.h.opts.Metrics.MCPServerUp(c.name, false)
	go c.run(c.life)
}

// stop ends the goroutine and closes the session; it returns once both
// are done.
func (c *conn) stop() {
	c.cancel()
	<-c.done
}

// reconfigure applies a reload's settings to a server whose URL, headers,
// ca_file and max_response_bytes did not change, and lists its tools
// again.
func (c *conn) reconfigure(sc ServerConfig) {
	c.mu.Lock()
	if sc.concurrency() != cap(c.sem) {
		c.sem = make(chan struct{}, sc.concurrency())
	}
	c.cfg = sc
	c.mu.Unlock()
	c.requestRelist()
}

// requestRelist asks the goroutine to list the server's tools again.
func (c *conn) requestRelist() {
	c.relist.Store(true)
	c.signal()
}

func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run keeps the server connected until ctx ends: it connects and lists the
// tools, lists them again when asked, and after a failure tries again,
// waiting ReconnectMin, then twice as long each time, up to ReconnectMax.
func (c *conn) run(ctx context.Context) {
	defer close(c.done)
	defer c.down(0, nil, true)
	o := c.h.opts
	wait := o.ReconnectMin
	for {
		c.mu.Lock()
		connected := c.session != nil
		c.mu.Unlock()
		var err error
		switch {
		case !connected:
			c.relist.Store(false)
			err = c.connect(ctx)
			c.triedOnce.Do(func() { close(c.tried) })
		case c.relist.Swap(false):
			err = c.list(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		var pause <-chan time.Time
		if err != nil {
			c.h.log.Warn("MCP server unavailable", "mcp_server", c.name, "error", c.loggable(err), "retry_in", wait)
			t := time.NewTimer(wait)
			pause = t.C
			wait = min(2*wait, o.ReconnectMax)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-pause:
			case <-c.wake:
				t.Stop()
			}
			continue
		}
		c.mu.Lock()
		if c.session != nil {
			wait = o.ReconnectMin
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
	}
}

// connect opens a session and lists the server's tools.
func (c *conn) connect(ctx context.Context) error {
	c.mu.Lock()
	timeout := c.cfg.timeout()
	c.mu.Unlock()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tasks := newTaskNotes()
	t := &mcp.StreamableClientTransport{
		Endpoint: c.url,
		HTTPClient: &http.Client{
			Transport:     sseTransport{base: c.base, headers: c.headers, progress: c.notifyProgress, maxBody: c.maxResponse, tasks: tasks},
			CheckRedirect: sameOriginRedirects,
		},
		// A stream cut in the middle of a call fails the call at once;
		// trying the call again is this package's decision (idempotent
		// tools only), not the transport's.
		MaxRetries: -1,
		// sseTransport bounds every answer at max_response_bytes, failing
		// the call it answers only; the SDK's own bound on an event, which
		// fails the whole session, lies beyond it.
		MaxEventSize: c.maxResponse + 64<<10,
	}
	cs, err := c.client.Connect(tctx, t, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	tools, err := c.listTools(tctx, cs, tasks)
	if err != nil {
		_ = cs.Close()
		return err
	}
	c.mu.Lock()
	c.gen++
	gen := c.gen
	c.session, c.tasks, c.listed, c.listedAt = cs, tasks, tools, time.Now()
	close(c.up)
	c.mu.Unlock()
	c.h.opts.Metrics.MCPServerUp(c.name, true)
	c.h.log.Info("MCP server connected", "mcp_server", c.name, "tools", len(tools))
	c.h.rebuild()
	// The session ends when the server goes away (the transport gives up)
	// or it is closed: either way the server is down until reconnected.
	go func() {
		err := cs.Wait()
		c.down(gen, err, false)
	}()
	return nil
}

// list lists the server's tools again on the live session.
func (c *conn) list(ctx context.Context) error {
	c.mu.Lock()
	cs, tasks, gen, timeout := c.session, c.tasks, c.gen, c.cfg.timeout()
	c.mu.Unlock()
	if cs == nil {
		return nil
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tools, err := c.listTools(tctx, cs, tasks)
	if err != nil {
		c.down(gen, err, false)
		return err
	}
	c.mu.Lock()
	c.listed, c.listedAt = tools, time.Now()
	c.mu.Unlock()
	c.h.log.Debug("MCP server's tools listed", "mcp_server", c.name, "tools", len(tools))
	c.h.rebuild()
	return nil
}

// listTools lists the server's tools, leaving out, with a warning, those
// no model could be offered (see unofferable; tasks says which must run
// as tasks). It reads the listing page
// by page, not through the SDK's iterator, which hides the pages: a
// server whose pages never end is refused as a malformed listing, by its
// tools (maxListedTools) or, when its pages hold none, by those pages
// (maxEmptyPages), instead of being listed until the server's timeout.
func (c *conn) listTools(ctx context.Context, cs *mcp.ClientSession, tasks *taskNotes) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	seen := map[string]bool{}
	n, empty := 0, 0
	params := &mcp.ListToolsParams{}
	for {
		page, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		if len(page.Tools) == 0 {
			if empty++; empty > maxEmptyPages {
				return nil, fmt.Errorf("tools/list: %w: more than %d pages without a tool", errMalformedListing, maxEmptyPages)
			}
		}
		for _, t := range page.Tools {
			if n++; n > maxListedTools {
				return nil, fmt.Errorf("tools/list: %w: more than %d tools", errMalformedListing, maxListedTools)
			}
			if why := unofferable(t, seen, tasks.required(params.Cursor, t.Name)); why != "" {
				c.h.log.Warn("MCP server's tool not offered", "mcp_server", c.name, "tool", t.Name, "reason", why)
				continue
			}
			seen[t.Name] = true
			tools = append(tools, t)
		}
		if page.NextCursor == "" {
			return tools, nil
		}
		params.Cursor = page.NextCursor
	}
}

// The bounds of one server's listing, every page of it together: at most
// maxListedTools tools, and maxEmptyPages pages without a tool (a server
// may end its listing with an empty page, or send one whose tools the SDK
// refused). A listing past either never ends, or is not worth reading to
// its end: the server stays down, its warning saying why.
const (
	maxListedTools = 10000
	maxEmptyPages  = 16
)

// errMalformedListing is a listing past its bounds.
var errMalformedListing = errors.New("a malformed listing")

// unofferable says why a listed tool cannot be offered to a model, ""
// when it can. MCP requires a tool's name to be unique within its server
// and its input schema to be an object's ("type": "object"), as every
// provider does of a function's parameters: a tool that breaks either
// would fail every call that offers it at the provider (a 400), or make
// its name ambiguous. A tool without a schema takes no arguments. A tool
// that must run as a task (mustTask: its listing says
// execution.taskSupport "required") fails every call llmrelay makes of
// it, which runs no tasks.
func unofferable(t *mcp.Tool, seen map[string]bool, mustTask bool) string {
	switch {
	case t.Name == "":
		return "it has no name"
	case strings.ContainsFunc(t.Name, unicode.IsControl):
		// An escape or a line break in a name would reach terminals,
		// logs and every client that lists it.
		return "its name holds control characters"
	case seen[t.Name]:
		return "the server listed another tool of that name before it"
	case mustTask:
		return "it must run as an MCP task (execution.taskSupport: required), and llmrelay runs no tasks"
	case t.InputSchema == nil:
		return ""
	}
	if m, ok := t.InputSchema.(map[string]any); !ok || m["type"] != "object" {
		return `its inputSchema is not an object's JSON Schema ("type": "object")`
	}
	return ""
}

// down marks session gen as gone (0: whichever is live) and wakes the
// goroutine to reconnect; final says the server is being stopped.
func (c *conn) down(gen uint64, err error, final bool) {
	c.mu.Lock()
	cs := c.session
	if cs == nil || gen != 0 && gen != c.gen {
		c.mu.Unlock()
		return
	}
	c.session = nil
	c.up = make(chan struct{})
	c.mu.Unlock()
	go cs.Close() // sends the session's DELETE, bounded by the SDK
	if !final {
		// (A server stopped by Apply is either gone from the gauge or
		// replaced by a new connection that reports itself.)
		c.h.opts.Metrics.MCPServerUp(c.name, false)
		c.h.log.Warn("MCP server connection lost", "mcp_server", c.name, "error", c.loggable(err))
		c.h.rebuild()
		c.signal()
	}
}

// loggable returns err for the log: its text without the query of the
// server's url, which net/http quotes in a request's failure ("Post
// \"http://host/mcp?token=...\": dial tcp ..."), and which may hold a
// token (check-config masks it).
func (c *conn) loggable(err error) error {
	u, perr := url.Parse(c.url)
	if err == nil || perr != nil || u.RawQuery == "" {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, "?"+u.RawQuery) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(msg, "?"+u.RawQuery, ""), err: err}
}

// redactedError is an error whose text leaves something of its cause's out.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// liveSession returns the live session, waiting for one until ctx ends.
func (c *conn) liveSession(ctx context.Context) (*mcp.ClientSession, uint64, error) {
	for {
		c.mu.Lock()
		cs, gen, up := c.session, c.gen, c.up
		c.mu.Unlock()
		if cs != nil {
			return cs, gen, nil
		}
		select {
		case <-ctx.Done():
			return nil, 0, errNotConnected
		case <-c.done:
			return nil, 0, errRemoved
		case <-up:
		}
	}
}

var (
	errNotConnected = errors.New("the MCP server is not connected")
	errRemoved      = errors.New("the MCP server left the config")
)
