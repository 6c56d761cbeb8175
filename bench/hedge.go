package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
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

// tailUpstream starts the long-tail upstream.
func tailUpstream(chunks int) *openaitest.Server {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(18, 2026))
	return openaitest.NewServer(openaitest.Options{Chunks: chunks, FaultFor: func(int, []byte) openaitest.Fault {
		mu.Lock()
		slow := rng.Float64() < tailShare
		mu.Unlock()
		if slow {
			return openaitest.Fault{FirstByteDelay: tailSlow}
		}
		return openaitest.Fault{FirstByteDelay: tailFast}
	}})
}

// hedgeReport is the hedging measurement: the same calls, unhedged and
// hedged, against the long-tail upstream, alternately.
type hedgeReport struct {
	after           time.Duration
	plain, hedged   []result
	requestsPerCall [2]float64 // upstream requests per call: unhedged, hedged
	calls           int
}

// measureHedging makes n calls of each kind, one at a time, alternating.
func measureHedging(ctx context.Context, client llmrelayv1.LLMServiceClient, up *openaitest.Server, n int, after time.Duration, want string) hedgeReport {
	req := func(h *llmrelayv1.HedgePolicy) *llmrelayv1.GenerateRequest {
		return &llmrelayv1.GenerateRequest{
			Model:    "tail/fake",
			Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "Say twenty words."}},
			Hedging:  h,
		}
	}
	plain := relayedRequest(client, req(nil), want)
	hedged := relayedRequest(client, req(&llmrelayv1.HedgePolicy{HedgeAfter: durationpb.New(after)}), want)
	rep := hedgeReport{after: after, calls: n}
	// Count each kind's upstream requests around its own calls.
	counted := func(s streamer, kind int) streamer {
		return func(ctx context.Context) result {
			before := up.Requests()
			r := s(ctx)
			rep.requestsPerCall[kind] += float64(up.Requests() - before)
			return r
		}
	}
	rep.plain, rep.hedged = latencies(ctx, counted(plain, 0), counted(hedged, 1), n)
	for i := range rep.requestsPerCall {
		rep.requestsPerCall[i] /= float64(n)
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
	fmt.Fprintf(w, "First byte after %v, one request in %.0f after %v; hedge_after %v, max_hedges 1.\n\n", tailFast, 1/tailShare, tailSlow, h.after)
	fmt.Fprintln(w, "| time to first delta | p50 | p90 | p95 | p99 | upstream requests per call |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	for i, row := range []struct {
		name string
		rs   []result
	}{{"unhedged", h.plain}, {"hedged", h.hedged}} {
		q := quantiles(row.rs, 0.5, 0.9, 0.95, 0.99)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.2f |\n", row.name, ms(q[0]), ms(q[1]), ms(q[2]), ms(q[3]), h.requestsPerCall[i])
		if err, n := firstErr(row.rs); n > 0 {
			fmt.Fprintf(w, "\n%s: %d of %d calls failed; first: %v\n", row.name, n, len(row.rs), err)
		}
	}
}

// summary is the hedging part of the one-line result.
func (h hedgeReport) summary() string {
	p, q := quantiles(h.plain, 0.95), quantiles(h.hedged, 0.95)
	return fmt.Sprintf("; hedging after %v cuts the p95 time to first delta against a long-tail upstream from %s to %s for %.2f upstream requests per call",
		h.after, ms(p[0]), ms(q[0]), h.requestsPerCall[1])
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
