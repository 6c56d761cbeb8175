package servertools

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// sseTransport is the HTTP transport of one MCP server's connection: it
// adds the server's configured headers to every request, reports every
// notifications/progress of a server-sent event stream to progress, in the
// order of the stream, and reads any other answer whole, up to maxBody
// bytes, before the SDK sees it. It notes in tasks which tools of each
// tools/list answer must run as tasks (see taskNotes), before the SDK,
// which drops what says so, decodes the answer.
type sseTransport struct {
	base     http.RoundTripper
	headers  http.Header
	progress func(progressNotification)
	maxBody  int
	tasks    *taskNotes
}

func (t sseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header[k] = append([]string(nil), v...)
		}
	}
	var cursor string
	var listing bool
	if t.tasks != nil {
		cursor, listing = listingCursor(r)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		s := &sseScanner{ReadCloser: resp.Body, progress: t.progress, maxEvent: t.maxBody, request: r}
		if listing {
			// The listing's answer is kept whole, as the SDK keeps it.
			s.maxData = t.maxBody
			s.answer = func(msg []byte) { t.tasks.note(cursor, msg) }
		}
		resp.Body = s
		return resp, nil
	}
	b, err := t.readWhole(resp)
	if err != nil {
		return nil, err
	}
	if listing && resp.StatusCode == http.StatusOK {
		t.tasks.note(cursor, b)
	}
	return resp, nil
}

// readWhole replaces an answer's body by its bytes, read here. The SDK
// reads a JSON answer whole into memory (and several times its size
// while it decodes it), without a bound, and a body it cannot read fails
// the whole session; read here, one too long, or cut short, fails the
// request it answers only, as an error of the transport. It returns the
// bytes.
func (t sseTransport) readWhole(resp *http.Response) ([]byte, error) {
	body := resp.Body
	defer body.Close()
	if resp.ContentLength > int64(t.maxBody) {
		return nil, &answerTooLargeError{limit: t.maxBody}
	}
	b, err := io.ReadAll(io.LimitReader(body, int64(t.maxBody)+1))
	switch {
	case err != nil:
		return nil, err
	case len(b) > t.maxBody:
		return nil, &answerTooLargeError{limit: t.maxBody}
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return b, nil
}

// answerTooLargeError is an MCP server's answer longer than its
// max_response_bytes.
type answerTooLargeError struct{ limit int }

func (e *answerTooLargeError) Error() string {
	return fmt.Sprintf("the MCP server's answer is larger than its max_response_bytes (%d bytes)", e.limit)
}

// sameOriginRedirects is the MCP client's redirect policy: it follows 307
// and 308 (which keep the method and the body) to the first request's
// origin (scheme, host and port), a few in a row, and no other redirect.
// sseTransport adds the server's configured headers, its credentials, to
// every request it sends, so a redirect followed to another host would
// hand them over; one not followed fails the request, saying where it led.
func sameOriginRedirects(req *http.Request, via []*http.Request) error {
	code := 0
	if req.Response != nil {
		code = req.Response.StatusCode
	}
	first := via[0].URL
	switch {
	case code != http.StatusTemporaryRedirect && code != http.StatusPermanentRedirect,
		!strings.EqualFold(req.URL.Scheme, first.Scheme) || !strings.EqualFold(req.URL.Host, first.Host):
		return fmt.Errorf("the MCP server answered %d, a redirect to %s://%s, which llmrelay does not follow (only 307 and 308 within the url's own scheme, host and port): set the server's url to where it leads", code, req.URL.Scheme, req.URL.Host)
	case len(via) > maxRedirects:
		return fmt.Errorf("the MCP server redirected %d times in a row", len(via))
	}
	return nil
}

// maxRedirects bounds the redirects one request to an MCP server follows.
const maxRedirects = 5
