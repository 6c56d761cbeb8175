package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// held is what holding many slow streams open at once showed.
type held struct {
	name      string // the relay's
	streams   int
	open      int64 // streams the upstream had open at the sample
	completed int
	errs      int
	err       error
	ramp      time.Duration // until every stream was open upstream
	at        usage         // llmrelay with every stream open
	base      usage         // llmrelay before
	// cpuPerChunk is llmrelay's CPU time over a window with every stream
	// open, divided by the chunks the open streams were due in it (one
	// each per -hold-chunk-delay); probe is the distribution of new calls'
	// first delta, made one at a time while the streams are held.
	cpuPerChunk time.Duration
	probe       dist
	probed      int
}

func (h held) per(f func(usage) float64) float64 {
	if h.open == 0 {
		return 0
	}
	return (f(h.at) - f(h.base)) / float64(h.open)
}

// hold opens n streams through llmrelay to the paced upstream, spread over
// the client connections, samples llmrelay once the upstream has all of
// them open, and waits for every one of them to complete.
// With rate > 0 the streams start at most rate a second (a real replica's
// load arrives over time; 100,000 at once would be 100,000
// requests racing for the upstream's first connections).
func hold(ctx context.Context, rel *relay, clients []llmrelayv1.LLMServiceClient, slow openCounter, n int, want string, every time.Duration, probe streamer, probes, rate int) (held, error) {
	h := held{streams: n}
	base, err := lowest(rel, 5, 100*time.Millisecond)
	if err != nil {
		return h, err
	}
	h.base = base
	var t tally
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		if rate > 0 && i > 0 && i%100 == 0 {
			// Paced in steps of 100 streams.
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		}
		s := relayed(clients[i%len(clients)], "slow/fake", want)
		wg.Go(func() { t.record(s(ctx)) })
	}
	// Wait until the upstream serves every stream, or no more arrive.
	last, lastChange := int64(0), time.Now()
	for {
		open := slow.OpenStreams()
		if open >= int64(n) || t.failed.Load() > 0 || time.Since(lastChange) > 5*time.Second {
			break
		}
		if open != last {
			last, lastChange = open, time.Now()
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.ramp = time.Since(start)
	h.open = slow.OpenStreams()
	if h.at, err = lowest(rel, 10, 200*time.Millisecond); err != nil {
		return h, err
	}
	if err := h.underLoad(ctx, rel, every, probe, probes); err != nil {
		return h, err
	}
	wg.Wait()
	h.completed, h.errs, h.err = int(t.ok.Load()), int(t.failed.Load()), t.firstErr()
	if h.open < int64(n) {
		return h, fmt.Errorf("only %d of %d streams were open at once upstream (ramp %v): lengthen the slow streams", h.open, n, h.ramp.Round(time.Millisecond))
	}
	return h, nil
}

// underLoad measures llmrelay while the streams are held: its CPU time per
// chunk over two chunk intervals, then the first delta of probes new calls
// (probe, one at a time).
func (h *held) underLoad(ctx context.Context, rel *relay, every time.Duration, probe streamer, probes int) error {
	a, err := rel.sample()
	if err != nil {
		return err
	}
	window := 2 * every
	time.Sleep(window)
	b, err := rel.sample()
	if err != nil {
		return err
	}
	if chunks := float64(h.open) * float64(window) / float64(every); chunks > 0 {
		h.cpuPerChunk = time.Duration(float64(b.cpu-a.cpu) / chunks)
	}
	rs := make([]result, 0, probes)
	for range probes {
		rs = append(rs, probe(ctx))
	}
	h.probe, h.probed = distOf(rs, firstDelta), len(rs)
	return nil
}

// lowest samples llmrelay n times, every, and keeps the lowest memory
// figures: the garbage collector lets the heap grow to twice what is live
// before it collects, so a single sample lands anywhere in between, and the
// lowest is the closest to what the open streams really hold. The heap
// goal is the highest seen: it is where the heap, and so the RSS, goes
// between collections once the streams have run long enough (pages the
// heap has grown into stay resident), so the RSS of a replica that has
// held its streams for a while is about the stacks plus the goal.
func lowest(rel *relay, n int, every time.Duration) (usage, error) {
	var low usage
	for i := range n {
		if i > 0 {
			time.Sleep(every)
		}
		u, err := rel.sample()
		if err != nil {
			return low, err
		}
		if i == 0 {
			low = u
			continue
		}
		low.rss, low.heap, low.stack = min(low.rss, u.rss), min(low.heap, u.heap), min(low.stack, u.stack)
		low.goal = max(low.goal, u.goal)
		low.goroutine = min(low.goroutine, u.goroutine)
		low.fds = max(low.fds, u.fds)
	}
	return low, nil
}

// kib is per, in KiB.
func (h held) kib(f func(usage) float64) float64 { return h.per(f) / 1024 }
