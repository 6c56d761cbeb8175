package schema

import (
	"fmt"
	"strings"
	"testing"
)

// benchReply is a structured reply of about 10 KB: an object holding an
// array of 60 small objects.
func benchReply() string {
	var b strings.Builder
	b.WriteString("```json\n{\"summary\": \"A long summary with \\\"quotes\\\" and ünïcode — to be streamed\", \"items\": [")
	for i := range 60 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "item number %d", "score": %d.25, "ok": %v, "tags": ["a", "b\n", "c"], "note": null}`, i, i, i, i%2 == 0)
	}
	b.WriteString("]}\n```")
	return b.String()
}

// BenchmarkPartial streams the 10 KB reply in 4-byte deltas, as a model
// would in tokens, taking a snapshot after every delta that changed the
// value: the whole cost of partial objects for one reply.
func BenchmarkPartial(b *testing.B) {
	reply := benchReply()
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	snapshots := 0
	for b.Loop() {
		p := NewPartial()
		for i := 0; i < len(reply); i += 4 {
			if p.Feed(reply[i:min(i+4, len(reply))]) {
				p.Snapshot()
				snapshots++
			}
		}
	}
	b.ReportMetric(float64(snapshots)/float64(b.N), "snapshots/op")
}

// BenchmarkPartialFeedOnly is BenchmarkPartial without snapshots: the
// parsing alone.
func BenchmarkPartialFeedOnly(b *testing.B) {
	reply := benchReply()
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		p := NewPartial()
		for i := 0; i < len(reply); i += 4 {
			p.Feed(reply[i:min(i+4, len(reply))])
		}
	}
}

// BenchmarkReparseEveryDelta is the naive alternative to Partial for
// comparison: parse the whole text so far after every delta (here with
// Partial itself, from scratch).
func BenchmarkReparseEveryDelta(b *testing.B) {
	reply := benchReply()
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		for i := 0; i < len(reply); i += 4 {
			p := NewPartial()
			p.Feed(reply[:min(i+4, len(reply))])
			p.Snapshot()
		}
	}
}

func BenchmarkParseReply(b *testing.B) {
	reply := benchReply()
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseReply(reply); err != nil {
			b.Fatal(err)
		}
	}
}

const benchSchema = `{"type":"object","required":["summary","items"],"properties":{
	"summary":{"type":"string","minLength":1},
	"items":{"type":"array","items":{"type":"object","additionalProperties":false,
		"required":["id","name","score","ok","tags","note"],
		"properties":{"id":{"type":"integer","minimum":0},"name":{"type":"string"},"score":{"type":"number"},
			"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},"note":{"type":["string","null"]}}}}}}`

// BenchmarkCheck parses and validates the 10 KB reply.
func BenchmarkCheck(b *testing.B) {
	s := mustCompile(b, benchSchema)
	reply := benchReply()
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		if _, vs := s.Check(reply); len(vs) > 0 {
			b.Fatal(vs)
		}
	}
}

// BenchmarkCompileCached is the per-request cost of a schema already in the
// cache: canonicalizing and hashing it.
func BenchmarkCompileCached(b *testing.B) {
	cache := NewCache(Config{})
	raw := []byte(benchSchema)
	if _, err := cache.Compile(raw); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cache.Compile(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileUncached is the cost of a new schema.
func BenchmarkCompileUncached(b *testing.B) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		raw := strings.Replace(benchSchema, `"minimum":0`, fmt.Sprintf(`"minimum":%d`, -i), 1)
		if _, err := NewCache(Config{}).Compile([]byte(raw)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPartialRepeatedKeys feeds an object of 20,000 keys that repeats
// each of them: each repeat costs as little as a new key (it cost a shift
// of every later key before).
func BenchmarkPartialRepeatedKeys(b *testing.B) {
	text := duplicateKeys(20000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		p := NewPartial()
		p.Feed(text)
	}
}
