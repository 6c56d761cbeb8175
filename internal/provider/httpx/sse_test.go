package httpx

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

type sseEvent struct{ name, data string }

// readAll reads every event of body, and the error that ended it.
func readAll(body, extra string) ([]sseEvent, error) {
	return readFrom(strings.NewReader(body), extra)
}

// readFrom is readAll from body.
func readFrom(body io.Reader, extra string) ([]sseEvent, error) {
	r := GetReader(body, extra)
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

// pieces reads body in reads of at most n bytes.
type pieces struct {
	body []byte
	n    int
}

func (p *pieces) Read(b []byte) (int, error) {
	if len(p.body) == 0 {
		return 0, io.EOF
	}
	k := copy(b[:min(len(b), p.n)], p.body)
	p.body = p.body[k:]
	return k, nil
}

// awaitingPieces is pieces as a dataAwaiter: a body a Reader waits for
// with no buffer.
type awaitingPieces struct{ *pieces }

func (awaitingPieces) awaitData() bool { return true }

// TestReaderEventsDoNotDependOnHowTheBodyArrives: the same body read whole
// and in reads of every size around the Reader's two buffers, from a body
// it waits for in a buffer or with none, gives the same events and the
// same end: lines cut anywhere, a "\r\n" cut in two, lines longer than
// either buffer, a last line without its end.
func TestReaderEventsDoNotDependOnHowTheBodyArrives(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "event: e%d\r\ndata: %s\r\n\r\n", i, strings.Repeat("y", i*37))
		fmt.Fprintf(&b, ": keep-alive\ndata: %s\ndata: two\n\n", strings.Repeat("z", (i*173)%(2*readerBufferSize)))
	}
	b.WriteString("data: last")
	body := b.String()
	want, wantErr := readAll(body, "")
	if len(want) != 81 || !errors.Is(wantErr, io.EOF) {
		t.Fatalf("read whole: %d events, %v; want 81 and io.EOF", len(want), wantErr)
	}
	for _, n := range []int{1, 2, 7, waitBufferSize - 1, waitBufferSize, waitBufferSize + 1, readerBufferSize - 1, readerBufferSize, readerBufferSize + 1, 3 * readerBufferSize} {
		got, err := readFrom(&pieces{[]byte(body), n}, "")
		if !errors.Is(err, io.EOF) || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("read %d bytes at a time: %d events ending in %v, want the %d events read whole", n, len(got), err, len(want))
		}
		got, err = readFrom(awaitingPieces{&pieces{[]byte(body), n}}, "")
		if !errors.Is(err, io.EOF) || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("read %d bytes at a time after waits with no buffer: %d events ending in %v, want the %d events read whole", n, len(got), err, len(want))
		}
	}
}

// blockingBody hands each Read's buffer size to reads and then blocks
// until unblock is closed.
type blockingBody struct {
	rest    []byte
	reads   chan int
	unblock chan struct{}
}

func (b *blockingBody) Read(p []byte) (int, error) {
	if len(b.rest) > 0 {
		n := copy(p, b.rest)
		b.rest = b.rest[n:]
		return n, nil
	}
	b.reads <- len(p)
	<-b.unblock
	return 0, io.EOF
}

// TestWaitingReaderHoldsNoReadBuffer: once a Reader has read everything
// that arrived from a body that is not a dataAwaiter, it waits for the
// next chunk in a few hundred bytes, not in the pooled read buffer a burst
// of several KiB needed. (Bodies of httpx's own connections are waited for
// with no buffer: TestWaitingReadersHoldNoBuffer.)
func TestWaitingReaderHoldsNoReadBuffer(t *testing.T) {
	var burst strings.Builder
	for range 20 {
		burst.WriteString("data: " + strings.Repeat("x", 300) + "\n\n")
	}
	body := &blockingBody{rest: []byte(burst.String()), reads: make(chan int, 1), unblock: make(chan struct{})}
	r := GetReader(body, "")
	defer PutReader(r)
	for i := range 20 {
		if _, err := r.Next(); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.Next()
		done <- err
	}()
	if n := <-body.reads; n > waitBufferSize {
		t.Errorf("the waiting read has a %d-byte buffer, want at most %d", n, waitBufferSize)
	}
	if r.big != nil {
		t.Error("the waiting Reader still holds its pooled read buffer")
	}
	close(body.unblock)
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Errorf("Next after the body ended: %v, want io.EOF", err)
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

// endlessDataLines is a body of data lines that no blank line ends: an
// event that never ends. Past limit bytes it fails with errReadTooFar.
type endlessDataLines struct{ served, limit int }

var errReadTooFar = errors.New("read far past any bound of an event")

func (b *endlessDataLines) Read(p []byte) (int, error) {
	if b.served >= b.limit {
		return 0, errReadTooFar
	}
	n := 0
	for n < len(p) {
		at := b.served % len(dataLine)
		c := copy(p[n:], dataLine[at:])
		n += c
		b.served += c
	}
	return n, nil
}

var dataLine = "data: " + strings.Repeat("x", 1000) + "\n"

func TestReaderBoundsAnEventOfManyDataLines(t *testing.T) {
	// Each line is short, so the line bound never applies; every read is
	// a sign of life, so no stall timeout ends it either.
	r := GetReader(&endlessDataLines{limit: 4 * MaxLineBytes}, "")
	defer PutReader(r)
	_, err := r.Next()
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("an event whose data lines never end: %v; want ErrMalformed once its data passes %d bytes", err, MaxLineBytes)
	}
}
