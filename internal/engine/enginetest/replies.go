// Package enginetest helps test code that drives the engine
// (internal/engine) and its doors: replies as a model streams them, and a
// Sink that records a call's events.
package enginetest

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// BenchReplyDeltas returns a structured reply of 6.4 KB, an object
// holding an array of 60 small objects, cut in deltas of about 4 bytes as
// a model streams tokens.
func BenchReplyDeltas() []string { return SplitDeltas(ItemsReply(60), 4) }

// ItemsReply returns a structured reply holding a summary and an array of
// n small objects, about 104 bytes each.
func ItemsReply(n int) string {
	var b strings.Builder
	b.WriteString(`{"summary": "A long summary with \"quotes\" and ünïcode, to be streamed", "items": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "item number %d", "score": %d.25, "ok": %v, "tags": ["a", "b", "c"], "note": null}`, i, i, i, i%2 == 0)
	}
	b.WriteString("]}")
	return b.String()
}

// SplitDeltas cuts reply in deltas of about size bytes, as a model streams
// tokens, on rune boundaries: deltas are valid UTF-8.
func SplitDeltas(reply string, size int) []string {
	var deltas []string
	for i := 0; i < len(reply); {
		j := min(i+size, len(reply))
		for j < len(reply) && !utf8.RuneStart(reply[j]) {
			j++
		}
		deltas = append(deltas, reply[i:j])
		i = j
	}
	return deltas
}
