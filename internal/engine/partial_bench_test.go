package engine

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine/enginetest"
)

// BenchmarkPartialObjects measures the server's side of partial objects
// for one reply of 6.4 KB or 25 KB (60 or 240 small objects in an array)
// streamed in 4-byte deltas: reading each delta, converting the snapshots
// it sends to google.protobuf.Value and marshalling their events as gRPC
// does. policy=every-change is what llmrelay did before the byte bound, a
// snapshot for every delta that changed what can be read;
// policy=bounded is what it does (partialObjects.next). partial-bytes/op
// is the bytes of partial_object events per reply, x-reply their ratio to
// the reply's bytes (the bound is partialRatio).
func BenchmarkPartialObjects(b *testing.B) {
	so := &structured{partials: true}
	for _, items := range []int{60, 240} {
		reply := enginetest.ItemsReply(items)
		deltas := enginetest.SplitDeltas(reply, 4)
		for _, bounded := range []bool{false, true} {
			policy := "every-change"
			if bounded {
				policy = "bounded"
			}
			b.Run(fmt.Sprintf("reply=%.1fKB/policy=%s", float64(len(reply))/1000, policy), func(b *testing.B) {
				b.ReportAllocs()
				var events, bytes int
				for b.Loop() {
					p := so.newPartial()
					for _, d := range deltas {
						var ev *llmrelayv1.GenerateEvent
						if bounded {
							ev = p.next(d, 1)
						} else {
							ev = nextEveryChange(p, d)
						}
						if ev == nil {
							continue
						}
						events++
						ev.Sequence = uint64(events)
						out, err := proto.Marshal(ev)
						if err != nil {
							b.Fatal(err)
						}
						bytes += len(out)
					}
				}
				b.ReportMetric(float64(events)/float64(b.N), "events/op")
				b.ReportMetric(float64(bytes)/float64(b.N), "partial-bytes/op")
				b.ReportMetric(float64(bytes)/float64(b.N)/float64(len(reply)), "x-reply")
			})
		}
	}
}

// nextEveryChange is partialObjects.next without the byte bound: the
// event for every delta that changes what can be read of the reply.
func nextEveryChange(p *partialObjects, delta string) *llmrelayv1.GenerateEvent {
	if !p.Feed(delta) {
		return nil
	}
	return p.event(1)
}
