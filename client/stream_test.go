package client

import (
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

func TestStreamEvents(t *testing.T) {
	tests := []struct {
		name       string
		events     []*llmrelayv1.GenerateEvent
		end        error
		stopAfter  int // leave the loop after this many events; 0 reads all
		wantEvents int
		wantErr    func(error) bool
	}{
		{name: "to the final", events: []*llmrelayv1.GenerateEvent{delta(1, "a"), final(1, "a")}, end: io.EOF, wantEvents: 2},
		{name: "failed call", events: []*llmrelayv1.GenerateEvent{delta(1, "a")}, end: status.Error(codes.Unavailable, "x"), wantEvents: 1,
			wantErr: func(err error) bool { var e *Error; return errors.As(err, &e) && e.Code == codes.Unavailable }},
		{name: "no final", events: []*llmrelayv1.GenerateEvent{delta(1, "a")}, end: io.EOF, wantEvents: 1,
			wantErr: func(err error) bool { return errors.Is(err, ErrNoFinal) }},
		{name: "caller leaves early", events: []*llmrelayv1.GenerateEvent{delta(1, "a"), delta(1, "b"), final(1, "ab")}, end: io.EOF, stopAfter: 1, wantEvents: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cancelled := 0
			s := &Stream{recv: &fakeStream{events: tt.events, end: tt.end}, cancel: func() { cancelled++ }}
			var got int
			var gotErr error
			for ev, err := range s.Events() {
				if err != nil {
					if ev != nil {
						t.Errorf("an error came with event %v", ev)
					}
					gotErr = err
					continue
				}
				got++
				if got == tt.stopAfter {
					break
				}
			}
			if got != tt.wantEvents {
				t.Errorf("got %d events, want %d", got, tt.wantEvents)
			}
			if (tt.wantErr == nil) != (gotErr == nil) || (tt.wantErr != nil && !tt.wantErr(gotErr)) {
				t.Errorf("error = %v", gotErr)
			}
			if cancelled == 0 {
				t.Error("the call was not released when the loop ended")
			}
		})
	}
}

func TestStreamRecvAfterFinal(t *testing.T) {
	s := &Stream{recv: &fakeStream{events: []*llmrelayv1.GenerateEvent{final(1, "x")}, end: io.EOF}}
	if ev, err := s.Recv(); err != nil || ev.GetFinal() == nil {
		t.Fatalf("Recv = %v, %v; want the final", ev, err)
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("Recv after the final = %v, want io.EOF", err)
	}
}
