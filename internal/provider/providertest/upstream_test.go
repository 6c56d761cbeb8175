package providertest

import (
	"strings"
	"testing"
)

func TestChunksSplitAtBlankLines(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"lf", "data: a\n\ndata: b\n\n", []string{"data: a\n\n", "data: b\n\n"}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"data: a\r\n\r\n", "data: b\r\n\r\n"}},
		{"named events", "event: x\ndata: 1\n\nevent: y\ndata: 2\n\n", []string{"event: x\ndata: 1\n\n", "event: y\ndata: 2\n\n"}},
		{"unterminated tail", "data: a\n\ndata: b", []string{"data: a\n\n", "data: b"}},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range Chunks([]byte(tc.in)) {
				got = append(got, string(c))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("Chunks(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
