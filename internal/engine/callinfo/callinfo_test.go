package callinfo

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

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
	info.RecordMetadata(map[string]string{"a": "b"})
	if info.RequestID() != "" || info.Snapshot() != (Snapshot{}) || info.Metadata() != nil {
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

func TestRecordMetadataIsBounded(t *testing.T) {
	md := map[string]string{}
	for i := range MaxLabels + 10 {
		md[fmt.Sprintf("k%03d", i)] = "v"
	}
	md["k000"] = strings.Repeat("é", MaxLabelValueLen) // 2 bytes each: cut at a character boundary
	md["a"+strings.Repeat("k", 300)] = "long key"      // first in key order
	_, info := NewContext(context.Background())
	info.RecordMetadata(md)
	got := info.Metadata()
	if len(got) != MaxLabels {
		t.Fatalf("%d labels kept, want %d", len(got), MaxLabels)
	}
	if len(got[0].Key) != MaxLabelKeyLen || got[0].Value != "long key" {
		t.Errorf("first label %q (%d bytes), want the long key cut to %d bytes", got[0].Key, len(got[0].Key), MaxLabelKeyLen)
	}
	if got[1].Key != "k000" || len(got[1].Value) != MaxLabelValueLen || !utf8.ValidString(got[1].Value) {
		t.Errorf("label %q = %d bytes, valid UTF-8 %v; want k000 cut to %d bytes", got[1].Key, len(got[1].Value), utf8.ValidString(got[1].Value), MaxLabelValueLen)
	}
}

// TestCanonicalRequestID: a UUID in any case is known by its lower-case
// form; anything else is not a request id and is left as it is.
func TestCanonicalRequestID(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"lower case", "0d1f6c8e-2a4b-4f31-9a1e-3b1f0c2d4e5f", "0d1f6c8e-2a4b-4f31-9a1e-3b1f0c2d4e5f", true},
		{"upper case", "0D1F6C8E-2A4B-4F31-9A1E-3B1F0C2D4E5F", "0d1f6c8e-2a4b-4f31-9a1e-3b1f0c2d4e5f", true},
		{"mixed case", "0d1F6c8E-2a4b-4F31-9a1e-3B1f0c2d4e5f", "0d1f6c8e-2a4b-4f31-9a1e-3b1f0c2d4e5f", true},
		{"braces", "{0d1f6c8e-2a4b-4f31-9a1e-3b1f0c2d4e5f}", "{0d1f6c8e-2a4b-4f31-9a1e-3b1f0c2d4e5f}", false},
		{"urn", "urn:uuid:0D1F6C8E-2A4B-4F31-9A1E-3B1F0C2D4E5F", "urn:uuid:0D1F6C8E-2A4B-4F31-9A1E-3B1F0C2D4E5F", false},
		{"not hex", "0D1F6C8E-2A4B-4F31-9A1E-3B1F0C2D4E5G", "0D1F6C8E-2A4B-4F31-9A1E-3B1F0C2D4E5G", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := CanonicalRequestID(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("CanonicalRequestID(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
			var i Info
			i.RecordRequest("m", tt.in)
			if id := i.RequestID(); tt.ok && id != tt.want {
				t.Fatalf("the record's id %q, want %q", id, tt.want)
			}
		})
	}
}
