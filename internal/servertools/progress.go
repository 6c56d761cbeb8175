package servertools

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// Progress notifications are read off the wire, not from the SDK's
// notification handler: the SDK queues notifications for a handler
// goroutine while it hands a call its response at once, so the last
// progress of a tool could reach the caller after the tool's result. A
// server sends a call's progress before its result on the call's stream,
// and sseTransport sees the stream's bytes before the SDK decodes them: a
// progress it reports always comes before the result it precedes.

// sseTransport is the HTTP transport of one MCP server's connection: it
// adds the server's configured headers to every request, and reports every
// notifications/progress of a server-sent event stream to progress, in the
// order of the stream.
type sseTransport struct {
	base     http.RoundTripper
	headers  http.Header
	progress func(progressNotification)
}

func (t sseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header[k] = append([]string(nil), v...)
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &sseScanner{ReadCloser: resp.Body, progress: t.progress}
	}
	return resp, err
}

// progressNotification is the params of notifications/progress.
type progressNotification struct {
	ProgressToken any     `json:"progressToken"`
	Progress      float64 `json:"progress"`
	Total         float64 `json:"total"`
	Message       string  `json:"message"`
}

// maxScannedLine bounds the part of a data line the scanner keeps: a
// progress notification is small, and a longer line (a tool's large
// result) is passed through unread.
const maxScannedLine = 16 << 10

// sseScanner passes a server-sent event stream through, watching its
// events for progress notifications.
type sseScanner struct {
	io.ReadCloser
	progress func(progressNotification)
	line     []byte // the current line, up to maxScannedLine
	long     bool   // the current line is longer: skip it
	data     []byte // the current event's data
}

func (s *sseScanner) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.scan(p[:n])
	return n, err
}

func (s *sseScanner) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if !s.long {
			if len(s.line)+len(chunk) > maxScannedLine {
				s.long, s.line = true, s.line[:0]
			} else {
				s.line = append(s.line, chunk...)
			}
		}
		if i < 0 {
			return
		}
		s.endLine()
		b = b[i+1:]
	}
}

// endLine handles a complete line of the stream.
func (s *sseScanner) endLine() {
	line := bytes.TrimSuffix(s.line, []byte("\r"))
	long := s.long
	s.line, s.long = s.line[:0], false
	switch {
	case long:
		s.data = s.data[:0]
	case len(line) == 0:
		s.dispatch()
	case bytes.HasPrefix(line, []byte("data:")):
		d := bytes.TrimPrefix(line[5:], []byte(" "))
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, d...)
	}
}

// dispatch reports the event that just ended, when it is a progress
// notification.
func (s *sseScanner) dispatch() {
	data := s.data
	s.data = s.data[:0]
	if !bytes.Contains(data, []byte(`notifications/progress`)) {
		return
	}
	var msg struct {
		Method string               `json:"method"`
		Params progressNotification `json:"params"`
	}
	if json.Unmarshal(data, &msg) == nil && msg.Method == "notifications/progress" {
		s.progress(msg.Params)
	}
}
