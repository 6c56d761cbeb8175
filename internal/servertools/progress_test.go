package servertools

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// sseEvents parses a server-sent event stream as the SDK does: lines end
// at "\n" (a "\r" before it dropped), a blank line ends an event, "event"
// sets its type and "data" lines are joined by newlines.
func sseEvents(stream string) (names, data []string) {
	var name string
	var lines []string
	for _, line := range strings.Split(stream, "\n") {
		line = strings.TrimSuffix(line, "\r")
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			if name != "" || lines != nil {
				names, data = append(names, name), append(data, strings.Join(lines, "\n"))
			}
			name, lines = "", nil
		case field == "event":
			name = value
		case field == "data":
			lines = append(lines, value)
		}
	}
	return names, data
}

// TestAnEventPastTheBoundIsCut: the stream answering a call goes on, for
// the SDK, with the event past max_response_bytes made one of another type
// and then an error answering the call, whether the bound falls within a
// line or where one starts; progress before it is reported, and a stream
// of many events within the bound passes unchanged.
func TestAnEventPastTheBoundIsCut(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"llmrelay-1","progress":1}}`
	line := "data: " + strings.Repeat("a", 40) + "\n" // 47 bytes
	long := strings.Repeat(line, 10) + "\n"
	for _, tc := range []struct {
		name   string
		bound  int
		stream string
		cut    bool
	}{
		{"within a line", 4*len(line) + 12, "data: " + progress + "\n\n" + long, true},
		{"where a line starts", 4 * len(line), "data: " + progress + "\r\n\r\n" + long, true},
		{"many events within the bound", len(long), "data: " + progress + "\n\n" + long + long + long, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, "http://mcp.test/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`))
			if err != nil {
				t.Fatal(err)
			}
			var reports int
			s := &sseScanner{ReadCloser: io.NopCloser(strings.NewReader(tc.stream)), maxEvent: tc.bound, request: req,
				progress: func(progressNotification) { reports++ }}
			var out bytes.Buffer
			if _, err := io.Copy(&out, oneByteAtATime{s}); err != nil {
				t.Fatal(err)
			}
			names, data := sseEvents(out.String())
			if reports != 1 || names[0] != "" || data[0] != progress {
				t.Fatalf("the progress event: %d reports, %q %q", reports, names[0], data[0])
			}
			if !tc.cut {
				if out.String() != tc.stream {
					t.Fatalf("a stream within the bound changed:\n%q", out.String())
				}
				return
			}
			if len(names) != 3 || names[1] != "llmrelay-cut" || names[2] != "" {
				t.Fatalf("events %q, data %q", names, data)
			}
			var answer struct {
				ID    int `json:"id"`
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(data[2]), &answer); err != nil || answer.ID != 7 || answer.Error.Code != codeAnswerTooLarge || !strings.Contains(answer.Error.Message, "max_response_bytes") {
				t.Fatalf("the answer: %s (%v)", data[2], err)
			}
		})
	}
}

// oneByteAtATime reads its reader one byte per Read, so that every
// position of the stream is a read's end once.
type oneByteAtATime struct{ r io.Reader }

func (o oneByteAtATime) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }
