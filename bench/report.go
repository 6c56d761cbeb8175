package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// loadRow is one concurrency level's throughput, both kinds, with
// llmrelay's CPU time and allocations during its relayed runs.
type loadRow struct {
	conc          int
	direct, relay load
	cpu           time.Duration
	mallocs       float64
}

// measureRelay runs the relayed load and charges llmrelay's CPU time and
// heap allocations over it to the row.
func (row *loadRow) measureRelay(ctx context.Context, rel *relay, s streamer, conc int, d time.Duration) error {
	before, err := rel.sample()
	if err != nil {
		return err
	}
	row.relay.add(throughput(ctx, s, conc, d))
	after, err := rel.sample()
	if err != nil {
		return err
	}
	row.cpu += after.cpu - before.cpu
	row.mallocs += after.mallocs - before.mallocs
	return nil
}

func (row loadRow) cpuPerStream() time.Duration {
	if row.relay.streams == 0 {
		return 0
	}
	return row.cpu / time.Duration(row.relay.streams)
}

func (row loadRow) allocsPerStream() float64 {
	if row.relay.streams == 0 {
		return 0
	}
	return row.mallocs / float64(row.relay.streams)
}

// report is everything one run measured.
type report struct {
	chunks              int
	directLat, relayLat []result
	// insideCall and insideFirstDelta are llmrelay's own view of the
	// concurrency-1 relayed calls: the mean time in its interceptor chain
	// and handler, and from the handler's start to the first delta.
	insideCall, insideFirstDelta time.Duration
	loads                        []loadRow
	held                         *held
	hedge                        *hedgeReport
	slowFirst                    *slowFirstReport
}

func (rep report) print(w io.Writer) {
	dt, rt := distOf(rep.directLat, total), distOf(rep.relayLat, total)
	df, rf := distOf(rep.directLat, firstDelta), distOf(rep.relayLat, firstDelta)
	fmt.Fprintf(w, "\n### %d-chunk stream, concurrency 1 (%d streams of each kind)\n\n", rep.chunks, len(rep.directLat))
	fmt.Fprintln(w, "| | direct | through llmrelay | added |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	for _, l := range []struct {
		name string
		d, r time.Duration
	}{
		{"whole stream p50", dt.p50, rt.p50},
		{"whole stream p99", dt.p99, rt.p99},
		{"first delta p50", df.p50, rf.p50},
		{"first delta p99", df.p99, rf.p99},
	} {
		fmt.Fprintf(w, "| %s | %s | %s | %s (×%.2f) |\n", l.name, us(l.d), us(l.r), signedUS(l.r-l.d), ratio(l.r, l.d))
	}
	fmt.Fprintf(w, "\nInside llmrelay (its metrics, means): %s per call from the interceptor chain's start to the status, %s from the handler's start to the first delta.\n",
		us(rep.insideCall), us(rep.insideFirstDelta))
	for _, kind := range []struct {
		name string
		rs   []result
	}{{"direct", rep.directLat}, {"relayed", rep.relayLat}} {
		if err, n := firstErr(kind.rs); n > 0 {
			fmt.Fprintf(w, "\n%s: %d of %d streams failed; first: %v\n", kind.name, n, len(kind.rs), err)
		}
	}

	if rep.hedge != nil {
		rep.hedge.print(w)
	}
	if rep.slowFirst != nil {
		rep.slowFirst.print(w)
	}

	fmt.Fprintln(w, "\n### Throughput (streams/s)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| concurrency | direct | through llmrelay | relayed/direct | llmrelay CPU per stream | llmrelay allocs per stream |")
	fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, row := range rep.loads {
		fmt.Fprintf(w, "| %d | %.0f | %.0f | %.0f%% | %s | %.0f |\n", row.conc, row.direct.perSecond(), row.relay.perSecond(),
			100*row.relay.perSecond()/max(row.direct.perSecond(), 1e-9), us(row.cpuPerStream()), row.allocsPerStream())
		for _, l := range []struct {
			name string
			l    load
		}{{"direct", row.direct}, {"relayed", row.relay}} {
			if l.l.errs > 0 {
				fmt.Fprintf(w, "\n%s at concurrency %d: %d streams failed; first: %v\n", l.name, row.conc, l.l.errs, l.l.err)
			}
		}
	}

	if h := rep.held; h != nil {
		fmt.Fprintf(w, "\n### %d slow streams open at once through llmrelay\n\n", h.streams)
		fmt.Fprintln(w, "| open at once | completed | failed | RSS per stream | heap per stream | stacks per stream | goroutines per stream | ramp-up |")
		fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		fmt.Fprintf(w, "| %d | %d | %d | %.1f KiB | %.1f KiB | %.1f KiB | %.1f | %v |\n", h.open, h.completed, h.errs,
			h.per(func(u usage) float64 { return float64(u.rss) })/1024, h.per(func(u usage) float64 { return u.heap })/1024,
			h.per(func(u usage) float64 { return u.stack })/1024, h.per(func(u usage) float64 { return u.goroutine }),
			h.ramp.Round(100*time.Millisecond))
		if h.errs > 0 {
			fmt.Fprintf(w, "\nfirst failure: %v\n", h.err)
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, rep.summary())
}

// summary is the one-line result.
func (rep report) summary() string {
	dt, rt := distOf(rep.directLat, total), distOf(rep.relayLat, total)
	s := fmt.Sprintf("summary: llmrelay adds %s p50 to a %d-chunk stream (×%.2f)", signedUS(rt.p50-dt.p50), rep.chunks, ratio(rt.p50, dt.p50))
	for _, row := range rep.loads {
		if row.conc == 8 {
			s += fmt.Sprintf("; relays %.0f%% of direct throughput at concurrency 8 with %s CPU and %.0f allocations per stream",
				100*row.relay.perSecond()/max(row.direct.perSecond(), 1e-9), us(row.cpuPerStream()), row.allocsPerStream())
		}
	}
	if rep.hedge != nil {
		s += rep.hedge.summary()
	}
	if h := rep.held; h != nil {
		s += fmt.Sprintf("; %.1f KiB RSS per open stream; %d of %d concurrent streams completed, %d failed",
			h.per(func(u usage) float64 { return float64(u.rss) })/1024, h.completed, h.streams, h.errs)
	}
	return s
}

func us(d time.Duration) string {
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

func signedUS(d time.Duration) string {
	return fmt.Sprintf("%+.0f µs", float64(d)/float64(time.Microsecond))
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
