package callinfo

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
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
