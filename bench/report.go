package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// loadRow is one concurrency level's throughput, for every kind.
type loadRow struct {
	conc  int
	kinds []loadCell // in the report's order of kinds
}

// loadCell is one kind's throughput at one level, with the CPU time each
// process spent on it: the client (this process), the upstream, and the
// relay (none for direct), and the relay's heap allocations.
type loadCell struct {
	load
	client, upstream, relay time.Duration
	mallocs                 float64
}

// measure runs k's load at concurrency conc for d and charges what each
// process spent meanwhile to the cell.
func (c *loadCell) measure(ctx context.Context, k *kind, up *upstream, conc int, d time.Duration) error {
	var before, after usage
	var err error
	if k.server != nil {
		if before, err = k.server.sample(); err != nil {
			return err
		}
	}
	self, upCPU := cpuOf(os.Getpid()), cpuOf(up.pid())
	c.add(throughput(ctx, k.stream, conc, d))
	c.client += cpuOf(os.Getpid()) - self
	c.upstream += cpuOf(up.pid()) - upCPU
	if k.server != nil {
		if after, err = k.server.sample(); err != nil {
			return err
		}
		c.relay += after.cpu - before.cpu
		c.mallocs += after.mallocs - before.mallocs
	}
	return nil
}

// per returns d per completed stream.
func (c loadCell) per(d time.Duration) time.Duration {
	if c.streams == 0 {
		return 0
	}
	return d / time.Duration(c.streams)
}

func (c loadCell) allocsPerStream() float64 {
	if c.streams == 0 {
		return 0
	}
	return c.mallocs / float64(c.streams)
}

// report is everything one run measured.
type report struct {
	chunks int
	kinds  []*kind // direct first, then llmrelay, then the others
	// insideCall and insideFirstDelta are llmrelay's own view of the
	// concurrency-1 relayed calls: the mean time in its interceptor chain
	// and handler, and from the handler's start to the first delta.
	insideCall, insideFirstDelta time.Duration
	loads                        []loadRow
	held                         []held
	perf                         []perfSplit // -perf
	hedge                        *hedgeReport
	slowFirst                    *slowFirstReport
}

// The targets of issue 17, which the summary checks (docs/performance.md).
const (
	targetAddedP50        = 150 * time.Microsecond
	targetAddedFirstDelta = 100 * time.Microsecond
	targetThroughput      = 0.85
	targetKiBPerStream    = 32
)

func (rep report) print(w io.Writer) {
	direct := rep.kinds[0]
	fmt.Fprintf(w, "\n### %d-chunk stream, concurrency 1 (%d streams of each kind, alternating)\n\n", rep.chunks, len(direct.lat))
	head := "| |"
	rule := "| --- |"
	for _, k := range rep.kinds {
		head += " " + k.name + " |"
		rule += " ---: |"
	}
	for _, k := range rep.kinds[1:] {
		head += " " + k.name + " added |"
		rule += " ---: |"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	for _, l := range []struct {
		name string
		pick func(result) time.Duration
		p99  bool
	}{
		{"whole stream p50", total, false},
		{"whole stream p99", total, true},
		{"first delta p50", firstDelta, false},
		{"first delta p99", firstDelta, true},
	} {
		at := func(k *kind) time.Duration {
			d := distOf(k.lat, l.pick)
			if l.p99 {
				return d.p99
			}
			return d.p50
		}
		line := "| " + l.name + " |"
		for _, k := range rep.kinds {
			line += " " + us(at(k)) + " |"
		}
		for _, k := range rep.kinds[1:] {
			line += " " + signedUS(at(k)-at(direct)) + " |"
		}
		fmt.Fprintln(w, line)
	}
	line := "| events per stream (mean) | – |"
	for _, k := range rep.kinds[1:] {
		if m := meanEvents(k.lat); m > 0 {
			line += fmt.Sprintf(" %.1f |", m)
		} else {
			line += " – |" // an HTTP client's stream: not counted
		}
	}
	fmt.Fprintln(w, line+strings.Repeat(" |", len(rep.kinds)-1))
	fmt.Fprintf(w, "\nInside llmrelay (its metrics, means): %s per call from the interceptor chain's start to the status, %s from the handler's start to the first delta.\n",
		us(rep.insideCall), us(rep.insideFirstDelta))
	for _, k := range rep.kinds {
		if err, n := firstErr(k.lat); n > 0 {
			fmt.Fprintf(w, "\n%s: %d of %d streams failed; first: %v\n", k.name, n, len(k.lat), err)
		}
	}

	printPerf(w, rep.perf)
	rep.printHTTPDoor(w)
	if rep.hedge != nil {
		rep.hedge.print(w)
	}
	if rep.slowFirst != nil {
		rep.slowFirst.print(w)
	}

	fmt.Fprintln(w, "\n### Throughput (streams/s) and CPU per stream")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "CPU per stream is each process's user + system time over the run, divided by the streams completed: the client is")
	fmt.Fprintln(w, "this program (an HTTP client for direct, the generated gRPC client otherwise), the upstream is its own process.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| concurrency | kind | streams/s | of direct | client CPU | upstream CPU | relay CPU | relay allocs |")
	fmt.Fprintln(w, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, row := range rep.loads {
		d := row.kinds[0]
		for i, c := range row.kinds {
			relay, allocs := "", ""
			if i > 0 {
				relay, allocs = us(c.per(c.relay)), fmt.Sprintf("%.0f", c.allocsPerStream())
			}
			fmt.Fprintf(w, "| %d | %s | %.0f | %.0f%% | %s | %s | %s | %s |\n", row.conc, rep.kinds[i].name, c.perSecond(),
				100*c.perSecond()/max(d.perSecond(), 1e-9), us(c.per(c.client)), us(c.per(c.upstream)), relay, allocs)
			if c.errs > 0 {
				fmt.Fprintf(w, "\n%s at concurrency %d: %d streams failed; first: %v\n\n", rep.kinds[i].name, row.conc, c.errs, c.err)
			}
		}
	}

	rep.printHeld(w)

	fmt.Fprintln(w)
	fmt.Fprint(w, rep.targets())
	fmt.Fprintln(w)
	fmt.Fprintln(w, rep.summary())
}

// printHeld prints the table of the slow streams held open at once.
func (rep report) printHeld(w io.Writer) {
	if len(rep.held) > 0 {
		fmt.Fprintf(w, "\n### Slow streams open at once (%s upstream)\n\n", upstreamFormat)
		fmt.Fprintln(w, "| relay | open at once | completed | failed | RSS per stream | heap per stream | heap goal per stream | stacks per stream | goroutines per stream | open files | ramp-up | CPU per chunk | new call's first delta p50 / p99 |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, h := range rep.held {
			fmt.Fprintf(w, "| %s | %d | %d | %d | %.1f KiB | %.1f KiB | %.1f KiB | %.1f KiB | %.1f | %.0f | %v | %s | %s / %s (%d calls) |\n", h.name, h.open, h.completed, h.errs,
				h.kib(func(u usage) float64 { return float64(u.rss) }), h.kib(func(u usage) float64 { return u.heap }),
				h.kib(func(u usage) float64 { return u.goal }),
				h.kib(func(u usage) float64 { return u.stack }), h.per(func(u usage) float64 { return u.goroutine }),
				h.at.fds, h.ramp.Round(100*time.Millisecond), us(h.cpuPerChunk), us(h.probe.p50), us(h.probe.p99), h.probed)
		}
		for _, h := range rep.held {
			if h.errs > 0 {
				fmt.Fprintf(w, "\n%s: first failure: %v\n", h.name, h.err)
			}
		}
	}
}

// targets checks llmrelay (the second kind) against issue 17's targets.
func (rep report) targets() string {
	var b strings.Builder
	d, r := rep.kinds[0], rep.kinds[1]
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	fmt.Fprintf(&b, "### Targets (%s against direct, this run)\n\n", r.name)
	fmt.Fprintln(&b, "| target | measured | |")
	fmt.Fprintln(&b, "| --- | ---: | --- |")
	added := distOf(r.lat, total).p50 - distOf(d.lat, total).p50
	fmt.Fprintf(&b, "| added p50 per %d-chunk stream, concurrency 1, ≤ %s | %s | %s |\n", rep.chunks, us(targetAddedP50), signedUS(added), verdict(added <= targetAddedP50))
	first := distOf(r.lat, firstDelta).p50 - distOf(d.lat, firstDelta).p50
	fmt.Fprintf(&b, "| added time to the first delta (p50), concurrency 1, ≤ %s | %s | %s |\n", us(targetAddedFirstDelta), signedUS(first), verdict(first <= targetAddedFirstDelta))
	for _, row := range rep.loads {
		if row.conc != 8 {
			continue
		}
		dc, rc := row.kinds[0], row.kinds[1]
		ratio := rc.perSecond() / max(dc.perSecond(), 1e-9)
		fmt.Fprintf(&b, "| throughput at concurrency 8 ≥ %.0f%% of direct | %.0f%% (client CPU per stream: %s direct, %s gRPC) | %s |\n",
			100*targetThroughput, 100*ratio, us(dc.per(dc.client)), us(rc.per(rc.client)), verdict(ratio >= targetThroughput))
	}
	for _, h := range rep.held {
		if h.name != r.name {
			continue
		}
		kib := h.kib(func(u usage) float64 { return float64(u.rss) })
		fmt.Fprintf(&b, "| RSS per open stream with %d open ≤ %d KiB | %.1f KiB | %s |\n", h.open, targetKiBPerStream, kib, verdict(kib <= targetKiBPerStream && h.open > 0))
	}
	return b.String()
}

// summary is the one-line result.
func (rep report) summary() string {
	d, r := rep.kinds[0], rep.kinds[1]
	dt, rt := distOf(d.lat, total), distOf(r.lat, total)
	df, rf := distOf(d.lat, firstDelta), distOf(r.lat, firstDelta)
	s := fmt.Sprintf("summary: %s adds %s p50 to a %d-chunk stream (×%.2f) and %s to the first delta", r.name,
		signedUS(rt.p50-dt.p50), rep.chunks, ratio(rt.p50, dt.p50), signedUS(rf.p50-df.p50))
	for _, row := range rep.loads {
		if row.conc == 8 {
			rc := row.kinds[1]
			s += fmt.Sprintf("; relays %.0f%% of direct throughput at concurrency 8 with %s CPU and %.0f allocations per stream",
				100*rc.perSecond()/max(row.kinds[0].perSecond(), 1e-9), us(rc.per(rc.relay)), rc.allocsPerStream())
		}
	}
	if rep.hedge != nil {
		s += rep.hedge.summary()
	}
	for _, h := range rep.held {
		if h.name == r.name {
			s += fmt.Sprintf("; %.1f KiB RSS per open stream; %d of %d concurrent streams completed, %d failed",
				h.kib(func(u usage) float64 { return float64(u.rss) }), h.completed, h.streams, h.errs)
		}
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

// httpKind names the kind that streams through llmrelay's OpenAI-compatible
// HTTP door.
const httpKind = "llmrelay http"

// kindIndex returns the index of the kind named name, or -1.
func (rep report) kindIndex(name string) int {
	return slices.IndexFunc(rep.kinds, func(k *kind) bool { return k.name == name })
}

// printHTTPDoor sets the HTTP door beside the gRPC path of the same
// llmrelay process: what the door adds to a call's latency, and the
// relay's CPU time and heap allocations per stream at each concurrency.
func (rep report) printHTTPDoor(w io.Writer) {
	g, h := rep.kindIndex("llmrelay"), rep.kindIndex(httpKind)
	if g < 0 || h < 0 {
		return
	}
	grpcK, httpK := rep.kinds[g], rep.kinds[h]
	fmt.Fprintf(w, "\n### The HTTP door beside the gRPC path (the same llmrelay process; %s: POST /v1/chat/completions, streamed)\n\n", httpKind)
	fmt.Fprintln(w, "| | gRPC | HTTP door | the door adds |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	for _, l := range []struct {
		name string
		pick func(result) time.Duration
	}{{"whole stream p50", total}, {"first delta p50", firstDelta}} {
		a, b := distOf(grpcK.lat, l.pick).p50, distOf(httpK.lat, l.pick).p50
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", l.name, us(a), us(b), signedUS(b-a))
	}
	for _, row := range rep.loads {
		a, b := row.kinds[g], row.kinds[h]
		fmt.Fprintf(w, "| relay CPU per stream, concurrency %d | %s | %s | %s |\n", row.conc, us(a.per(a.relay)), us(b.per(b.relay)), signedUS(b.per(b.relay)-a.per(a.relay)))
		fmt.Fprintf(w, "| relay allocations per stream, concurrency %d | %.0f | %.0f | %+.0f |\n", row.conc, a.allocsPerStream(), b.allocsPerStream(), b.allocsPerStream()-a.allocsPerStream())
	}
}

// meanEvents is the mean number of events per stream of rs (what the
// relay sent: deltas, joined or not, and the Final).
func meanEvents(rs []result) float64 {
	if len(rs) == 0 {
		return 0
	}
	n := 0
	for _, r := range rs {
		n += r.events
	}
	return float64(n) / float64(len(rs))
}
