package httpx

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
)

// userAgent is what net/http sends when a request sets no User-Agent.
const userAgent = "Go-http-client/1.1"

// appendRequest writes req to buf as Request.Write would, for the requests
// llmrelay sends: its body in memory (none, or one GetBody can replay), its
// headers and values plain. It reports false, having written nothing, for
// any other (a trace, trailers, a transfer encoding, Connection: close, a
// host or a value net/http would rewrite, a URL it would refuse), which
// Request.Write then serializes. It runs on the caller's stack in a few
// hundred bytes: Request.Write needs a few KiB, and runs on offstack's
// workers (see writeRequest).
func appendRequest(buf *bytes.Buffer, req *http.Request) (bool, error) {
	if req.URL == nil || req.URL.Opaque != "" || req.Method == http.MethodConnect || req.Close ||
		req.Trailer != nil || len(req.TransferEncoding) > 0 || httptrace.ContextClientTrace(req.Context()) != nil {
		return false, nil
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if !httpguts.ValidHeaderFieldName(method) { // a method is a token, as a field name is
		return false, nil
	}
	noBody := req.Body == nil || req.Body == http.NoBody
	switch {
	case noBody && req.ContentLength == 0:
	case !noBody && req.ContentLength > 0 && req.GetBody != nil:
	default:
		return false, nil
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if !ascii(host) || strings.IndexByte(host, '%') >= 0 || !httpguts.ValidHostHeader(host) {
		return false, nil
	}
	ruri := req.URL.RequestURI()
	if !plainValue(ruri) || strings.IndexByte(ruri, ' ') >= 0 {
		return false, nil
	}
	ua := userAgent
	if vs, ok := req.Header["User-Agent"]; ok {
		ua = ""
		if len(vs) > 0 {
			ua = vs[0]
		}
	}
	for k, vs := range req.Header {
		if writtenKey(k) {
			for _, v := range vs {
				if !asIs(v) {
					return false, nil
				}
			}
		}
	}
	if !asIs(ua) {
		return false, nil
	}

	b := buf.AvailableBuffer()
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, ruri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	if ua != "" {
		b = append(b, "User-Agent: "...)
		b = append(b, ua...)
		b = append(b, "\r\n"...)
	}
	if req.ContentLength > 0 || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, req.ContentLength, 10)
		b = append(b, "\r\n"...)
	}
	// The header's keys in order, as Header.Write sorts them: the next is
	// the least after the last written. A request has a few; a sort would
	// take more stack.
	for last, more := "", true; more; {
		next := ""
		more = false
		for k := range req.Header {
			if k > last && (!more || k < next) && writtenKey(k) {
				next, more = k, true
			}
		}
		if !more {
			break
		}
		for _, v := range req.Header[next] {
			b = append(b, next...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
		last = next
	}
	b = append(b, "\r\n"...)
	buf.Write(b)
	if noBody {
		return true, nil
	}
	buf.Grow(int(req.ContentLength))
	n, err := buf.ReadFrom(req.Body)
	if cerr := req.Body.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != req.ContentLength {
		err = fmt.Errorf("http: ContentLength=%d with Body length %d", req.ContentLength, n)
	}
	return true, err
}

// writtenKey reports whether Request.Write writes the header key k from the
// header map: a valid field name (it drops others) that is not one of
// those it writes itself.
func writtenKey(k string) bool {
	switch k {
	case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
		return false
	}
	return httpguts.ValidHeaderFieldName(k)
}

// ascii reports whether s is all ASCII: a host net/http writes as it is
// (others it converts to punycode).
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asIs reports whether net/http writes the header value v as it is:
// nothing it turns into spaces, no space or tab it trims.
func asIs(v string) bool { return plainValue(v) && v == strings.Trim(v, " \t") }

// plainValue reports whether s holds no control byte: net/http writes such
// a value as it is (it turns newlines into spaces, and refuses a URL with
// a control byte).
func plainValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c == 0x7f {
			return false
		}
	}
	return true
}
