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
func hold(ctx context.Context, rel *relay, clients []llmrelayv1.LLMServiceClient, slow openCounter, n int, want string) (held, error) {
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
	wg.Wait()
	h.completed, h.errs, h.err = int(t.ok.Load()), int(t.failed.Load()), t.firstErr()
	if h.open < int64(n) {
		return h, fmt.Errorf("only %d of %d streams were open at once upstream (ramp %v): lengthen the slow streams", h.open, n, h.ramp.Round(time.Millisecond))
	}
	return h, nil
}

// lowest samples llmrelay n times, every, and keeps the lowest memory
// figures: the garbage collector lets the heap grow to twice what is live
// before it collects, so a single sample lands anywhere in between, and the
// lowest is the closest to what the open streams really hold.
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
		low.goroutine = min(low.goroutine, u.goroutine)
	}
	return low, nil
}

// kib is per, in KiB.
func (h held) kib(f func(usage) float64) float64 { return h.per(f) / 1024 }
