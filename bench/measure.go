package main

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// kind is one way of streaming the reply: direct, or through one of the
// relays (server).
type kind struct {
	name   string
	stream streamer
	server *relay // nil for direct
	lat    []result
}

// latencies runs n streams of each kind one at a time, in n rounds of one
// stream of each kind, and appends the results to each kind's lat in run
// order.
//
// Each round goes in an order of its own, shuffled from a fixed seed (a
// run's order is repeatable). A stream is measured right after another
// kind's, whose processes may still be winding down (a Go process's idle
// threads spin for work for a while before they sleep). In a fixed order
// (each round rotated, as it was) a kind followed the same other kind
// nearly every time and would carry that kind's wind-down in its figures;
// shuffled, every kind follows every other kind about equally often.
// Measured, the fixed order was no bias above the noise (the same binary
// as both builds measured 5 to 26 µs apart, either one ahead, with the
// fixed order and with this one); the shuffle rules it out rather than
// fixes it.
func latencies(ctx context.Context, kinds []*kind, n int) {
	rng := rand.New(rand.NewPCG(1, uint64(len(kinds))))
	order := make([]int, len(kinds))
	for range n {
		for i := range order {
			order[i] = i
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, j := range order {
			k := kinds[j]
			k.lat = append(k.lat, k.stream(ctx))
		}
	}
}

// dist is a latency distribution.
type dist struct {
	p50, p99 time.Duration
}

func distOf(rs []result, pick func(result) time.Duration) dist {
	var ds []time.Duration
	for _, r := range rs {
		if r.err == nil {
			ds = append(ds, pick(r))
		}
	}
	if len(ds) == 0 {
		return dist{}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return dist{p50: at(0.50), p99: at(0.99)}
}

func firstErr(rs []result) (error, int) {
	var first error
	n := 0
	for _, r := range rs {
		if r.err != nil {
			if first == nil {
				first = r.err
			}
			n++
		}
	}
	return first, n
}

func total(r result) time.Duration      { return r.total }
func firstDelta(r result) time.Duration { return r.firstDelta }

// load is what a throughput run did.
type load struct {
	streams int
	errs    int
	err     error // the first error
	elapsed time.Duration
}

func (l load) perSecond() float64 {
	if l.elapsed <= 0 {
		return 0
	}
	return float64(l.streams) / l.elapsed.Seconds()
}

func (l *load) add(o load) {
	l.streams += o.streams
	l.errs += o.errs
	l.elapsed += o.elapsed
	if l.err == nil {
		l.err = o.err
	}
}

// tally counts stream results from many goroutines.
type tally struct {
	ok, failed atomic.Int64
	first      atomic.Pointer[error]
}

func (t *tally) record(r result) {
	if r.err != nil {
		t.failed.Add(1)
		t.first.CompareAndSwap(nil, &r.err)
		return
	}
	t.ok.Add(1)
}

// firstErr returns the first failure recorded, or nil.
func (t *tally) firstErr() error {
	if p := t.first.Load(); p != nil {
		return *p
	}
	return nil
}

// throughput runs conc workers that each stream back to back for d, and
// counts the streams that completed.
func throughput(ctx context.Context, s streamer, conc int, d time.Duration) load {
	var t tally
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				t.record(s(ctx))
			}
		})
	}
	wg.Wait()
	return load{streams: int(t.ok.Load()), errs: int(t.failed.Load()), err: t.firstErr(), elapsed: time.Since(start)}
}
