package httpx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

// lineDecoder turns each data line into a text event; "END" terminates.
type lineDecoder struct{}

func (lineDecoder) Decode(ev httpx.Event, out *[]provider.Event) (bool, error) {
	if string(ev.Data) == "END" {
		return true, nil
	}
	*out = append(*out, provider.Event{Kind: provider.EventText, Text: string(ev.Data)})
	return false, nil
}

func (lineDecoder) EndsAtEOF() bool { return false }

func endpoint(t *testing.T, cfg provider.Config) *httpx.Endpoint {
	t.Helper()
	ep, err := httpx.NewEndpoint(cfg, httpx.EndpointOptions{
		Header: map[string]string{"X-Kind-Version": "1"},
		Auth:   func(h http.Header, key string) { h.Set("X-Key", key) },
	})
	if err != nil {
		t.Fatalf("NewEndpoint: %v", err)
	}
	// The endpoint lives as long as the test: once garbage, its transport's
	// idle connections are closed (as a dropped provider's are), and a
	// test that no longer uses its variable would see a connection just
	// dialed for it closed.
	t.Cleanup(func() { runtime.KeepAlive(ep) })
	t.Cleanup(httpx.CloseIdleConnections)
	return ep
}

func TestEndpointSendsHeadersKeyAndBody(t *testing.T) {
	u := pt.Replay(t, pt.Reply{Body: []byte("data: hi\n\ndata: END\n\n")})
	t.Setenv("LLMRELAY_TEST_KEY", "secret-value")
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: u.URL + "/", APIKeyEnv: "LLMRELAY_TEST_KEY",
		Headers: map[string]string{"X-Kind-Version": "2", "HTTP-Referer": "https://example.test"}})
	if ep.BaseURL != u.URL {
		t.Errorf("BaseURL = %q, want %q without the trailing slash", ep.BaseURL, u.URL)
	}
	r := collect(t, ep, u.URL+"/v1/x", map[string]int{"n": 1})
	if r.Err != nil || r.Text != "hi" {
		t.Fatalf("stream: %q, %v", r.Text, r.Err)
	}
	got := u.Requests()[0]
	want := map[string]string{
		"X-Key": "secret-value", "X-Kind-Version": "2", "Http-Referer": "https://example.test",
		"Content-Type": "application/json", "Accept": "text/event-stream", "User-Agent": httpx.UserAgent,
	}
	for k, v := range want {
		if got.Header.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, got.Header.Get(k), v)
		}
	}
	if got.Method != http.MethodPost || got.URI != "/v1/x" || string(got.Body) != `{"n":1}` {
		t.Errorf("request %s %s %s", got.Method, got.URI, got.Body)
	}
}

// A request's extra headers add to the provider's headers and may replace
// the kind's fixed ones, but never one the configuration sets: the
// operator's value is sent.
func TestExtraHeadersNeverReplaceConfiguredHeaders(t *testing.T) {
	u := pt.Replay(t, pt.Reply{Body: []byte("data: hi\n\ndata: END\n\n")})
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: u.URL,
		Headers: map[string]string{"x-team": "team_operator", "cf-aig-authorization": "Bearer gateway-secret"}})
	// Built by hand: Encode refuses a credential in extra_headers before
	// the endpoint would see it; the endpoint keeps the operator's anyway.
	enc := httpx.Encoded{Body: []byte(`{}`), Header: http.Header{
		"X-Team": {"team_other"}, "Cf-Aig-Authorization": {"Bearer caller"}, "X-Kind-Version": {"3"}, "X-Title": {"app"}}}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s, err := ep.Stream(ctx, httpx.Call{URL: u.URL, Body: enc, Decoder: lineDecoder{}})
	if err != nil {
		t.Fatal(err)
	}
	if r := pt.Drain(s, nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	s.Close()
	got := u.Requests()[0].Header
	want := map[string][]string{
		"X-Team": {"team_operator"}, "Cf-Aig-Authorization": {"Bearer gateway-secret"},
		"X-Kind-Version": {"3"}, "X-Title": {"app"},
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("header %s = %q, want %q", k, got[k], v)
		}
	}
}

func TestEndpointWithoutKeySendsNoAuth(t *testing.T) {
	u := pt.Replay(t, pt.Reply{Body: []byte("data: END\n\n")})
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: u.URL})
	if r := collect(t, ep, u.URL, struct{}{}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if _, ok := u.Requests()[0].Header["X-Key"]; ok {
		t.Error("a key header was sent without a key")
	}
}

func TestNewEndpointErrors(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_EMPTY", "")
	tests := []struct {
		name     string
		cfg      provider.Config
		required bool
		want     string
	}{
		{"key required but no variable named", provider.Config{Kind: "anthropic"}, true, "api_key_env"},
		{"variable unset", provider.Config{Kind: "openai", APIKeyEnv: "LLMRELAY_TEST_UNSET_VARIABLE"}, false, "LLMRELAY_TEST_UNSET_VARIABLE"},
		{"variable empty", provider.Config{Kind: "openai", APIKeyEnv: "LLMRELAY_TEST_EMPTY"}, false, "LLMRELAY_TEST_EMPTY"},
		{"relative base_url", provider.Config{Kind: "openai", BaseURL: "localhost:11434/v1"}, false, "base_url"},
		{"ftp base_url", provider.Config{Kind: "openai", BaseURL: "ftp://example.test"}, false, "base_url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := httpx.NewEndpoint(tc.cfg, httpx.EndpointOptions{KeyRequired: tc.required})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one naming %s", err, tc.want)
			}
		})
	}
}

// A malformed base_url is refused with an error that names the field and
// the problem but never quotes the value: start-up and reload log it, and
// a base_url may carry a key (Azure's api-key query parameter, user info).
func TestBaseURLErrorsDoNotQuoteTheValue(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	tests := []struct{ name, baseURL, want string }{
		{"no scheme", "myres.openai.azure.com/openai?api-key=" + secret, "https://"},
		{"host and port without scheme", "user:" + secret + "@localhost:11434/v1", "https://"},
		{"another scheme", "ftp://example.test/?key=" + secret, "https://"},
		{"no host", "https:///v1?key=" + secret, "no host"},
		{"not a URL", "https://example.test/%zz?key=" + secret, "does not parse"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := httpx.NewEndpoint(provider.Config{Kind: "openai", BaseURL: tc.baseURL}, httpx.EndpointOptions{})
			if err == nil {
				t.Fatal("NewEndpoint accepted a malformed base_url")
			}
			if msg := err.Error(); !strings.Contains(msg, "base_url") || !strings.Contains(msg, tc.want) || strings.Contains(msg, secret) {
				t.Errorf("error = %q, want one naming base_url and %q, without the secret", msg, tc.want)
			}
		})
	}
}

// A configured header that requests would drop (a bad name), rewrite (a
// line break in its value) or override (framing) is refused by name at
// start-up and reload, the value unquoted; a credential header is the
// operator's to set.
func TestConfiguredHeadersAreChecked(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	tests := []struct {
		name    string
		headers map[string]string
		want    string // "" for accepted
	}{
		{"a line break in the value", map[string]string{"X-Gateway-Key": secret + "\r\nX-Injected: 1"}, "headers.X-Gateway-Key: has a value a header cannot carry"},
		{"a trailing newline", map[string]string{"OpenAI-Project": secret + "\n"}, "headers.OpenAI-Project: has a value"},
		{"a space in the name", map[string]string{"Gateway Key": "v"}, "headers.Gateway Key: is not a valid header name"},
		{"framing", map[string]string{"transfer-encoding": "chunked"}, "headers.transfer-encoding: cannot be set"},
		{"a credential and a project", map[string]string{"Authorization": "Bearer " + secret, "OpenAI-Project": "p1"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := httpx.NewEndpoint(provider.Config{Kind: "openai", BaseURL: "http://127.0.0.1:1/v1", Headers: tc.headers}, httpx.EndpointOptions{})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("NewEndpoint: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), secret)):
				t.Fatalf("error = %v, want one with %q, without the value", err, tc.want)
			}
		})
	}
}

// The error of a request that could not be sent quotes its URL; the query
// and user info, which may hold a key, are left out, since it is logged.
func TestTransportErrorsLeaveTheURLsSecretsOut(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	base := "http://user:" + secret + "@" + addr + "/openai"
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: base})
	r := collect(t, ep, base+"/chat/completions?api-key="+secret, struct{}{})
	if r.Err == nil {
		t.Fatal("the request to a closed port succeeded")
	}
	if msg := r.Err.Error(); strings.Contains(msg, secret) || !strings.Contains(msg, addr+"/openai/chat/completions") {
		t.Errorf("error = %q, want the URL without its user info and query", msg)
	}
}

func TestTheKeyIsNeverPrinted(t *testing.T) {
	const key = "sk-do-not-print-me"
	t.Setenv("LLMRELAY_TEST_KEY", key)
	ep := endpoint(t, provider.Config{Kind: "test", APIKeyEnv: "LLMRELAY_TEST_KEY", BaseURL: "http://127.0.0.1:1"})
	s, err := httpx.APIKey(provider.Config{APIKeyEnv: "LLMRELAY_TEST_KEY"}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{
		fmt.Sprintf("%v %+v %#v", ep, ep, ep),
		fmt.Sprintf("%v %+v %#v", *ep, *ep, *ep),
		fmt.Sprintf("%v %+v %#v %s %q", s, s, s, s, s),
	} {
		if strings.Contains(out, key) {
			t.Errorf("printed the key: %s", out)
		}
	}
	if s.Reveal() != key {
		t.Errorf("Reveal = %q", s.Reveal())
	}
}

// TestConnectionsAreReused shows that a stream read to its terminator
// leaves its connection to the next stream: one TCP connection serves
// several streams in a row, even when the body's end comes a moment after
// the terminator (the stream then reads on to it instead of closing the
// connection).
func TestConnectionsAreReused(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: a\n\n")
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, "data: END\n\n")
		w.(http.Flusher).Flush()
		time.Sleep(5 * time.Millisecond) // the body's end follows in a packet of its own
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: srv.URL})
	for range 5 {
		if r := collect(t, ep, srv.URL, struct{}{}); r.Err != nil || r.Text != "a" {
			t.Fatalf("stream: %q, %v", r.Text, r.Err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("5 streams in a row opened %d connections, want 1", n)
	}
}

func TestAttemptTimeoutIsATransportFailure(t *testing.T) {
	u := pt.Replay(t, pt.Reply{Body: []byte("data: a\n\ndata: b\n\n"), After: 1, Fault: pt.FaultStall})
	// The first chunk comes at once; the timeout leaves a loaded machine
	// ample time for it.
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: u.URL, Timeout: time.Second})
	r := collect(t, ep, u.URL, struct{}{})
	pe := pt.ProviderError(r.Err)
	if r.Text != "a" || pe == nil || pe.Kind != provider.KindTransport || !errors.Is(r.Err, httpx.ErrAttemptTimeout) {
		t.Fatalf("got %q, %v; want the first delta, then a transport failure wrapping ErrAttemptTimeout", r.Text, r.Err)
	}
	if errors.Is(r.Err, context.DeadlineExceeded) {
		t.Error("the attempt timeout looks like the caller's deadline")
	}
}

func TestConnectionRefusedIsATransportFailure(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: "http://" + addr})
	r := collect(t, ep, "http://"+addr, struct{}{})
	if pe := pt.ProviderError(r.Err); pe == nil || pe.Kind != provider.KindTransport {
		t.Errorf("error = %v, want a transport failure", r.Err)
	}
}

func collect(t *testing.T, ep *httpx.Endpoint, url string, body any) pt.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	enc, err := httpx.Encode(body, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ep.Stream(ctx, httpx.Call{URL: url, Body: enc, Decoder: lineDecoder{}})
	if err != nil {
		return pt.Result{Err: err}
	}
	defer s.Close()
	return pt.Drain(s, nil)
}
