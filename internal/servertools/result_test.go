package servertools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestBound: a result is cut to at most the limit, on a character
// boundary, with the note to the model when the note fits.
func TestBound(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2000 bytes
	tests := []struct {
		name     string
		s        string
		limit    int
		wantNote bool
	}{
		{name: "fits", s: "short", limit: 10},
		{name: "cut with the note", s: long, limit: 1024, wantNote: true},
		{name: "too small for the note: cut alone", s: long, limit: 21},
		{name: "nothing left", s: long, limit: 0},
		{name: "below nothing", s: long, limit: -5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Bound(tt.s, tt.limit)
			if len(tt.s) <= tt.limit {
				if got != tt.s {
					t.Fatalf("Bound changed a result that fits: %q", got)
				}
				return
			}
			if len(got) > max(tt.limit, 0) || !utf8.ValidString(got) {
				t.Fatalf("Bound(%d) = %d bytes, valid UTF-8 %v", tt.limit, len(got), utf8.ValidString(got))
			}
			if hasNote := strings.Contains(got, "[llmrelay: the tool's result was cut here"); hasNote != tt.wantNote {
				t.Errorf("note %v, want %v: %q", hasNote, tt.wantNote, got)
			}
		})
	}
}
