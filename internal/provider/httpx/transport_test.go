package httpx_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// guard bounds how long a test waits for something that the setting under
// test makes happen far sooner (100 ms, say); it is below the setting's
// default (10 s and more), so the test fails when the setting is not
// applied. A loaded machine may be slow, not 80 times slower.
const guard = 8 * time.Second

// patience bounds a wait that no setting decides, only the machine's
// speed: a guard against hangs.
const patience = time.Minute

// streamWithin starts a stream and reads it to its end, all within d.
func streamWithin(t *testing.T, ep *httpx.Endpoint, url string, d time.Duration) pt.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	s, err := ep.Stream(ctx, call(t, url))
	if err != nil {
		return pt.Result{Err: err}
	}
	defer s.Close()
	return pt.Drain(s, nil)
}

// call is a streaming POST of {} to url, read with lineDecoder.
func call(t *testing.T, url string) httpx.Call {
	t.Helper()
	enc, err := httpx.Encode(struct{}{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return httpx.Call{URL: url, Body: enc, Decoder: lineDecoder{}}
}

// wantTransportFailure fails the test unless err is a KindTransport
// provider error whose text mentions what (not the caller's deadline).
func wantTransportFailure(t *testing.T, err error, what string) {
	t.Helper()
	pe := pt.ProviderError(err)
	if pe == nil || pe.Kind != provider.KindTransport || !strings.Contains(err.Error(), what) {
		t.Fatalf("error %v, want a transport failure mentioning %q", err, what)
	}
}

// tlsUpstream starts an HTTPS upstream (HTTP/2 offered) with the given
// server certificate and client-certificate policy.
func tlsUpstream(t *testing.T, cert tls.Certificate, clientCAs *pki, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	if clientCAs != nil {
		srv.TLS.ClientAuth = tls.RequireAndVerifyClientCert
		srv.TLS.ClientCAs = clientCAs.pool()
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func sse(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, "data: ok\n\ndata: END\n\n")
}

// TestCABundleAndClientCertificate: a provider behind a private CA that
// asks for a client certificate is reached with ca_file, cert_file and
// key_file, and refused without them.
func TestCABundleAndClientCertificate(t *testing.T) {
	ca := newPKI(t)
	serverCert, _, _ := ca.issue("upstream", "127.0.0.1")
	_, clientCert, clientKey := ca.issue("llmrelay")
	up := tlsUpstream(t, serverCert, ca, func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "llmrelay" {
			http.Error(w, "no client certificate", http.StatusForbidden)
			return
		}
		sse(w, r)
	})
	tests := []struct {
		name      string
		transport provider.Transport
		wantErr   string // "" for success
	}{
		{"CA bundle and client certificate", provider.Transport{CAFile: ca.CAFile, CertFile: clientCert, KeyFile: clientKey}, ""},
		// TLS 1.3 reports the refusal after the handshake, in several ways.
		{"no client certificate", provider.Transport{CAFile: ca.CAFile}, "sending the request failed"},
		{"system roots only", provider.Transport{CertFile: clientCert, KeyFile: clientKey}, "certificate signed by unknown authority"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ep := endpoint(t, provider.Config{Kind: "test", BaseURL: up.URL, Transport: tc.transport})
			r := streamWithin(t, ep, up.URL, patience)
			if tc.wantErr == "" {
				if r.Err != nil || r.Text != "ok" {
					t.Fatalf("stream: %q, %v", r.Text, r.Err)
				}
				return
			}
			wantTransportFailure(t, r.Err, tc.wantErr)
		})
	}
}

func TestTransportFilesAreChecked(t *testing.T) {
	ca := newPKI(t)
	_, certFile, keyFile := ca.issue("llmrelay")
	tests := []struct {
		name string
		tr   provider.Transport
		want string
	}{
		{"missing CA file", provider.Transport{CAFile: "/nonexistent/ca.pem"}, "transport.ca_file"},
		{"CA file without PEM", provider.Transport{CAFile: keyFile + "x"}, "transport.ca_file"},
		{"key that is not the certificate's", provider.Transport{CertFile: certFile, KeyFile: ca.CAFile}, "transport.cert_file"},
		{"certificate without key", provider.Transport{CertFile: certFile}, "cert_file and key_file go together"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := httpx.NewEndpoint(provider.Config{Kind: "test", Transport: tc.tr}, httpx.EndpointOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %s", err, tc.want)
			}
		})
	}
}

// TestHTTP2PingsFailABlackHoledConnection: once an HTTP/2 connection stops
// answering (a middlebox drops it without a reset), its stream fails
// within the ping interval and timeout, long before any stall timer or
// deadline.
func TestHTTP2PingsFailABlackHoledConnection(t *testing.T) {
	ca := newPKI(t)
	cert, _, _ := ca.issue("upstream", "127.0.0.1")
	var proto atomic.Int32
	up := tlsUpstream(t, cert, nil, func(w http.ResponseWriter, r *http.Request) {
		proto.Store(int32(r.ProtoMajor))
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the model thinks: nothing more is sent
	})
	hole := newBlackhole(t, up.Listener.Addr().String())
	base := "https://" + hole.addr()
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: base, Transport: provider.Transport{
		CAFile: ca.CAFile, PingInterval: 200 * time.Millisecond, PingTimeout: time.Second,
	}})

	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	s, err := ep.Stream(ctx, call(t, base))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Recv(); err != nil || ev.Text != "first" {
		t.Fatalf("first event %v, %v", ev, err)
	}
	if proto.Load() != 2 {
		t.Fatalf("the upstream saw HTTP/%d, want HTTP/2", proto.Load())
	}
	hole.drop() // from now on nothing gets through, in either direction
	ended := make(chan error, 1)
	go func() {
		_, err := s.Recv()
		ended <- err
	}()
	// 1.2 s of pings against a guard below the default pings' 15 s.
	select {
	case err := <-ended:
		wantTransportFailure(t, err, "reading the stream failed")
	case <-time.After(guard):
		cancel()
		<-ended
		t.Fatalf("the stream was still open %v after the connection went dark: no ping noticed", guard)
	}
}

// blackhole is a TCP relay to an upstream that can start dropping every
// byte in both directions while keeping the connections open.
type blackhole struct {
	ln       net.Listener
	dropping atomic.Bool
	mu       sync.Mutex
	conns    []net.Conn
	wg       sync.WaitGroup
}

func newBlackhole(t *testing.T, upstream string) *blackhole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackhole{ln: ln}
	b.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			b.mu.Lock()
			b.conns = append(b.conns, c, u)
			b.mu.Unlock()
			b.wg.Go(func() { b.pipe(u, c) })
			b.wg.Go(func() { b.pipe(c, u) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		b.mu.Lock()
		for _, c := range b.conns {
			c.Close()
		}
		b.mu.Unlock()
		b.wg.Wait()
	})
	return b
}

func (b *blackhole) addr() string { return b.ln.Addr().String() }
func (b *blackhole) drop()        { b.dropping.Store(true) }

func (b *blackhole) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		if b.dropping.Load() {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// TestTLSHandshakeTimeout: a server that accepts connections but never
// answers the TLS handshake fails the attempt at tls_handshake_timeout.
func TestTLSHandshakeTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { _, _ = io.Copy(io.Discard, c); c.Close() })
		}
	})
	base := "https://" + ln.Addr().String()
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: base, Transport: provider.Transport{TLSHandshakeTimeout: 100 * time.Millisecond}})
	r := streamWithin(t, ep, base, guard)
	wantTransportFailure(t, r.Err, "TLS handshake timeout")
}

// TestResponseHeaderTimeout: a provider that takes the request but sends
// no response headers fails the attempt at response_header_timeout.
func TestResponseHeaderTimeout(t *testing.T) {
	held := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server notices the client leaving
		<-r.Context().Done()
	}))
	t.Cleanup(held.Close)
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: held.URL, Transport: provider.Transport{ResponseHeaderTimeout: 100 * time.Millisecond}})
	r := streamWithin(t, ep, held.URL, 20*time.Second) // without it, nothing but the context ends the wait
	wantTransportFailure(t, r.Err, "timeout awaiting response headers")
}

// TestMaxConns: with max_conns 1, a second stream waits for the first
// one's connection instead of opening another.
func TestMaxConns(t *testing.T) {
	var conns atomic.Int32
	second := make(chan struct{})
	release := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if n.Add(1) == 1 {
			_, _ = io.WriteString(w, "data: one\n\n")
			w.(http.Flusher).Flush()
			<-release
		} else {
			close(second)
		}
		_, _ = io.WriteString(w, "data: END\n\n")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: srv.URL, Transport: provider.Transport{MaxConns: 1}})

	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	first, err := ep.Stream(ctx, call(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := first.Recv(); err != nil || ev.Text != "one" {
		t.Fatalf("first stream: %v, %v", ev, err)
	}
	done := make(chan pt.Result, 1)
	go func() { done <- streamWithin(t, ep, srv.URL, patience) }()
	// Without the bound the second stream opens a connection of its own
	// and reaches the upstream while the first is held.
	select {
	case <-second:
		t.Error("a second connection was opened while the first was in use")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if r := pt.Drain(first, nil); r.Err != nil {
		t.Fatalf("first stream: %v", r.Err)
	}
	first.Close()
	if r := <-done; r.Err != nil {
		t.Fatalf("second stream: %v", r.Err)
	}
	if c := conns.Load(); c != 1 {
		t.Errorf("%d connections, want 1", c)
	}
}

// TestProxyFromEnvironment: HTTPS_PROXY carries provider calls through the
// proxy (a CONNECT tunnel), and NO_PROXY exempts a host, read when the
// provider is built.
func TestProxyFromEnvironment(t *testing.T) {
	const host = "provider.test"
	ca := newPKI(t)
	cert, _, _ := ca.issue("upstream", host)
	up := tlsUpstream(t, cert, nil, sse)
	// provider.test resolves nowhere: a direct dial reaches the upstream
	// through this test hook, a proxied one through the proxy.
	restore := httpx.SetTestDial(func(dial httpx.DialFunc) httpx.DialFunc {
		return func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == host+":443" {
				addr = up.Listener.Addr().String()
			}
			return dial(ctx, network, addr)
		}
	})
	t.Cleanup(restore)
	proxy := newConnectProxy(t, up.Listener.Addr().String())
	base := "https://" + host + "/v1"
	tests := []struct {
		name, noProxy string
		viaProxy      bool
	}{
		{"HTTPS_PROXY", "", true},
		{"NO_PROXY exempts the host", "localhost," + host, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"} {
				t.Setenv(k, "")
			}
			t.Setenv("HTTPS_PROXY", "http://"+proxy.addr())
			t.Setenv("NO_PROXY", tc.noProxy)
			before := proxy.tunnels()
			ep := endpoint(t, provider.Config{Kind: "test", BaseURL: base, Transport: provider.Transport{CAFile: ca.CAFile}})
			if r := streamWithin(t, ep, base, patience); r.Err != nil || r.Text != "ok" {
				t.Fatalf("stream: %q, %v", r.Text, r.Err)
			}
			got := proxy.tunnels()[len(before):]
			switch {
			case tc.viaProxy && (len(got) != 1 || got[0] != host+":443"):
				t.Errorf("proxy tunnels %q, want one to %s:443", got, host)
			case !tc.viaProxy && len(got) != 0:
				t.Errorf("proxy tunnels %q, want none", got)
			}
		})
	}
}

// connectProxy is an HTTP proxy that serves CONNECT only, tunnelling every
// target to one address, and records the targets.
type connectProxy struct {
	srv     *httptest.Server
	mu      sync.Mutex
	targets []string
}

func newConnectProxy(t *testing.T, to string) *connectProxy {
	p := &connectProxy{}
	var wg sync.WaitGroup
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		p.mu.Lock()
		p.targets = append(p.targets, r.Host)
		p.mu.Unlock()
		u, err := net.Dial("tcp", to)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		c, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			u.Close()
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		wg.Go(func() { _, _ = io.Copy(u, bufio.NewReader(rw)); u.Close() })
		wg.Go(func() { _, _ = io.Copy(c, u); c.Close() })
	}))
	t.Cleanup(func() { p.srv.Close(); httpx.CloseIdleConnections(); wg.Wait() })
	return p
}

func (p *connectProxy) addr() string { return p.srv.Listener.Addr().String() }

func (p *connectProxy) tunnels() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

// TestAKeyFileNewlineIsNotSent: a key read from a file keeps the file's
// newline ($(cat) drops it, a Kubernetes secret made with --from-file does
// not). Over TLS + HTTP/2, the way real providers are reached, every
// request failed as a transport failure ("invalid HTTP/2 header field
// value"), retried as if transient; HTTP/1.1 trimmed it. It is trimmed; a
// key with a control character inside is a configuration error, at start
// or reload, that does not show the key.
func TestAKeyFileNewlineIsNotSent(t *testing.T) {
	ca := newPKI(t)
	serverCert, _, _ := ca.issue("upstream", "127.0.0.1")
	up := tlsUpstream(t, serverCert, nil, func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 || r.Header.Get("X-Key") != "sk-from-a-file" {
			http.Error(w, "wrong key or protocol", http.StatusUnauthorized)
			return
		}
		sse(w, r)
	})
	t.Setenv("LLMRELAY_TEST_KEY", "sk-from-a-file\n")
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: up.URL, APIKeyEnv: "LLMRELAY_TEST_KEY", Transport: provider.Transport{CAFile: ca.CAFile}})
	if r := streamWithin(t, ep, up.URL, patience); r.Err != nil || r.Text != "ok" {
		t.Fatalf("stream: %q, %v; want ok over HTTP/2 with the key trimmed", r.Text, r.Err)
	}

	t.Setenv("LLMRELAY_TEST_KEY", "sk-from\x01a-file")
	_, err := httpx.NewEndpoint(provider.Config{Kind: "test", BaseURL: up.URL, APIKeyEnv: "LLMRELAY_TEST_KEY"}, httpx.EndpointOptions{})
	var cp *provider.ConfigProblem
	if !errors.As(err, &cp) || cp.Field != "api_key_env" || strings.Contains(err.Error(), "sk-from") {
		t.Fatalf("a key with a control character inside: %v, want an api_key_env problem that does not show it", err)
	}
}

// TestAnEmptyBodyEndsTheStream: a 200 whose body is empty (Content-Length:
// 0, as a proxy or a broken server answers) ends the stream at once, cut
// short, over HTTP/1.1 and HTTP/2. Over HTTP/1.1 the stream waited for bytes on the
// kept-alive connection until the first-event timeout (2 minutes by
// default), then failed as the call's deadline.
func TestAnEmptyBodyEndsTheStream(t *testing.T) {
	empty := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	}
	h1 := httptest.NewServer(http.HandlerFunc(empty))
	t.Cleanup(h1.Close)
	ca := newPKI(t)
	serverCert, _, _ := ca.issue("upstream", "127.0.0.1")
	h2 := tlsUpstream(t, serverCert, nil, empty)
	for _, up := range []struct {
		name string
		url  string
		tr   provider.Transport
	}{{"HTTP/1.1", h1.URL, provider.Transport{}}, {"HTTP/2", h2.URL, provider.Transport{CAFile: ca.CAFile}}} {
		t.Run(up.name, func(t *testing.T) {
			ep := endpoint(t, provider.Config{Kind: "test", BaseURL: up.url, Transport: up.tr})
			ctx, cancel := context.WithTimeout(t.Context(), patience)
			defer cancel()
			s, err := ep.Stream(ctx, call(t, up.url))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := pt.Drain(s, nil)
			if ctx.Err() != nil {
				t.Fatalf("the stream ended only when its context did (%v): %v", ctx.Err(), r.Err)
			}
			if r.Err == nil || !strings.Contains(r.Err.Error(), "ended without its terminator") || r.Text != "" {
				t.Fatalf("stream: %q, %v; want it ended, without its terminator", r.Text, r.Err)
			}
		})
	}
}

// TestADocumentIsNotAStream: a 200 that carries a JSON document of a known
// length (an OpenAI-compatible server's error, so answered) or an HTML
// page (a proxy's) is a protocol error saying so, not a stream "cut
// short"; a JSON-labelled body of unknown length is read as the stream it
// may be.
func TestADocumentIsNotAStream(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"error":{"message":"model overloaded","type":"server_error"}}`)
		case "/html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, "<html><body>Sign in to the proxy</body></html>")
		case "/mislabelled":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, "data: ok\n\n")
			w.(http.Flusher).Flush() // chunked: no length
			_, _ = io.WriteString(w, "data: END\n\n")
		}
	}))
	t.Cleanup(up.Close)
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: up.URL})
	for _, tc := range []struct{ path, want string }{
		{"/json", "answered with application/json instead of an event stream"},
		{"/html", "answered with text/html instead of an event stream"},
	} {
		r := streamWithin(t, ep, up.URL+tc.path, patience)
		pe := pt.ProviderError(r.Err)
		if pe == nil || pe.Kind != provider.KindProtocol || pe.Class != provider.ClassProtocol || pe.Status != 200 || !strings.Contains(pe.Message, tc.want) {
			t.Errorf("%s: %v, want a protocol error (200) saying %q", tc.path, r.Err, tc.want)
		}
	}
	if r := streamWithin(t, ep, up.URL+"/mislabelled", patience); r.Err != nil || r.Text != "ok" {
		t.Errorf("a stream labelled application/json: %q, %v; want it read", r.Text, r.Err)
	}
}
