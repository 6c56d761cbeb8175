package httpx

import (
	"context"
	"io"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// signalledPipe is a pipe's reading end that tells, before each read,
// that its reader is about to wait for the writer.
type signalledPipe struct {
	*io.PipeReader
	reading chan struct{}
}

func (p signalledPipe) Read(b []byte) (int, error) {
	p.reading <- struct{}{}
	return p.PipeReader.Read(b)
}

// TestAwaitingStreamHoldsNoEvents: a stream that awaits its next event
// holds no decoded events' buffer while the provider is slow (a replica
// holds tens of thousands of such streams); what arrives after the wait
// (two events in one write, then an event split over two writes) comes
// whole and in order, and the stream's end after it.
func TestAwaitingStreamHoldsNoEvents(t *testing.T) {
	pr, pw := io.Pipe()
	body := signalledPipe{PipeReader: pr, reading: make(chan struct{}, 1)}
	s := NewStream(context.Background(), io.NopCloser(body), "", endDecoder{})
	defer s.Close()
	got := make(chan string)
	go func() {
		defer close(got)
		for {
			s.Await()
			var ev provider.Event
			if err := s.RecvInto(&ev); err != nil {
				got <- "end: " + err.Error()
				return
			}
			got <- ev.Text
		}
	}()
	waiting := func(when string) {
		t.Helper()
		<-body.reading // the stream reads, and waits for the writer
		if s.events != nil {
			t.Errorf("%s, the waiting stream holds a buffer of %d events", when, cap(s.events))
		}
	}
	write := func(data string) {
		t.Helper()
		if _, err := io.WriteString(pw, data); err != nil {
			t.Fatal(err)
		}
	}
	want := func(texts ...string) {
		t.Helper()
		for _, w := range texts {
			if g := <-got; g != w {
				t.Fatalf("got %q, want %q", g, w)
			}
		}
	}
	waiting("before the first event")
	write("data: one\n\n")
	want("one")
	waiting("after the first event")
	write("data: two\n\ndata: three\n\n")
	want("two")
	// "three" is whole in the Reader's buffer: it is decoded without a
	// wait, so only then does the stream wait again.
	want("three")
	waiting("after three")
	write("data: fo")
	waiting("in the middle of an event")
	write("ur\n\n")
	want("four")
	waiting("after four")
	write("data: END\n\n")
	want("end: EOF")
}
