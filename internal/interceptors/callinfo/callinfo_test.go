package callinfo

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/llmrelay/llmrelay/internal/provider"
)

func TestInfo(t *testing.T) {
	const id = "0b5e4a8e-8f5c-4d69-9a43-3f7b1e7e2a10"
	tests := []struct {
		name      string
		requestID string
		wantKept  bool
	}{
		{"client's UUID is kept", id, true},
		{"no request id", "", false},
		{"not a UUID", "req-42", false},
		{"UUID in braces", "{" + id + "}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, info := NewContext(context.Background())
			if From(ctx) != info {
				t.Fatal("From does not return the Info")
			}
			madeUp := info.RequestID() // as the logging link does before a stream's request arrives
			info.RecordRequest("mock/"+strings.Repeat("m", 1000), tt.requestID)
			info.SetKey("checkout")
			info.ObserveAttempt(2)
			info.ObserveAttempt(1)
			s := info.Snapshot()
			if got := s.RequestID == tt.requestID; got != tt.wantKept {
				t.Errorf("request id %q, kept = %v", s.RequestID, got)
			}
			if !tt.wantKept && s.RequestID != madeUp {
				t.Errorf("request id %q, want the one made up before, %q", s.RequestID, madeUp)
			}
			if _, err := uuid.Parse(s.RequestID); err != nil {
				t.Errorf("request id %q is not a UUID", s.RequestID)
			}
			if info.RequestID() != s.RequestID {
				t.Error("the made-up request id changed")
			}
			if len(s.Model) != MaxFieldLen || s.Key != "checkout" || s.Attempts != 2 {
				t.Errorf("snapshot %+v", s)
			}
		})
	}
}

func TestNilInfo(t *testing.T) {
	info := From(context.Background())
	info.RecordRequest("m", "")
	info.SetKey("k")
	info.ObserveAttempt(1)
	if info.RequestID() != "" || info.Snapshot() != (Snapshot{}) {
		t.Error("a nil Info recorded something")
	}
}

func TestTarget(t *testing.T) {
	_, info := NewContext(context.Background())
	if _, ok := info.Target(); ok {
		t.Error("a new record has a target")
	}
	want := provider.Target{Entry: &provider.Entry{Config: provider.Config{Name: "mock"}}, Model: "echo"}
	info.SetTarget(want)
	if got, ok := info.Target(); !ok || got != want || got.String() != "mock/echo" {
		t.Errorf("Target() = %v, %v; want %v", got, ok, want)
	}
	var none *Info
	none.SetTarget(want)
	if _, ok := none.Target(); ok {
		t.Error("a nil Info has a target")
	}
}
