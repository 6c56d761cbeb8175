package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
)

// The long-tail upstream of the hedging measurement: most requests get
// their first byte after tailFast, one in ten after tailSlow (a provider
// whose time to first token has a long tail), drawn from a fixed seed.
const (
	tailFast  = 20 * time.Millisecond
	tailSlow  = 500 * time.Millisecond
	tailShare = 0.1
)

// The case, on the same upstream: a call whose request body holds
// slowFirstMark gets its first request's first byte after slowFirst and
// every later request's (its hedge's) after slowFirstHedge.
const (
	slowFirstMark  = "[slow first]"
	slowFirst      = 2 * time.Second
	slowFirstHedge = 50 * time.Millisecond
	slowFirstAfter = 200 * time.Millisecond
)

// tailUpstream is the upstream of the hedging measurements.
type tailUpstream struct {
	*openaitest.Server
	closed atomic.Int64 // requests whose client went away before the end
}

// newTailUpstream starts the long-tail upstream.
func newTailUpstream(chunks int) *tailUpstream {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(18, 2026))
	seen := map[string]bool{} // bodies of slowFirstMark calls already requested once
	u := &tailUpstream{}
	u.Server = openaitest.NewServer(openaitest.Options{Chunks: chunks,
		ClientGone: func(int, bool) { u.closed.Add(1) },
		FaultFor: func(_ int, body []byte) openaitest.Fault {
			mu.Lock()
			defer mu.Unlock()
			if bytes.Contains(body, []byte(slowFirstMark)) {
				if seen[string(body)] {
					return openaitest.Fault{FirstByteDelay: slowFirstHedge}
				}
				seen[string(body)] = true
				return openaitest.Fault{FirstByteDelay: slowFirst}
			}
			if rng.Float64() < tailShare {
				return openaitest.Fault{FirstByteDelay: tailSlow}
			}
			return openaitest.Fault{FirstByteDelay: tailFast}
		}})
	return u
}

// slowFirstReport is the case measured: calls whose first request
// takes slowFirst to its first byte and whose hedge takes slowFirstHedge,
// hedged after slowFirstAfter.
type slowFirstReport struct {
	results  []result
	requests int64 // upstream requests the calls made
	closed   int64 // of which closed by llmrelay before their end
}

// measureSlowFirst makes n such calls, one at a time, each with its own
// body so that the upstream knows its first request from its hedge.
func measureSlowFirst(ctx context.Context, client llmrelayv1.LLMServiceClient, up *tailUpstream, n int, want string) slowFirstReport {
	var rep slowFirstReport
	requests, closed := up.Requests(), up.closed.Load()
	for i := range n {
		req := &llmrelayv1.GenerateRequest{
			Model:    "tail/fake",
			Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: fmt.Sprintf("%s Say twenty words (call %d).", slowFirstMark, i)}},
			Hedging:  &llmrelayv1.HedgePolicy{HedgeAfter: durationpb.New(slowFirstAfter)},
		}
		rep.results = append(rep.results, relayedRequest(client, req, want)(ctx))
	}
	// A loser's handler learns its client went away a moment after the call
	// ended; give it that moment.
	for deadline := time.Now().Add(5 * time.Second); up.OpenStreams() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	rep.requests, rep.closed = up.Requests()-requests, up.closed.Load()-closed
	return rep
}

func (s slowFirstReport) print(w io.Writer) {
	fmt.Fprintf(w, "\n### Hedging a slow first request (%d calls, concurrency 1)\n\n", len(s.results))
	fmt.Fprintf(w, "Each call's first request gets its first byte after %v, its hedge after %v; hedge_after %v.\n\n", slowFirst, slowFirstHedge, slowFirstAfter)
	fmt.Fprintln(w, "| time to first delta | p50 | p90 | p99 | max | upstream requests per call | closed early per call |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	q := quantiles(s.results, 0.5, 0.9, 0.99, 1)
	per := func(v int64) float64 { return float64(v) / float64(max(len(s.results), 1)) }
	fmt.Fprintf(w, "| hedged, max_hedges 1 | %s | %s | %s | %s | %.2f | %.2f |\n", ms(q[0]), ms(q[1]), ms(q[2]), ms(q[3]), per(s.requests), per(s.closed))
	if err, n := firstErr(s.results); n > 0 {
		fmt.Fprintf(w, "\n%d of %d calls failed; first: %v\n", n, len(s.results), err)
	}
}

// hedgeReport is the hedging measurement: the same calls, unhedged and
// hedged with one and with two hedges, against the long-tail upstream,
// taking turns.
type hedgeReport struct {
	after time.Duration
	calls int
	kinds []hedgeKind
}

// hedgeKind is one way of calling, and what its calls did.
type hedgeKind struct {
	name      string
	maxHedges uint32 // 0: unhedged
	results   []result
	requests  int64 // upstream requests its calls made
}

// measureHedging makes n calls of each kind, one at a time, each round in
// a rotated order, so that every kind sees the same machine state.
func measureHedging(ctx context.Context, client llmrelayv1.LLMServiceClient, up *tailUpstream, n int, after time.Duration, want string) hedgeReport {
	rep := hedgeReport{after: after, calls: n, kinds: []hedgeKind{
		{name: "unhedged"}, {name: "hedged, max_hedges 1", maxHedges: 1}, {name: "hedged, max_hedges 2", maxHedges: 2},
	}}
	streamers := make([]streamer, len(rep.kinds))
	for i, k := range rep.kinds {
		req := &llmrelayv1.GenerateRequest{
			Model:    "tail/fake",
			Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "Say twenty words."}},
		}
		if k.maxHedges > 0 {
			req.Hedging = &llmrelayv1.HedgePolicy{HedgeAfter: durationpb.New(after), MaxHedges: &k.maxHedges}
		}
		streamers[i] = relayedRequest(client, req, want)
	}
	for round := range n {
		for j := range rep.kinds {
			i := (round + j) % len(rep.kinds)
			before := up.Requests()
			r := streamers[i](ctx)
			rep.kinds[i].requests += up.Requests() - before
			rep.kinds[i].results = append(rep.kinds[i].results, r)
		}
	}
	return rep
}

// quantiles returns the first-delta quantiles of the results that
// succeeded.
func quantiles(rs []result, qs ...float64) []time.Duration {
	var ds []time.Duration
	for _, r := range rs {
		if r.err == nil {
			ds = append(ds, r.firstDelta)
		}
	}
	out := make([]time.Duration, len(qs))
	if len(ds) == 0 {
		return out
	}
	slices.Sort(ds)
	for i, q := range qs {
		out[i] = ds[min(len(ds)-1, int(q*float64(len(ds))))]
	}
	return out
}

func (h hedgeReport) print(w io.Writer) {
	fmt.Fprintf(w, "\n### Hedging against a long-tail upstream (%d calls of each kind, concurrency 1)\n\n", h.calls)
	fmt.Fprintf(w, "First byte after %v, one request in %.0f after %v; hedge_after %v.\n\n", tailFast, 1/tailShare, tailSlow, h.after)
	fmt.Fprintln(w, "| time to first delta | p50 | p90 | p95 | p99 | upstream requests per call |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	for _, k := range h.kinds {
		q := quantiles(k.results, 0.5, 0.9, 0.95, 0.99)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.2f |\n", k.name, ms(q[0]), ms(q[1]), ms(q[2]), ms(q[3]), float64(k.requests)/float64(max(len(k.results), 1)))
		if err, n := firstErr(k.results); n > 0 {
			fmt.Fprintf(w, "\n%s: %d of %d calls failed; first: %v\n", k.name, n, len(k.results), err)
		}
	}
}

// summary is the hedging part of the one-line result.
func (h hedgeReport) summary() string {
	p, q := quantiles(h.kinds[0].results, 0.95), quantiles(h.kinds[1].results, 0.95)
	return fmt.Sprintf("; hedging after %v cuts the p95 time to first delta against a long-tail upstream from %s to %s for %.2f upstream requests per call",
		h.after, ms(p[0]), ms(q[0]), float64(h.kinds[1].requests)/float64(max(len(h.kinds[1].results), 1)))
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
