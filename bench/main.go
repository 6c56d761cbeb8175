// Command bench measures what llmrelay costs in the request path: the same
// streamed chat completion, from the same in-repo OpenAI-compatible upstream
// (a process of its own), read directly by an HTTP client, through llmrelay
// (a real process, on loopback TCP) by a gRPC client, and through the floor
// (floor.go: llmrelay's own openai adapter behind a bare grpc-go server, the
// least a gateway of this design can cost), measured alternately in one
// run. It prints tables, issue 17's targets marked met or missed, and a
// one-line summary; nothing is asserted (docs/performance.md).
//
//	go run ./bench [-llmrelay bin/llmrelay] [-n 2000] [-d 10s] [-hold 10000]
//
// It also measures hedging through llmrelay: the same calls, unhedged and
// hedged, against an upstream whose first byte has a long tail (-hedge-n,
// -hedge-after), and the case: hedged calls whose first request
// takes 2s to its first byte and whose hedge takes 50ms, hedge_after 200ms
// (-hedge-n/10+1 calls).
//
// `make bench` builds the server and runs it. -llmrelay-b measures a second
// build alternately with the first (before and after a change);
// -upstream-tls serves the upstream over HTTPS with HTTP/2. With
// -cpuprofile, llmrelay runs in this process instead and only the
// concurrency-8 relayed load is measured, under the CPU profiler (and
// -memprofile writes the allocations); -heapprofile holds -hold streams
// open and writes the heap and the goroutines' stacks; -trace writes an
// execution trace of -n streams made one at a time through llmrelay and
// through the floor, both in this process. -perf samples the relay
// processes with Linux perf during the concurrency-1 streams and splits
// their CPU per stream by part of the call.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
)

type options struct {
	bin         string
	chunks      int
	n           int
	dur         time.Duration
	levels      []int
	hold        int
	holdDelay   time.Duration
	holdFirst   time.Duration
	holdConns   int
	cpuprofile  string
	trace       string
	memprofile  string
	heapprofile string
	relayEnv    string
	skipHold    bool
	// holdOnly measures llmrelay's held streams only (an upstream format
	// other than OpenAI's).
	holdOnly    bool
	description bool
	// binB is a second llmrelay binary measured alternately with bin
	// (before and after a change, in one run); floor adds the floor relay
	// (floor.go), and holdFloor holds slow streams open through it too.
	binB  string
	floor bool
	// floorPerChunk adds the floor that relays one delta per chunk;
	// grpcHop the gRPC hop alone.
	floorPerChunk bool
	grpcHop       bool
	holdFloor     bool
	// holdProbes new calls are made while the slow streams are held.
	holdProbes int
	// holdRate paces the slow streams' start (a second; 0: all at once).
	holdRate int
	// upstreamTLS serves the upstream over HTTPS with HTTP/2.
	upstreamTLS bool
	hedgeN      int
	hedgeAfter  time.Duration
	// stacks, when positive, holds that many streams through each relay
	// and prints its goroutines' depths from a dump (stacks.go), and
	// nothing else.
	stacks int
	// http adds the kind httpKind: the call through llmrelay's HTTP door.
	http bool
	// perf, when set, is where perf record writes each relay process's
	// CPU samples during the concurrency-1 streams (perf.go).
	perf string
}

func main() {
	var o options
	flag.StringVar(&o.bin, "llmrelay", "bin/llmrelay", "the llmrelay binary to run (built with `make build`)")
	flag.IntVar(&o.chunks, "chunks", 20, "content chunks per stream")
	flag.IntVar(&o.n, "n", 2000, "streams of each kind for the latency percentiles, at concurrency 1")
	flag.DurationVar(&o.dur, "d", 10*time.Second, "time per throughput measurement, per kind and concurrency")
	flag.IntVar(&o.hold, "hold", 10000, "slow streams held open at once for the memory measurement (0: skip)")
	flag.DurationVar(&o.holdDelay, "hold-chunk-delay", 1500*time.Millisecond, "pause before each chunk of a slow stream")
	flag.DurationVar(&o.holdFirst, "hold-first-byte", 0, "pause before a slow stream's response head (a model's time to first token): the held streams are measured while they wait for it when it is longer than the measurement")
	flag.IntVar(&o.holdRate, "hold-rate", 0, "start the slow streams at most this many a second (0: all at once)")
	flag.IntVar(&o.holdProbes, "hold-probes", 200, "new calls made one at a time while the slow streams are held, for their first delta")
	flag.IntVar(&o.holdConns, "hold-conns", 16, "gRPC client connections the slow streams are spread over")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "run llmrelay in-process and write a CPU profile of the concurrency-8 relayed load to this file")
	flag.StringVar(&o.trace, "trace", "", "run llmrelay and the floor in-process and write execution traces of -n concurrency-1 streams through each to FILE.llmrelay and FILE.floor")
	flag.StringVar(&o.memprofile, "memprofile", "", "with -cpuprofile: also write an allocation profile to this file")
	flag.StringVar(&o.heapprofile, "heapprofile", "", "run llmrelay in-process, hold -hold slow streams open and write a heap profile with them all open to this file")
	flag.StringVar(&o.relayEnv, "relay-env", "", "extra environment for the llmrelay process, e.g. GOGC=200 (comma-separated)")
	flag.StringVar(&o.binB, "llmrelay-b", "", "a second llmrelay binary, measured alternately with -llmrelay (before and after a change)")
	flag.BoolVar(&o.floor, "floor", true, "also measure the floor: llmrelay's openai adapter behind a bare grpc-go server, no chain, no retry plan")
	flag.BoolVar(&o.floorPerChunk, "floor-per-chunk", false, "also measure the floor as it was before this round: one delta per upstream chunk, net/http's HTTP/1.1 connections")
	flag.BoolVar(&o.grpcHop, "grpc-hop", false, "also measure the gRPC hop alone: a bare grpc-go server answering from memory (one delta with the whole text, the Final), no upstream; its latency and throughput only")
	flag.BoolVar(&o.holdFloor, "hold-floor", true, "with -floor, hold the slow streams open through the floor too")
	flag.BoolVar(&o.upstreamTLS, "upstream-tls", false, "serve the upstream over HTTPS with HTTP/2 (as the hosted APIs do) instead of HTTP/1.1 in the clear; everyone connects with TLS")
	flag.IntVar(&o.hedgeN, "hedge-n", 300, "calls of each kind (unhedged, one hedge, two hedges) against the long-tail upstream (0: skip)")
	flag.DurationVar(&o.hedgeAfter, "hedge-after", 100*time.Millisecond, "hedge_after of the hedged calls")
	flag.IntVar(&o.stacks, "stacks", 0, "hold this many slow streams through each relay, dump its goroutines (SIGQUIT, GOTRACEBACK=system) and print how deep they wait; nothing else is measured")
	flag.StringVar(&upstreamFormat, "upstream-format", openaitest.FormatOpenAI, "the upstream's wire format, and so llmrelay's adapter: openai, anthropic or gemini. Other than openai, only llmrelay's held streams are measured (-hold): the direct call and the floors speak OpenAI's format only")
	flag.BoolVar(&verboseStacks, "stacks-frames", false, "with -stacks: also print one handler's frames with their sizes")
	flag.StringVar(&o.perf, "perf", "", "sample each relay process with Linux perf while the concurrency-1 streams run, keep the recordings in this directory and print their CPU per stream by part of the call (the latency figures of that run include perf's overhead)")
	flag.BoolVar(&o.http, "http", true, "also measure llmrelay's OpenAI-compatible HTTP door (POST /v1/chat/completions, streamed) with the direct kind's HTTP client")
	levels := flag.String("c", "1,8,64", "concurrency levels of the throughput measurements")
	flag.BoolVar(&o.description, "machine", true, "print the machine's description (nproc, lscpu, go version) first")
	flag.Parse()
	if runChild() {
		return
	}
	for _, f := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench: -c %q: want positive numbers separated by commas\n", *levels)
			os.Exit(2)
		}
		o.levels = append(o.levels, n)
	}
	o.skipHold = o.hold <= 0
	switch upstreamFormat {
	case openaitest.FormatOpenAI:
	case openaitest.FormatAnthropic, openaitest.FormatGemini:
		// The direct call, the floors and the HTTP door speak OpenAI's
		// format: only llmrelay's held streams are measured.
		o.holdOnly = true
		o.floor, o.grpcHop, o.floorPerChunk, o.http = false, false, false, false
	default:
		fmt.Fprintf(os.Stderr, "bench: -upstream-format %q: want openai, anthropic or gemini\n", upstreamFormat)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	nofile := raiseFileLimit()
	need := uint64(o.hold) + 1024 // over HTTP/1.1, a connection per stream
	if o.upstreamTLS {
		// Over HTTP/2 the streams share the upstream's connections (at
		// most 250 streams each, Go's default) and the clients'.
		need = uint64(o.hold/250+o.holdConns) + 1024
	}
	if !o.skipHold && nofile < need {
		fmt.Printf("note: RLIMIT_NOFILE is %d; holding %d streams needs about %d, so holding %d\n", nofile, o.hold, need, nofile-1024)
		o.hold = int(nofile) - 1024
	}
	if o.description {
		printMachine()
	}
	want := openaitest.Text(o.chunks)

	if o.cpuprofile != "" || o.heapprofile != "" || o.trace != "" {
		if err := os.Setenv(upstreamKeyEnv, "bench"); err != nil {
			return err
		}
		fast := openaitest.NewServer(openaitest.Options{Chunks: o.chunks, TLS: o.upstreamTLS, Format: upstreamFormat})
		defer fast.Close()
		slow := openaitest.NewServer(slowOptions(o.chunks, o.holdDelay, o.holdFirst, o.upstreamTLS, upstreamFormat))
		defer slow.Close()
		return profileInProcess(ctx, o, fast, slow, want)
	}

	dir, err := os.MkdirTemp("", "relaybench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// The upstream runs in a process of its own, so that the client's CPU
	// time (this process's) and the upstream's can be told apart.
	ca := ""
	if o.upstreamTLS {
		ca = filepath.Join(dir, "upstream-ca.pem")
	}
	up, err := startUpstream(ctx, o.chunks, o.holdDelay, o.holdFirst, ca)
	if err != nil {
		return err
	}
	defer up.stop()
	slowStream := o.holdFirst + time.Duration(o.chunks)*o.holdDelay
	if o.stacks > 0 {
		return stacksMode(ctx, o, up, dir, slowStream)
	}
	// The long-tail upstream of the hedging measurement serves in this
	// process (its requests are paced, its CPU time negligible).
	tail := newTailUpstream(o.chunks)
	defer tail.Close()
	var servers []*relay
	rel, err := startRelay(ctx, o.bin, o.relayEnv, filepath.Join(dir, "a"), up.fast, up.slow, tail.URL(), up.ca, slowStream)
	if err != nil {
		return err
	}
	defer rel.kill()
	servers = append(servers, rel)
	if o.binB != "" {
		relB, err := startRelayB(ctx, o.binB, o.relayEnv, filepath.Join(dir, "b"), up.fast, up.slow, up.ca, slowStream)
		if err != nil {
			return err
		}
		defer relB.kill()
		relB.name = "llmrelay-b"
		servers = append(servers, relB)
	}
	if o.floor {
		fl, err := startFloor(ctx, o.relayEnv, up.fast, up.slow, up.ca, false)
		if err != nil {
			return err
		}
		defer fl.stop()
		servers = append(servers, fl)
	}
	if o.grpcHop {
		hop, err := startHop(ctx, o.relayEnv, o.chunks)
		if err != nil {
			return err
		}
		defer hop.stop()
		servers = append(servers, hop)
	}
	if o.floorPerChunk {
		fl, err := startFloor(ctx, o.relayEnv, up.fast, up.slow, up.ca, true)
		if err != nil {
			return err
		}
		defer fl.stop()
		servers = append(servers, fl)
	}

	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute, ForceAttemptHTTP2: true}
	if up.ca != "" {
		pem, err := os.ReadFile(up.ca)
		if err != nil {
			return err
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: x509.NewCertPool(), MinVersion: tls.VersionTLS12}
		tr.TLSClientConfig.RootCAs.AppendCertsFromPEM(pem)
	}
	hc := &http.Client{Transport: tr}
	defer hc.CloseIdleConnections()
	kinds := []*kind{{name: "direct", stream: direct(hc, up.fast, directBody, want)}}
	var client llmrelayv1.LLMServiceClient // llmrelay's (the first server)
	for _, s := range servers {
		conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		defer conn.Close()
		c := llmrelayv1.NewLLMServiceClient(conn)
		if client == nil {
			client = c
		}
		kinds = append(kinds, &kind{name: s.name, server: s, stream: relayed(c, "openai/fake", want)})
	}
	if o.http {
		// The same call through llmrelay's OpenAI-compatible door, by the
		// same HTTP client as direct: what the door adds to the gRPC path.
		kinds = append(kinds, &kind{name: httpKind, server: rel, stream: direct(hc, "http://"+rel.httpAddr+"/v1", httpDoorBody, want)})
	}

	rep := report{chunks: o.chunks, kinds: kinds}
	if o.holdOnly {
		if rep.held, err = holdAll(ctx, o, servers, up, want); err != nil {
			return err
		}
		stopAll(servers)
		rep.printHeld(os.Stdout)
		return nil
	}
	fmt.Printf("warming up, then %d streams of each kind at concurrency 1...\n", o.n)
	latencies(ctx, kinds, min(o.n/4, 500))
	before, err := rel.sample()
	if err != nil {
		return err
	}
	for _, k := range kinds {
		k.lat = nil
	}
	var perfs []*perfRun
	if o.perf != "" {
		if perfs, err = startPerf(o.perf, servers); err != nil {
			return err
		}
	}
	latencies(ctx, kinds, o.n)
	if rep.perf, err = splitPerf(perfs, kinds, o.n); err != nil {
		return err
	}
	after, err := rel.sample()
	if err != nil {
		return err
	}
	rep.insideCall, rep.insideFirstDelta = inside(before, after)

	if o.hedgeN > 0 {
		fmt.Printf("%d calls each, unhedged and hedged, against a long-tail upstream...\n", o.hedgeN)
		h := measureHedging(ctx, client, tail, o.hedgeN, o.hedgeAfter, want)
		rep.hedge = &h
		fmt.Printf("%d hedged calls whose first request is slow...\n", o.hedgeN/10+1)
		sf := measureSlowFirst(ctx, client, tail, o.hedgeN/10+1, want)
		rep.slowFirst = &sf
	}

	for _, c := range o.levels {
		fmt.Printf("throughput at concurrency %d (%v per kind)...\n", c, o.dur)
		row := loadRow{conc: c, kinds: make([]loadCell, len(kinds))}
		// Two rounds, alternating the order, so drift hits every kind alike.
		for round := range 2 {
			order := make([]int, len(kinds))
			for i := range order {
				order[i] = i
			}
			if round == 1 {
				slices.Reverse(order)
			}
			for _, i := range order {
				if err := row.kinds[i].measure(ctx, kinds[i], up, c, o.dur/2); err != nil {
					return err
				}
			}
		}
		rep.loads = append(rep.loads, row)
	}

	if rep.held, err = holdAll(ctx, o, servers, up, want); err != nil {
		return err
	}
	stopAll(servers)
	rep.print(os.Stdout)
	return nil
}

// holdAll holds -hold slow streams open through each server in turn (not
// the gRPC hop's, nor the floor's without -hold-floor). A hold that went
// wrong is a warning beside its figures; a client that cannot be made is
// the error.
func holdAll(ctx context.Context, o options, servers []*relay, up *upstream, want string) ([]held, error) {
	if o.skipHold {
		return nil, nil
	}
	var all []held
	for _, s := range servers {
		if s.hopOnly || s.floor != nil && !o.holdFloor {
			continue
		}
		fmt.Printf("holding %d slow streams (%d chunks, one every %v) open at once through %s...\n", o.hold, o.chunks, o.holdDelay, s.name)
		var clients []llmrelayv1.LLMServiceClient
		for range o.holdConns {
			c, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return all, err
			}
			defer c.Close()
			clients = append(clients, llmrelayv1.NewLLMServiceClient(c))
		}
		h, err := hold(ctx, s, clients, up, o.hold, want, o.holdDelay, relayed(clients[0], "openai/fake", want), o.holdProbes, o.holdRate)
		h.name = s.name
		all = append(all, h)
		if err != nil {
			fmt.Println("warning:", err)
		}
	}
	return all, nil
}

// stopAll stops the servers, warning of those that exit with an error.
func stopAll(servers []*relay) {
	for _, s := range servers {
		if err := s.stop(); err != nil {
			fmt.Printf("warning: %s exit: %v\n", s.name, err)
		}
	}
}

// raiseFileLimit raises the soft limit on open files to the hard limit
// (holding 10,000 streams takes about that many descriptors here and in
// llmrelay, which inherits the limit) and returns it.
func raiseFileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	l.Cur = l.Max
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
	return l.Cur
}

// printMachine prints the machine docs/performance.md quotes.
func printMachine() {
	fmt.Println("machine:")
	for _, c := range [][]string{{"nproc"}, {"sh", "-c", "lscpu | head -n 15"}} {
		out, err := exec.Command(c[0], c[1:]...).Output()
		if err == nil {
			for line := range strings.Lines(string(out)) {
				fmt.Print("  ", line)
			}
		}
	}
	fmt.Printf("  %s %s/%s, GOMAXPROCS %d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
}
