package cli

import (
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode"

	"google.golang.org/grpc/codes"

	"github.com/llmrelay/llmrelay/client"
	"github.com/llmrelay/llmrelay/internal/apierr"
)

// The environment variables the client commands (generate, embed, models,
// tools, keys) read.
const (
	// EnvAddr is the server address the client commands call.
	EnvAddr = "LLMRELAY_ADDR"
	// EnvAPIKey is the API key they send.
	EnvAPIKey = "LLMRELAY_API_KEY"
	// defaultAddr is where `make run` serves.
	defaultAddr = "127.0.0.1:50051"
)

// callFlags are the flags of the commands that call a running server.
type callFlags struct {
	addr, key      string
	tls, plaintext bool
	json           bool
}

// define defines the flags on fs.
func (f *callFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "addr", "", "the server's `HOST:PORT` (default $"+EnvAddr+", else "+defaultAddr+")")
	fs.StringVar(&f.key, "key", "", "the API `KEY` to send (default $"+EnvAPIKey+")")
	fs.BoolVar(&f.tls, "tls", false, "use TLS, verified with the system's roots (the default for an address that is not loopback)")
	fs.BoolVar(&f.plaintext, "plaintext", false, "do not use TLS (the default for a loopback address; a key then travels in the clear)")
	fs.BoolVar(&f.json, "json", false, "print what the server sent as JSON, one object a line")
}

// dial returns a client for the flags' server, with the environment's
// defaults filled in.
func (f *callFlags) dial(cmd string, env Env) (*client.Client, string, error) {
	if f.tls && f.plaintext {
		return nil, "", usagef(cmd, "%s: --tls and --plaintext both given", cmd)
	}
	addr := f.addr
	if addr != "" {
		if problem := addrProblem(addr); problem != "" {
			return nil, "", usagef(cmd, "%s: --addr %s", cmd, problem)
		}
	} else if addr = env.Getenv(EnvAddr); addr != "" {
		if problem := addrProblem(addr); problem != "" {
			return nil, "", fmt.Errorf("%s: $%s %s", cmd, EnvAddr, problem)
		}
	} else {
		addr = defaultAddr
	}
	key := f.apiKey(env)
	var opts []client.Option
	if key != "" {
		opts = append(opts, client.WithAPIKey(key))
	}
	if f.plaintext || (!f.tls && isLoopback(addr)) {
		opts = append(opts, client.WithInsecure())
	} else {
		opts = append(opts, client.WithTLS(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	c, err := client.New(addr, opts...)
	if err != nil {
		return nil, "", err
	}
	return c, addr, nil
}

// addrProblem says what is wrong with a server address given as HOST:PORT,
// or "" when nothing is. A host without a port is one: gRPC dials it on
// port 443 without a word, where no llmrelay listens unless a TLS load
// balancer fronts it, and the call fails only when its deadline ends (or
// reaches some other server). A gRPC target with a scheme
// ("dns:///relay.example.com", "unix:///run/llmrelay.sock") is gRPC's to
// read, its defaults included.
func addrProblem(addr string) string {
	if strings.Contains(addr, ":///") || strings.HasPrefix(addr, "unix:") {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err == nil && port != "" {
		return ""
	}
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
	}
	if _, nerr := strconv.ParseUint(host, 10, 16); nerr == nil && err != nil {
		return fmt.Sprintf("%q is a port without a host; use 127.0.0.1:%s (this machine) or HOST:%s", addr, host, host)
	}
	if host == "" {
		return fmt.Sprintf("%q is neither a host nor a port; give the server's HOST:PORT, e.g. %s", addr, defaultAddr)
	}
	return fmt.Sprintf("%q has no port, and gRPC would dial 443; give the server's: %s (llmrelay's default listen), or %s behind a TLS load balancer",
		addr, net.JoinHostPort(host, "50051"), net.JoinHostPort(host, "443"))
}

// apiKey is the API key the flags' calls send: --key, else
// $LLMRELAY_API_KEY; "" for none.
func (f *callFlags) apiKey(env Env) string {
	if f.key != "" {
		return f.key
	}
	return env.Getenv(EnvAPIKey)
}

// isLoopback reports whether addr (HOST:PORT, or a gRPC target) names this
// machine: localhost or a loopback IP.
func isLoopback(addr string) bool {
	addr = strings.TrimPrefix(addr, "dns:///")
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkWait checks the --timeout of a command that waits for a server
// (models, tools, health): 0 or less gave up before asking, and the
// command said DEADLINE_EXCEEDED as if the server were slow.
func checkWait(cmd string, d time.Duration) error {
	if d <= 0 {
		return usagef(cmd, "%s: --timeout %v: give how long to wait for the server, e.g. 30s", cmd, d)
	}
	return nil
}

// callError words a failed call for the command line: the code, the
// ErrorInfo reason, the message, and what the server suggested.
func callError(addr string, err error) error {
	e := client.FromError(err)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", addr, codeName(e.Code))
	if e.Reason != "" {
		fmt.Fprintf(&b, " %s", e.Reason)
	}
	fmt.Fprintf(&b, ": %s", e.Message)
	for _, v := range e.FieldViolations {
		if line := v.GetField() + ": " + v.GetDescription(); !strings.Contains(e.Message, line) {
			fmt.Fprintf(&b, "\n  %s", line)
		}
	}
	if hint := tlsHint(e); hint != "" {
		fmt.Fprintf(&b, "\n  %s", hint)
	}
	if hint := modelHint(e); hint != "" {
		fmt.Fprintf(&b, "\n  %s", hint)
	}
	if e.Code == codes.Unauthenticated && e.Reason == apierr.ReasonCredentialsMissing {
		// The server's words name the header; the command line sets it
		// from a flag or a variable.
		fmt.Fprintf(&b, "\n  this server has API keys: give one with --key KEY or $%s", EnvAPIKey)
	}
	if refused(e) {
		fmt.Fprintf(&b, "\n  nothing listens at %s: is llmrelay running there? (--addr or LLMRELAY_ADDR names another address)", addr)
	}
	if e.HasRetryDelay {
		fmt.Fprintf(&b, "\n  the server suggests calling again in %v", waitFor(e.RetryDelay))
	}
	if id := e.Metadata["request_id"]; id != "" {
		fmt.Fprintf(&b, "\n  request id %s", id)
	}
	return fmt.Errorf("%s", b.String())
}

// waitFor is a delay the server suggests, for people: rounded up (calling
// a moment early would fail again) to the millisecond, or to the second
// from a minute on; RetryInfo carries nanoseconds, and a budget's reset
// hours away read "2h26m39.989440098s".
func waitFor(d time.Duration) time.Duration {
	unit := time.Millisecond
	if d >= time.Minute {
		unit = time.Second
	}
	if r := d.Truncate(unit); r < d {
		return r + unit
	}
	return d
}

// codeName is a gRPC code's name as the gRPC spec writes it:
// DEADLINE_EXCEEDED, not DeadlineExceeded.
func codeName(c codes.Code) string {
	if c == codes.OK {
		return "OK"
	}
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// refused reports whether a call could not connect because nothing
// listens at the address (gRPC's "connection refused", by its text, as
// tlsHint reads it).
func refused(e *client.Error) bool {
	return e.Code == codes.Unavailable && e.Reason == "" && strings.Contains(e.Message, "connection refused")
}

// tlsHint says which flag to change when a call could not connect because
// the command and the server disagree about TLS: gRPC's words for it
// ("error reading server preface: EOF" for plaintext to a TLS server) do
// not say, nor that an HTTP/1.1 server (llmrelay's HTTP port, say)
// answered. gRPC's connection errors have no type of their own once they
// are a status, so their text is what there is to go on.
func tlsHint(e *client.Error) string {
	if e.Code != codes.Unavailable || e.Reason != "" {
		return ""
	}
	switch m := e.Message; {
	case strings.Contains(m, "looked like an HTTP/1.1 header"):
		// An HTTP/1.1 server answered the plaintext call: llmrelay's own
		// HTTP doors, most often (--addr 127.0.0.1:8080), or a TLS proxy
		// that answers plaintext with a 400.
		return "an HTTP/1.1 server answered, not gRPC: is this an HTTP port? llmrelay serves gRPC on " + defaultAddr + " by default, its HTTP endpoints on 127.0.0.1:8080; a TLS server needs --tls"
	case strings.Contains(m, "error reading server preface"):
		return "the server may be serving TLS: this call was in plaintext (the default for a loopback address); add --tls"
	case strings.Contains(m, "first record does not look like a TLS handshake"):
		return "the server does not use TLS: add --plaintext"
	case strings.Contains(m, "certificate signed by unknown authority"):
		return "this machine does not trust the server's certificate: name its authority's PEM file in SSL_CERT_FILE (SSL_CERT_FILE=ca.pem llmrelay ...)"
	}
	return ""
}

// modelHint says, for a model the server does not know, where the
// command line finds those it does and how a server gets a provider: a
// first user asks the `make run` server (the mock provider alone) for
// openai/gpt-4o-mini, and the server's words name only ListModels, an
// RPC.
func modelHint(e *client.Error) string {
	if e.Code != codes.InvalidArgument || (e.Reason != apierr.ReasonUnknownProvider && e.Reason != apierr.ReasonUnknownModel) {
		return ""
	}
	return "llmrelay models lists the models this server offers; a server gets a provider (openai, anthropic, gemini) from its config file: docs/providers.md"
}

// modelFlag defines -m and its long form --model on fs, one value: the
// model a call asks for.
func modelFlag(fs *flag.FlagSet) *string {
	var model string
	fs.StringVar(&model, "m", "", "the `MODEL`: <provider>/<model> or a route (see llmrelay models)")
	fs.StringVar(&model, "model", "", "the same as -m `MODEL`")
	return &model
}
