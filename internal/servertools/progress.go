package servertools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Progress notifications are read off the wire, not from the SDK's
// notification handler: the SDK queues notifications for a handler
// goroutine while it hands a call its response at once, so the last
// progress of a tool could reach the caller after the tool's result. A
// server sends a call's progress before its result on the call's stream,
// and sseTransport sees the stream's bytes before the SDK decodes them: a
// progress it reports always comes before the result it precedes.

// progressNotification is the params of notifications/progress.
type progressNotification struct {
	ProgressToken any     `json:"progressToken"`
	Progress      float64 `json:"progress"`
	Total         float64 `json:"total"`
	Message       string  `json:"message"`
}

// maxScannedLine bounds the part of a data line the scanner keeps: a
// progress notification is small, and a longer line (a tool's large
// result) is passed through unread. (The stream of a listing's answer is
// read whole: sseScanner.maxData.)
const maxScannedLine = 16 << 10

// sseScanner passes a server-sent event stream through, watching its
// events for progress notifications, and ends it at an event longer than
// maxEvent bytes: the SDK would fail the whole session on it, every call
// the session carries, where the event is the answer to one. The stream
// goes on, as the SDK reads it, with what the event has left marked as an
// event of another type (which the SDK skips), then an answer to the
// stream's request of llmrelay's own, a JSON-RPC error of code
// codeAnswerTooLarge, then its end.
type sseScanner struct {
	io.ReadCloser
	progress func(progressNotification)
	// answer, when set, is given every event's data that is not a
	// progress notification: the answer to the stream's request among
	// them. maxData bounds the line and the data kept (zero:
	// maxScannedLine).
	answer   func(msg []byte)
	maxData  int
	line     []byte // the current line, up to maxData
	long     bool   // the current line is longer: skip it
	data     []byte // the current event's data, up to maxData
	bigEvent bool   // the current event's data is longer: skip it

	maxEvent int
	request  *http.Request // the request the stream answers
	// eventBytes counts the current event's bytes; lineStart says the
	// last byte ended a line (two line ends in a row end the event).
	eventBytes int
	lineStart  bool
	// tail is what the stream has left once cut: the marker and the
	// error; cut says it was.
	tail []byte
	cut  bool
}

func (s *sseScanner) Read(p []byte) (int, error) {
	if s.cut {
		if len(s.tail) == 0 {
			return 0, io.EOF
		}
		n := copy(p, s.tail)
		s.tail = s.tail[n:]
		return n, nil
	}
	n, err := s.ReadCloser.Read(p)
	if at := s.overflow(p[:n]); at >= 0 {
		n, err = at, nil
		s.cut = true
		s.tail = s.answerTooLarge()
		// Nothing more of the stream is read: the SDK closes the body
		// once it has read to the end.
	}
	s.scan(p[:n])
	return n, err
}

// overflow counts b's bytes into the current event's and returns where in
// b the event passes maxEvent bytes, -1 if it does not; lineStart then
// says whether the bytes before that ended a line.
func (s *sseScanner) overflow(b []byte) int {
	for i, c := range b {
		if c == '\n' && s.lineStart {
			s.eventBytes = 0 // the event's end
			continue
		}
		if s.eventBytes++; s.eventBytes > s.maxEvent {
			return i
		}
		switch c {
		case '\n':
			s.lineStart = true
		case '\r':
		default:
			s.lineStart = false
		}
	}
	return -1
}

// codeAnswerTooLarge is the JSON-RPC error code of the answer llmrelay
// puts in place of an MCP server's answer longer than its
// max_response_bytes (within the range JSON-RPC leaves to servers).
const codeAnswerTooLarge = -32050

// answerTooLarge is what follows the cut: the rest of the event made one
// the SDK skips, and an error answering the stream's request (when it is
// a call: the SDK waits for nothing else).
func (s *sseScanner) answerTooLarge() []byte {
	// The line cut short ends; a line that starts here would end the
	// event, with what it has, before its type is set.
	tail := []byte("\nevent: llmrelay-cut\n\n")
	if s.lineStart {
		tail = tail[1:]
	}
	id := requestID(s.request)
	if id == nil {
		return tail
	}
	msg, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": codeAnswerTooLarge, "message": (&answerTooLargeError{limit: s.maxEvent}).Error()},
	})
	return fmt.Appendf(tail, "data: %s\n\n", msg)
}

// requestID returns the JSON-RPC id of the call r posts, nil when it
// posts none (a notification, the GET of the server's own stream).
func requestID(r *http.Request) json.RawMessage {
	if r.Method != http.MethodPost || r.GetBody == nil {
		return nil
	}
	body, err := r.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.NewDecoder(body).Decode(&msg) != nil || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return nil
	}
	return msg.ID
}

// kept is the most of a line, and of an event's data, the scanner keeps.
func (s *sseScanner) kept() int {
	if s.maxData > 0 {
		return s.maxData
	}
	return maxScannedLine
}

func (s *sseScanner) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if !s.long {
			if len(s.line)+len(chunk) > s.kept() {
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
		s.data, s.bigEvent = s.data[:0], true
	case len(line) == 0:
		s.dispatch()
	case bytes.HasPrefix(line, []byte("data:")):
		d := bytes.TrimPrefix(line[5:], []byte(" "))
		switch {
		case s.bigEvent:
		case len(s.data)+1+len(d) > s.kept():
			// Many lines of data: not a progress notification either.
			s.bigEvent, s.data = true, s.data[:0]
		default:
			if len(s.data) > 0 {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, d...)
		}
	}
}

// dispatch reports the event that just ended, when it is a progress
// notification, and gives any other to answer, when set.
func (s *sseScanner) dispatch() {
	data := s.data
	s.data, s.bigEvent = s.data[:0], false
	if len(data) == 0 {
		return
	}
	if bytes.Contains(data, []byte(`notifications/progress`)) {
		var msg struct {
			Method string               `json:"method"`
			Params progressNotification `json:"params"`
		}
		if json.Unmarshal(data, &msg) == nil && msg.Method == "notifications/progress" {
			s.progress(msg.Params)
			return
		}
	}
	if s.answer != nil {
		s.answer(data)
	}
}
