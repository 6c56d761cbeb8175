package service

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
)

// BenchReplyDeltas is benchReplyDeltas for the package's external tests.
var BenchReplyDeltas = benchReplyDeltas

// benchReplyDeltas returns a structured reply of 6.4 KB, an object
// holding an array of 60 small objects, cut in deltas of about 4 bytes as
// a model streams tokens (on rune boundaries: deltas are valid UTF-8).
func benchReplyDeltas() []string {
	var b strings.Builder
	b.WriteString(`{"summary": "A long summary with \"quotes\" and ünïcode, to be streamed", "items": [`)
	for i := range 60 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "item number %d", "score": %d.25, "ok": %v, "tags": ["a", "b", "c"], "note": null}`, i, i, i, i%2 == 0)
	}
	b.WriteString("]}")
	reply := b.String()
	var deltas []string
	for i := 0; i < len(reply); {
		j := min(i+4, len(reply))
		for j < len(reply) && !utf8.RuneStart(reply[j]) {
			j++
		}
		deltas = append(deltas, reply[i:j])
		i = j
	}
	return deltas
}

// BenchmarkPartialObjects measures the server's side of partial objects
// for one 6.4 KB reply: reading each delta, converting each changed snapshot
// to a google.protobuf.Value and marshalling its event as gRPC does, with
// the conversion done from scratch every time or reusing the completed
// members.
func BenchmarkPartialObjects(b *testing.B) {
	deltas := benchReplyDeltas()
	so := &structured{partials: true}
	for _, reuse := range []bool{false, true} {
		b.Run(fmt.Sprintf("reuse=%v", reuse), func(b *testing.B) {
			b.ReportAllocs()
			var events, bytes int
			for b.Loop() {
				p := so.newPartial()
				for _, d := range deltas {
					if !p.Feed(d) {
						continue
					}
					v, ok := p.Snapshot()
					if !ok {
						continue
					}
					var pv *structpb.Value
					var err error
					if reuse {
						pv, err = p.convert(v)
					} else {
						pv, err = structpb.NewValue(v)
					}
					if err != nil {
						b.Fatal(err)
					}
					out, err := proto.Marshal(&llmrelayv1.GenerateEvent{Event: &llmrelayv1.GenerateEvent_PartialObject{PartialObject: pv}})
					if err != nil {
						b.Fatal(err)
					}
					events++
					bytes += len(out)
				}
			}
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
			b.ReportMetric(float64(bytes)/float64(b.N), "wire-bytes/op")
		})
	}
}
