package servertools

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/setting"
)

// Config is the `tools` section of the server's config: the MCP servers
// whose tools llmrelay runs for the model, and the bounds of the tool loop.
type Config struct {
	// MaxToolTurns is how many turns of a call may run server tools when
	// the request sets no max_tool_turns.
	MaxToolTurns int `yaml:"max_tool_turns"`
	// MaxToolTurnsLimit is the most turns a request may ask for; larger
	// values are lowered to it.
	MaxToolTurnsLimit int `yaml:"max_tool_turns_limit"`
	// MaxResultBytes bounds the text of the result of one tool call as
	// the model is sent it (UTF-8 bytes; its images are not counted); a
	// longer result is cut, with a note to the model and
	// ToolResult.truncated.
	MaxResultBytes int `yaml:"max_tool_result_bytes"`
	// MCPServers are the MCP servers, reached over the streamable HTTP
	// transport.
	MCPServers []ServerConfig `yaml:"mcp_servers"`
}

// ServerConfig is one MCP server, as listed under `tools.mcp_servers`.
type ServerConfig struct {
	// Name is the server's name: its tools are "<name>/<tool>" in requests,
	// API keys' `tools` patterns and ListTools. Required, unique.
	Name string `yaml:"name"`
	// URL is the server's streamable HTTP endpoint, e.g.
	// http://127.0.0.1:3001/mcp. Credentials never go in it: use
	// HeadersEnv.
	URL string `yaml:"url"`
	// HeadersEnv are HTTP headers sent with every request to the server,
	// each value read from the environment variable named here (at start
	// and on reload), so that no secret is in the config file. Values are
	// never logged.
	HeadersEnv map[string]string `yaml:"headers_env"`
	// Allow lists which of the server's tools llmrelay offers, as patterns
	// on the tool's name at the server ("*", "get-*"; see
	// auth.MatchPattern). Required: ["*"] offers every tool.
	Allow []string `yaml:"allow"`
	// Idempotent lists tools (patterns, as Allow) that llmrelay may call
	// again after a transport failure or a timeout, besides those whose
	// annotations say idempotentHint.
	Idempotent []string `yaml:"idempotent"`
	// Timeout bounds one tool call (each try of it); 0 means 30s.
	Timeout time.Duration `yaml:"timeout"`
	// MaxConcurrency bounds the tool calls in flight to the server, over
	// every call llmrelay runs; 0 means 16.
	MaxConcurrency int `yaml:"max_concurrency"`
	// MaxAttempts is how many times an idempotent tool is tried when its
	// server fails or times out (within the call's deadline and the
	// server's retry budget); 0 means 3.
	MaxAttempts int `yaml:"max_attempts"`
	// CAFile is a PEM bundle of the certificate authorities trusted for
	// the server's certificate (an https URL), instead of the system's: an
	// MCP server inside a private network, its certificate issued by the
	// network's own authority. Read at start and on reload.
	CAFile string `yaml:"ca_file"`
	// MaxResponseBytes bounds one answer of the server as llmrelay reads
	// it (a JSON response, or one event of a stream): a tool's result
	// larger than that fails the call unread rather than fill llmrelay's
	// memory; 0 means 16 MiB.
	MaxResponseBytes int `yaml:"max_response_bytes"`
}

// Defaults of the section and of each server.
const (
	DefaultMaxToolTurns      = 8
	DefaultMaxToolTurnsLimit = 32
	DefaultMaxResultBytes    = 64 << 10
	DefaultTimeout           = 30 * time.Second
	DefaultMaxConcurrency    = 16
	DefaultMaxAttempts       = 3
	DefaultMaxResponseBytes  = 16 << 20

	// maxTurnsLimit bounds max_tool_turns_limit, as the contract bounds a
	// request's max_tool_turns.
	maxTurnsLimit = 1000
	// maxResultBytes bounds max_tool_result_bytes: a result is sent back
	// as a Message's content, and every result of a call counts against
	// its output limit (2 MiB by default), so one result is at most half
	// of that.
	maxResultBytes = 1 << 20
	maxTimeout     = time.Hour
	maxConcurrency = 10000
	maxAttempts    = 10
	// minResponseBytes and maxResponseBytes bound max_response_bytes: an
	// answer holds at least the result the model is sent (up to
	// max_tool_result_bytes) and a listing of the server's tools, and
	// reading one costs several times its size in memory.
	minResponseBytes = 64 << 10
	maxResponseBytes = 1 << 30
)

// DefaultConfig returns the section's defaults: no MCP servers.
func DefaultConfig() Config {
	return Config{MaxToolTurns: DefaultMaxToolTurns, MaxToolTurnsLimit: DefaultMaxToolTurnsLimit, MaxResultBytes: DefaultMaxResultBytes}
}

// timeout, maxConcurrency and maxAttempts return the server's settings,
// defaults filled in.
func (c ServerConfig) timeout() time.Duration {
	if c.Timeout == 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

func (c ServerConfig) concurrency() int {
	if c.MaxConcurrency == 0 {
		return DefaultMaxConcurrency
	}
	return c.MaxConcurrency
}

func (c ServerConfig) attempts() int {
	if c.MaxAttempts == 0 {
		return DefaultMaxAttempts
	}
	return c.MaxAttempts
}

func (c ServerConfig) responseBytes() int {
	if c.MaxResponseBytes == 0 {
		return DefaultMaxResponseBytes
	}
	return c.MaxResponseBytes
}

// serverNameRE is what a server's name may be: it is the first segment of
// its tools' names and the start of the names the model sees, so it has
// no "/" and no "__" (the model's names' separator), and starts with a
// letter (Gemini's function names must).
var serverNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)

// envNameRE is what an environment variable's name may be.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedHeaders are headers the MCP transport sets itself.
var reservedHeaders = []string{"Accept", "Content-Type", "Content-Length", "Host", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id", "Connection", "Transfer-Encoding"}

// Check reports every problem of the section, each with the path of its
// setting within the section.
func (c Config) Check(p setting.Problems) {
	bad := p.Bad
	if c.MaxToolTurnsLimit < 1 || c.MaxToolTurnsLimit > maxTurnsLimit {
		bad("max_tool_turns_limit", "%d is not within 1..%d", c.MaxToolTurnsLimit, maxTurnsLimit)
	} else if c.MaxToolTurns < 1 || c.MaxToolTurns > c.MaxToolTurnsLimit {
		bad("max_tool_turns", "%d is not within 1..max_tool_turns_limit (%d)", c.MaxToolTurns, c.MaxToolTurnsLimit)
	}
	if c.MaxResultBytes < 1024 || c.MaxResultBytes > maxResultBytes {
		bad("max_tool_result_bytes", "%d is not within 1024..%d (1 MiB: a call's results count against its output limit)", c.MaxResultBytes, maxResultBytes)
	}
	names := map[string]int{}
	for i, s := range c.MCPServers {
		at := func(field string) string { return fmt.Sprintf("mcp_servers[%d].%s", i, field) }
		switch first, dup := names[s.Name]; {
		case s.Name == "":
			bad(at("name"), "required: the server's tools are named <name>/<tool>")
		case !serverNameRE.MatchString(s.Name) || strings.Contains(s.Name, "__"):
			bad(at("name"), "%q: a server's name is 1 to 63 lower-case letters, digits, '_' or '-', starting with a letter, without \"__\" (for example \"everything\")", s.Name)
		case dup:
			bad(at("name"), "%q is listed twice (also mcp_servers[%d])", s.Name, first)
		default:
			names[s.Name] = i
		}
		if msg := urlProblem(s.URL); msg != "" {
			bad(at("url"), "%s", msg)
		}
		for h, env := range s.HeadersEnv {
			hat := at("headers_env." + h)
			canon := http.CanonicalHeaderKey(h)
			switch {
			case !validHeaderName(h):
				bad(hat, "%q is not an HTTP header name", h)
			case containsFold(reservedHeaders, canon):
				bad(hat, "%s is set by the MCP transport itself", canon)
			}
			if !envNameRE.MatchString(env) {
				bad(hat, "%q is not an environment variable's name", env)
			}
		}
		if len(s.Allow) == 0 {
			bad(at("allow"), `is empty; list the tools llmrelay may offer, e.g. ["*"] for every tool of the server`)
		}
		checkPatterns(s.Allow, at("allow"), bad)
		checkPatterns(s.Idempotent, at("idempotent"), bad)
		if s.CAFile != "" && !strings.HasPrefix(s.URL, "https://") {
			bad(at("ca_file"), "is set, but the url is not https: the server has no certificate to verify")
		}
		if s.Timeout < 0 || s.Timeout > maxTimeout {
			bad(at("timeout"), "%s is not within 0..1h (0: %s)", s.Timeout, DefaultTimeout)
		}
		if s.MaxConcurrency < 0 || s.MaxConcurrency > maxConcurrency {
			bad(at("max_concurrency"), "%d is not within 0..%d (0: %d)", s.MaxConcurrency, maxConcurrency, DefaultMaxConcurrency)
		}
		if s.MaxAttempts < 0 || s.MaxAttempts > maxAttempts {
			bad(at("max_attempts"), "%d is not within 0..%d (0: %d)", s.MaxAttempts, maxAttempts, DefaultMaxAttempts)
		}
		if r := s.MaxResponseBytes; r != 0 && (r < minResponseBytes || r > maxResponseBytes) {
			bad(at("max_response_bytes"), "%d is not within %d..%d (64 KiB to 1 GiB; 0: %d, 16 MiB)", r, minResponseBytes, maxResponseBytes, DefaultMaxResponseBytes)
		}
	}
}

// checkPatterns reports each pattern of a list that could never match a
// tool (auth.UnusablePattern).
func checkPatterns(patterns []string, path string, bad func(path, format string, args ...any)) {
	for j, p := range patterns {
		if auth.UnusablePattern(p) {
			bad(fmt.Sprintf("%s[%d]", path, j), "%q is empty or contains spaces or control characters", p)
		}
	}
}

// urlProblem says what is wrong with an MCP server's URL, "" if nothing.
func urlProblem(raw string) string {
	if raw == "" {
		return "required: the server's streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp"
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		// The parse error quotes the URL, which might hold a secret.
		return "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an http or https URL, e.g. http://127.0.0.1:3001/mcp"
	case u.Host == "":
		return "has no host"
	case u.User != nil:
		return "must not carry credentials: put them in headers_env, read from the environment"
	case u.Fragment != "":
		return "must not have a fragment"
	}
	return ""
}

// validHeaderName reports whether h is an HTTP header name (a token).
func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for _, r := range h {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
