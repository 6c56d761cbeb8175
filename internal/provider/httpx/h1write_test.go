package httpx

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
)

// TestAppendRequestWritesAsNetHTTP holds appendRequest to Request.Write:
// the requests it takes come out byte for byte as net/http writes them,
// the plain ones llmrelay sends are taken (so their serialization needs no
// hand-over to offstack's workers), and the others are left to net/http.
func TestAppendRequestWritesAsNetHTTP(t *testing.T) {
	type build func() *http.Request
	req := func(method, url, body string, header ...string) build {
		return func() *http.Request {
			var r io.Reader
			if body != "" {
				r = strings.NewReader(body)
			}
			hr, err := http.NewRequestWithContext(context.Background(), method, url, r)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(header); i += 2 {
				hr.Header.Add(header[i], header[i+1])
			}
			return hr
		}
	}
	with := func(b build, change func(*http.Request)) build {
		return func() *http.Request {
			r := b()
			change(r)
			return r
		}
	}
	chat := req("POST", "http://127.0.0.1:8080/v1/chat/completions", `{"model":"m","stream":true}`,
		"Content-Type", "application/json", "Authorization", "Bearer sk-1", "Accept", "text/event-stream", "X-Extra", "a", "X-Extra", "b")
	taken := map[string]build{
		"chat completion":   chat,
		"no body":           req("GET", "http://h.example/v1/models?limit=5&after=x%20y", ""),
		"empty POST":        req("POST", "http://h.example/p", ""),
		"DELETE":            req("DELETE", "http://h.example/p", ""),
		"user agent set":    req("POST", "http://h.example/p", "x", "User-Agent", "llmrelay/1"),
		"user agent empty":  with(req("POST", "http://h.example/p", "x"), func(r *http.Request) { r.Header["User-Agent"] = []string{""} }),
		"host override":     with(chat, func(r *http.Request) { r.Host = "api.example:443" }),
		"escaped path":      req("POST", "http://h.example/a%2Fb/c%20d?q=%E2%98%95", "x"),
		"invalid key":       with(chat, func(r *http.Request) { r.Header["Bad Key"] = []string{"v"} }),
		"excluded headers":  with(chat, func(r *http.Request) { r.Header["Content-Length"] = []string{"9"}; r.Header["Host"] = []string{"x"} }),
		"empty value":       req("POST", "http://h.example/p", "x", "X-Empty", ""),
		"lower-case key":    with(chat, func(r *http.Request) { r.Header["x-lower"] = []string{"v"} }),
		"ipv6 host":         req("POST", "http://[::1]:8080/p", "x"),
		"value with colons": req("POST", "http://h.example/p", "x", "X-Time", "12:00:01"),
	}
	for name, b := range taken {
		t.Run(name, func(t *testing.T) {
			var want bytes.Buffer
			if err := b().Write(&want); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			ok, err := appendRequest(&got, b())
			if !ok || err != nil {
				t.Fatalf("appendRequest left it to net/http (%v, %v)", ok, err)
			}
			if got.String() != want.String() {
				t.Errorf("appendRequest wrote\n%q\nRequest.Write\n%q", got.String(), want.String())
			}
		})
	}
	left := map[string]build{
		"close":            with(chat, func(r *http.Request) { r.Close = true }),
		"trailer":          with(chat, func(r *http.Request) { r.Trailer = http.Header{"X-T": nil} }),
		"chunked":          with(chat, func(r *http.Request) { r.TransferEncoding = []string{"chunked"} }),
		"unknown length":   with(chat, func(r *http.Request) { r.ContentLength = -1 }),
		"no GetBody":       with(chat, func(r *http.Request) { r.GetBody = nil }),
		"newline in value": req("POST", "http://h.example/p", "x", "X-A", "a\r\nX-Injected: 1"),
		"padded value":     req("POST", "http://h.example/p", "x", "X-A", " a "),
		"padded agent":     req("POST", "http://h.example/p", "x", "User-Agent", "ua\t"),
		"non-ASCII host":   with(chat, func(r *http.Request) { r.Host = "bücher.example" }),
		"zone":             with(chat, func(r *http.Request) { r.Host = "[fe80::1%25eth0]:80" }),
		"opaque":           with(chat, func(r *http.Request) { r.URL.Opaque = "//h.example/p" }),
		"method not token": with(chat, func(r *http.Request) { r.Method = "PO ST" }),
		"traced": with(chat, func(r *http.Request) {
			*r = *r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{}))
		}),
	}
	for name, b := range left {
		t.Run("left/"+name, func(t *testing.T) {
			var got bytes.Buffer
			if ok, _ := appendRequest(&got, b()); ok || got.Len() > 0 {
				t.Errorf("appendRequest took it (wrote %q); net/http should", got.String())
			}
		})
	}
	t.Run("body shorter than its length", func(t *testing.T) {
		r := chat()
		r.ContentLength += 3
		var got bytes.Buffer
		if ok, err := appendRequest(&got, r); !ok || err == nil || !strings.Contains(err.Error(), "with Body length") {
			t.Errorf("appendRequest: %v, %v; want net/http's length error", ok, err)
		}
	})
}

// TestAppendRequestRandomHeaders writes requests with random headers both
// ways: whatever appendRequest takes, it writes as Request.Write does.
func TestAppendRequestRandomHeaders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const chars = "aZ-_09 \t:\r\n\x01\x7f/é"
	word := func(n int) string {
		var b strings.Builder
		for range rng.IntN(n) {
			b.WriteString(string([]rune(chars)[rng.IntN(len([]rune(chars)))]))
		}
		return b.String()
	}
	took := 0
	for range 3000 {
		mk := func() *http.Request {
			r, _ := http.NewRequest("POST", "http://h.example/p", strings.NewReader("body"))
			return r
		}
		h := http.Header{}
		for range rng.IntN(6) {
			k := "X-" + word(6)
			for range 1 + rng.IntN(2) {
				h[k] = append(h[k], word(8))
			}
		}
		a, b := mk(), mk()
		a.Header, b.Header = h.Clone(), h.Clone()
		var want, got bytes.Buffer
		if err := a.Write(&want); err != nil {
			t.Fatal(err)
		}
		ok, err := appendRequest(&got, b)
		if !ok {
			continue
		}
		took++
		if err != nil || got.String() != want.String() {
			t.Fatalf("headers %q: appendRequest wrote\n%q (%v)\nRequest.Write\n%q", h, got.String(), err, want.String())
		}
	}
	if took < 100 {
		t.Errorf("appendRequest took %d of 3000; the check is too weak", took)
	}
}
