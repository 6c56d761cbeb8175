package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
)

// The -stacks mode answers how deep each goroutine of an open stream
// waits: it holds -stacks slow streams open through each relay, started
// with GOTRACEBACK=system, then sends it SIGQUIT. The Go runtime's dump
// then prints every frame of every goroutine with its stack pointer and
// frame pointer (fp= sp=), so a goroutine's depth while it waits is its
// outermost frame's fp less its innermost frame's sp. The goroutines are
// grouped by what they are (the call's handler, an HTTP connection's
// loops, gRPC's), with the stack each depth needs: the runtime gives a
// goroutine 2, 4, 8, 16 KiB... and halves a stack at a collection only
// while less than a quarter of it is in use, so a handler that waits
// 6 KiB deep in a 16 KiB stack keeps 16 KiB.

// stackGuard is what the runtime keeps free at the bottom of a stack
// (stackGuard on linux/amd64): a goroutine whose depth plus this exceeds
// its stack grows it.
const stackGuard = 928

// dumpStacks holds n streams through rel, dumps its goroutines (SIGQUIT)
// and prints their depths. rel must have been started with
// GOTRACEBACK=system and its stderr in a file (dumpFile).
func dumpStacks(ctx context.Context, w io.Writer, rel *relay, slow openCounter, n, conns int, want string) error {
	var clients []llmrelayv1.LLMServiceClient
	for range conns {
		c, err := grpc.NewClient(rel.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		defer c.Close()
		clients = append(clients, llmrelayv1.NewLLMServiceClient(c))
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range n {
		s := relayed(clients[i%len(clients)], "slow/fake", want)
		wg.Go(func() { _ = s(sctx) })
	}
	last, lastChange := int64(0), time.Now()
	for {
		open := slow.OpenStreams()
		if open >= int64(n) || time.Since(lastChange) > 5*time.Second {
			break
		}
		if open != last {
			last, lastChange = open, time.Now()
		}
		time.Sleep(10 * time.Millisecond)
	}
	held, err := lowest(rel, 5, 200*time.Millisecond)
	if err != nil {
		return err
	}
	open := slow.OpenStreams()
	_ = rel.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-rel.exited:
	case <-time.After(60 * time.Second):
		rel.kill()
		return fmt.Errorf("%s did not exit on SIGQUIT", rel.name)
	}
	f, err := os.Open(rel.dumpFile)
	if err != nil {
		return err
	}
	defer f.Close()
	gs, err := parseDump(f)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s: %d streams open upstream; %.0f goroutines, %.1f MiB of stacks in use (%.1f KiB per open stream)\n",
		rel.name, open, held.goroutine, held.stack/(1<<20), held.stack/1024/float64(max(open, 1)))
	printDepths(w, gs, open)
	return nil
}

// goroutine is one goroutine of a dump: its frames, innermost first, and
// its depth in bytes.
type goroutine struct {
	frames []string
	sizes  []int // each frame's size, fp less sp
	depth  int
}

// parseDump reads a GOTRACEBACK=system dump: "goroutine N ...:" headers,
// then per frame a function line and a "\tfile:line +0x.. fp=0x.. sp=0x..
// pc=0x.." line.
func parseDump(r io.Reader) ([]goroutine, error) {
	var gs []goroutine
	var cur *goroutine
	var lo, hi uint64
	flush := func() {
		if cur != nil && hi > lo {
			cur.depth = int(hi - lo)
			gs = append(gs, *cur)
		}
		cur, lo, hi = nil, 0, 0
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var fn string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "goroutine "):
			flush()
			cur = &goroutine{}
		case cur == nil:
		case strings.HasPrefix(line, "\t"):
			fp, okf := hexField(line, " fp=")
			sp, oks := hexField(line, " sp=")
			if okf && oks {
				cur.frames = append(cur.frames, fn)
				cur.sizes = append(cur.sizes, int(fp-sp))
				if lo == 0 || sp < lo {
					lo = sp
				}
				hi = max(hi, fp)
			}
		case line == "":
		default:
			fn = line
		}
	}
	flush()
	return gs, sc.Err()
}

// hexField returns the hexadecimal value after key in line.
func hexField(line, key string) (uint64, bool) {
	i := strings.Index(line, key)
	if i < 0 {
		return 0, false
	}
	v := strings.TrimPrefix(line[i+len(key):], "0x")
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	n, err := strconv.ParseUint(v, 16, 64)
	return n, err == nil
}

// goroutineKind names what a goroutine is, from its frames.
func goroutineKind(g goroutine) string {
	has := func(s string) bool {
		return slices.ContainsFunc(g.frames, func(f string) bool { return strings.Contains(f, s) })
	}
	switch {
	case has("Service).Generate(") || has("floorService).Generate("):
		return "the call's handler (Generate)"
	case has("persistConn).readLoop("):
		return "HTTP/1.1 connection read loop"
	case has("persistConn).writeLoop("):
		return "HTTP/1.1 connection write loop"
	case has("http2clientStream).doRequest(") || has("http2clientStream).writeRequest("):
		return "HTTP/2 request (per stream)"
	case has("http2ClientConn).readLoop(") || has("http2clientConnReadLoop"):
		return "HTTP/2 connection read loop"
	case has("grpc/internal/transport"):
		return "gRPC transport (per connection)"
	}
	// The outermost frame that is not the runtime's.
	for i := len(g.frames) - 1; i >= 0; i-- {
		if f := g.frames[i]; !strings.HasPrefix(f, "runtime.") {
			if j := strings.LastIndexByte(f, '('); j > 0 {
				f = f[:j]
			}
			return "other: " + f
		}
	}
	return "runtime"
}

// printDepths prints the goroutines by kind: how many (and per open
// stream), their depth while waiting (median and largest) and the stack
// the median needs.
func printDepths(w io.Writer, gs []goroutine, open int64) {
	byKind := map[string][]int{}
	var handler *goroutine // a handler, for its frames
	for i, g := range gs {
		k := goroutineKind(g)
		byKind[k] = append(byKind[k], g.depth)
		if strings.HasPrefix(k, "the call's handler") && handler == nil {
			handler = &gs[i]
		}
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int { return len(byKind[b]) - len(byKind[a]) })
	fmt.Fprintf(w, "  %-44s %8s %10s %10s %10s %12s\n", "goroutine", "count", "per stream", "depth p50", "depth max", "stack (p50)")
	for i, k := range kinds {
		d := byKind[k]
		if i >= 12 && len(d) < 4 {
			continue
		}
		slices.Sort(d)
		med := d[len(d)/2]
		fmt.Fprintf(w, "  %-44s %8d %10.2f %8.1f KiB %8.1f KiB %9d KiB\n", k, len(d), float64(len(d))/float64(max(open, 1)),
			float64(med)/1024, float64(d[len(d)-1])/1024, stackFor(med)/1024)
	}
	if handler != nil && verboseStacks {
		fmt.Fprintf(w, "  a handler's frames, innermost first (bytes; %d in all):\n", handler.depth)
		for i, f := range handler.frames {
			fmt.Fprintf(w, "    %6d  %s\n", handler.sizes[i], f)
		}
	}
}

// verboseStacks prints a handler's frames with their sizes (-stacks-frames).
var verboseStacks bool

// stackFor returns the smallest stack a goroutine waiting depth bytes deep
// fits in.
func stackFor(depth int) int {
	s := 2048
	for s < depth+stackGuard {
		s *= 2
	}
	return s
}

// stacksMode runs the -stacks mode: each relay in turn, started for it.
func stacksMode(ctx context.Context, o options, up *upstream, dir string, slowStream time.Duration) error {
	want := openaitest.Text(o.chunks)
	type target struct{ name, bin string }
	targets := []target{{"llmrelay", o.bin}}
	if o.binB != "" {
		targets = append(targets, target{"llmrelay-b", o.binB})
	}
	env := strings.Trim(o.relayEnv+",GOTRACEBACK=system", ",")
	for _, t := range targets {
		sub := filepath.Join(dir, t.name)
		rel, err := startRelayDump(ctx, t.bin, env, sub, up, slowStream)
		if err != nil {
			return err
		}
		rel.name = t.name
		fmt.Printf("holding %d slow streams through %s, then dumping its goroutines...\n", o.stacks, t.name)
		err = dumpStacks(ctx, os.Stdout, rel, up, o.stacks, o.holdConns, want)
		rel.kill()
		if err != nil {
			return err
		}
	}
	if o.floor {
		fl, err := startFloorDump(ctx, o.relayEnv, up, dir)
		if err != nil {
			return err
		}
		fmt.Printf("holding %d slow streams through the floor, then dumping its goroutines...\n", o.stacks)
		err = dumpStacks(ctx, os.Stdout, fl, up, o.stacks, o.holdConns, want)
		fl.kill()
		if err != nil {
			return err
		}
	}
	return nil
}
