package service_test

import (
	"fmt"
	"io"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine/enginetest"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// benchItems is the schema of benchReply.
const benchItems = `{"type":"object","properties":{"summary":{"type":"string"},"items":{"type":"array","items":{"type":"object",` +
	`"properties":{"id":{"type":"integer"},"name":{"type":"string"},"score":{"type":"number"},"ok":{"type":"boolean"},` +
	`"tags":{"type":"array","items":{"type":"string"}},"note":{"type":"null"}},"required":["id","name","score"]}}},"required":["summary","items"]}`

// benchReply is enginetest.BenchReplyDeltas as provider events.
func benchReply() []provider.Event {
	var events []provider.Event
	for _, d := range enginetest.BenchReplyDeltas() {
		events = append(events, provider.Event{Kind: provider.EventText, Text: d})
	}
	return events
}

// BenchmarkStructuredOutput measures one structured-output call of the
// 6.4 KB reply over bufconn through the production wiring: validated only,
// and with partial objects (within their byte bound).
func BenchmarkStructuredOutput(b *testing.B) {
	events := benchReply()
	for _, partials := range []bool{false, true} {
		b.Run(fmt.Sprintf("partial_objects=%v", partials), func(b *testing.B) {
			newScripted(b, step{events: events, err: io.EOF})
			in := servertest.Start(b, scriptedConfig(b))
			req := &llmrelayv1.GenerateRequest{
				Model:    "scripted/any",
				Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "list the items"}},
				ResponseFormat: &llmrelayv1.ResponseFormat{
					JsonSchema: jsonStruct(b, benchItems), StreamPartialObjects: partials,
				},
			}
			b.ReportAllocs()
			var sent int
			for b.Loop() {
				got, err := servertest.Collect(b.Context(), in.Client, req)
				if err != nil || got[len(got)-1].GetFinal().GetObject() == nil {
					b.Fatalf("Generate: %v", err)
				}
				sent += len(got)
			}
			b.ReportMetric(float64(sent)/float64(b.N), "events/op")
		})
	}
}
