package httpx

import (
	"errors"
	"io"
	"strings"
	"testing"
)

type sseEvent struct{ name, data string }

// readAll reads every event of body, and the error that ended it.
func readAll(body, extra string) ([]sseEvent, error) {
	r := GetReader(strings.NewReader(body), extra)
	defer PutReader(r)
	var out []sseEvent
	for {
		ev, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, sseEvent{string(ev.Name), string(ev.Data)})
	}
}

func TestReaderEvents(t *testing.T) {
	long := strings.Repeat("x", 3*readerBufferSize)
	tests := []struct {
		name, body, extra string
		want              []sseEvent
	}{
		{"data lines", "data: a\n\ndata: b\n\n", "", []sseEvent{{"", "a"}, {"", "b"}}},
		{"named events", "event: ping\ndata: {}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"   }\n\n", "",
			[]sseEvent{{"ping", "{}"}, {"message_stop", `{"type":"message_stop"   }`}}},
		{"crlf line ends", "data: a\r\n\r\ndata: b\r\n\r\n", "", []sseEvent{{"", "a"}, {"", "b"}}},
		{"multi-line data", "data: a\ndata: b\n\n", "", []sseEvent{{"", "a\nb"}}},
		{"no space after colon", "data:a\n\n", "", []sseEvent{{"", "a"}}},
		{"only one space is stripped", "data:  a\n\n", "", []sseEvent{{"", " a"}}},
		{"comments and ids are skipped", ": keep-alive\nid: 7\nretry: 100\ndata: a\n\n: OPENROUTER PROCESSING\n\n", "", []sseEvent{{"", "a"}}},
		{"blank lines without data dispatch nothing", "\n\nevent: x\n\ndata: a\n\n", "", []sseEvent{{"", "a"}}},
		{"last event without blank line", "data: a\n\ndata: [DONE]", "", []sseEvent{{"", "a"}, {"", "[DONE]"}}},
		{"line longer than the buffer", "data: " + long + "\n\n", "", []sseEvent{{"", long}}},
		{"extra field is an event of its own", "data: a\n\nerror: {\"code\":500}\n\n", "error", []sseEvent{{"", "a"}, {"error", `{"code":500}`}}},
		{"empty body", "", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(tc.body, tc.extra)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("ended with %v, want io.EOF", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("events %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("event %d = %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestReaderRejectsLinesThatAreNotFields(t *testing.T) {
	tests := []struct {
		name, body, extra string
		want              error
	}{
		{"plain text", "data: a\n\n<html>502 Bad Gateway</html>\n", "", ErrMalformed},
		{"NDJSON", "{\"message\":{\"content\":\"hi\"}}\n", "", ErrMalformed},
		{"extra field not accepted", "error: {}\n\n", "", ErrMalformed},
		{"extra field inside an event", "data: a\nerror: {}\n\n", "error", ErrMalformed},
		{"a field name cut by the end of the body", "data: a\n\nda", "", ErrCut},
		{"a last line without its line end", "data: a\n\n<html>502", "", ErrCut},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(tc.body, tc.extra)
			if !errors.Is(err, tc.want) {
				t.Errorf("error = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestReaderMarksEventsTheEndOfTheBodyDispatched(t *testing.T) {
	r := GetReader(strings.NewReader("data: a\n\ndata: b"), "")
	defer PutReader(r)
	if ev, err := r.Next(); err != nil || ev.Cut {
		t.Fatalf("first event: cut %v, %v; want a whole event", ev.Cut, err)
	}
	if ev, err := r.Next(); err != nil || !ev.Cut || string(ev.Data) != "b" {
		t.Fatalf("last event %q: cut %v, %v; want it dispatched by the end of the body", ev.Data, ev.Cut, err)
	}
}

func TestReaderReportsBodyErrors(t *testing.T) {
	r := GetReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), errReader{io.ErrUnexpectedEOF}), "")
	defer PutReader(r)
	if ev, err := r.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("first event %q, %v", ev.Data, err)
	}
	if ev, err := r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("after a cut body: %q, %v; want io.ErrUnexpectedEOF, not the half event", ev.Data, err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestDrainReportsWhetherTheBodyEnded(t *testing.T) {
	r := GetReader(strings.NewReader("data: a\n\n\n\n"), "")
	defer PutReader(r)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if !r.Drain(100) {
		t.Error("Drain of a short rest = false, want true")
	}
	r2 := GetReader(strings.NewReader("data: a\n\n"+strings.Repeat("x", 200)), "")
	defer PutReader(r2)
	if _, err := r2.Next(); err != nil {
		t.Fatal(err)
	}
	if r2.Drain(100) {
		t.Error("Drain of a rest longer than the limit = true, want false")
	}
}

func FuzzReader(f *testing.F) {
	f.Add("data: a\n\nevent: x\ndata: b\r\n\r\n: c\n")
	f.Add("error: {}\n\ndata: [DONE]")
	f.Add("data:\n\ndata\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		events, err := readAll(body, "error")
		if err == nil {
			t.Fatal("Next ended without an error")
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrCut) {
			t.Fatalf("unexpected error %v", err)
		}
		for _, ev := range events {
			if len(ev.data) > len(body) || len(ev.name) > len(body) {
				t.Fatalf("event %q larger than the body", ev)
			}
		}
	})
}
