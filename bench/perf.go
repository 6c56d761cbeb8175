package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// perfPeriod is the CPU time between two of perf's samples of a relay
// process (perf record -e cpu-clock -c, in nanoseconds): a fixed period,
// so that each sample stands for that much CPU time, where perf's
// frequency mode adjusts the period as it goes. Sampling costs the
// sampled process CPU of its own, the more the shorter the period (on a
// virtual machine most), so the parts are for comparing the relays of
// one run, not with the throughput table's CPU per stream.
const perfPeriod = time.Millisecond

// perfRun samples one relay process's CPU with Linux perf (-perf DIR)
// while the concurrency-1 streams run, with call stacks, so that its CPU
// time per stream can be split by the part of the call it was spent in
// (callPart). The split shows what llmrelay spends above the floor at
// concurrency 1 where the process's CPU total (the throughput table) does
// not: its own code, and what the Go runtime spends because of it.
type perfRun struct {
	server  *relay
	file    string
	cmd     *exec.Cmd
	stderr  bytes.Buffer
	streams int           // streams this process served while perf ran
	cpu     time.Duration // the process's CPU time (/proc) when perf started
}

// startPerf starts perf record on each server's process, writing to dir.
func startPerf(dir string, servers []*relay) ([]*perfRun, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var runs []*perfRun
	for _, s := range servers {
		p := &perfRun{server: s, file: filepath.Join(dir, s.name+".perf.data")}
		p.cmd = exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-c", fmt.Sprint(perfPeriod.Nanoseconds()), "-g",
			"-o", p.file, "-p", fmt.Sprint(s.cmd.Process.Pid))
		p.cmd.Stderr = &p.stderr
		p.cpu = cpuOf(s.cmd.Process.Pid)
		if err := p.cmd.Start(); err != nil {
			stopPerf(runs)
			return nil, fmt.Errorf("-perf: starting perf record (Debian's linux-perf): %w", err)
		}
		runs = append(runs, p)
	}
	// perf attaches to each thread of the process after it starts; the
	// streams of the first moment would go unsampled.
	time.Sleep(500 * time.Millisecond)
	for _, p := range runs {
		if p.cmd.ProcessState != nil {
			return nil, fmt.Errorf("-perf: perf record exited: %s", strings.TrimSpace(p.stderr.String()))
		}
	}
	return runs, nil
}

// stopPerf ends the recordings (perf writes its file on SIGINT).
func stopPerf(runs []*perfRun) error {
	var first error
	for _, p := range runs {
		_ = p.cmd.Process.Signal(syscall.SIGINT)
		// perf writes its file, then ends itself with the signal.
		if err := p.cmd.Wait(); err != nil && !interrupted(p.cmd) && first == nil {
			first = fmt.Errorf("-perf: perf record for %s: %w: %s", p.server.name, err, strings.TrimSpace(p.stderr.String()))
		}
	}
	return first
}

// splitPerf stops the recordings and splits each: its process served n
// streams of each kind that calls it.
func splitPerf(runs []*perfRun, kinds []*kind, n int) ([]perfSplit, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	for _, p := range runs {
		p.cpu = cpuOf(p.server.cmd.Process.Pid) - p.cpu
	}
	if err := stopPerf(runs); err != nil {
		return nil, err
	}
	var splits []perfSplit
	for _, p := range runs {
		for _, k := range kinds {
			if k.server == p.server {
				p.streams += n
			}
		}
		s, err := p.split()
		if err != nil {
			return nil, err
		}
		splits = append(splits, s)
	}
	return splits, nil
}

// interrupted tells whether cmd ended by SIGINT.
func interrupted(cmd *exec.Cmd) bool {
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
}

// perfSplit is one process's samples by part of the call.
type perfSplit struct {
	name    string
	streams int
	cpu     time.Duration // the process's CPU time over the recording (/proc)
	total   int
	parts   map[string]int
}

// split reads the recording back (perf script) and counts its samples by
// callPart.
func (p *perfRun) split() (perfSplit, error) {
	cmd := exec.Command("perf", "script", "-i", p.file, "-F", "ip,sym")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return perfSplit{}, err
	}
	if err := cmd.Start(); err != nil {
		return perfSplit{}, err
	}
	s := perfSplit{name: p.server.name, streams: p.streams, cpu: p.cpu, parts: map[string]int{}}
	perr := perfStacks(out, func(stack []string) {
		s.parts[callPart(stack)]++
		s.total++
	})
	if err := cmd.Wait(); err != nil {
		return s, fmt.Errorf("-perf: perf script %s: %w: %s", p.file, err, strings.TrimSpace(stderr.String()))
	}
	return s, perr
}

// perfStacks calls f with each sample's stack in perf script's output
// (-F ip,sym): one frame a line, the innermost first, an address and a
// symbol; a blank line ends a sample.
func perfStacks(r io.Reader, f func(stack []string)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var stack []string
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			if len(stack) > 0 {
				f(stack)
				stack = stack[:0]
			}
			continue
		}
		sym := "[unknown]"
		if len(fields) > 1 {
			sym = strings.Join(fields[1:], " ")
		}
		stack = append(stack, sym)
	}
	if len(stack) > 0 {
		f(stack)
	}
	return sc.Err()
}

// The parts callPart names, in the order the table lists them.
const (
	partChain      = "interceptor chain, service"
	partEngine     = "engine (call, plan, relay loop)"
	partMetrics    = "metrics"
	partRecv       = "request in (RecvMsg)"
	partSend       = "events out (SendMsg, headers)"
	partAdapter    = "adapter (HTTP exchange, decoding)"
	partFloor      = "the floor's handler"
	partHandler    = "grpc-go's handler frames"
	partValidation = "validation (offstack worker)"
	partOffstack   = "other offstack work (request encoding)"
	partHTTPDoor   = "HTTP door"
	partReader     = "gRPC transport: reader"
	partWriter     = "gRPC transport: writer (loopy)"
	partScheduler  = "Go scheduler (idle, wake-ups)"
	partSysmon     = "Go runtime: sysmon"
	partGC         = "Go runtime: background GC"
	partOther      = "other"
)

var partOrder = []string{
	partChain, partEngine, partMetrics, partRecv, partSend, partAdapter, partFloor, partHandler,
	partValidation, partOffstack, partHTTPDoor, partReader, partWriter,
	partScheduler, partSysmon, partGC, partOther,
}

const ours = "github.com/llmrelay/llmrelay/internal/"

// callPart names the part of a call a sample's stack (innermost frame
// first) was spent in: by the goroutine it ran on (its outermost frames),
// then, on a call's handler, by the innermost frame of llmrelay's that
// says where in the call it was.
func callPart(stack []string) string {
	in := func(s string) bool {
		return slices.ContainsFunc(stack, func(f string) bool { return strings.Contains(f, s) })
	}
	switch {
	case in("offstack.runTask"):
		if in("interceptors.runChecks") {
			return partValidation
		}
		return partOffstack
	case in("grpc.(*Server).handleStream"):
		return handlerPart(stack)
	case in(ours + "httpapi"), in("net/http.(*conn).serve"):
		return partHTTPDoor
	case in("(*loopyWriter).run"):
		return partWriter
	case in("(*http2Server).HandleStreams"):
		return partReader
	case in("runtime.sysmon"):
		return partSysmon
	case in("runtime.gcBgMarkWorker"), in("runtime.bgsweep"), in("runtime.bgscavenge"):
		return partGC
	case in("runtime.schedule"), in("runtime.mstart"), in("runtime.park_m"):
		return partScheduler
	}
	return partOther
}

// handlerPart is callPart on a call's handler goroutine. From the
// innermost frame out: grpc-go's sending or receiving a message under
// llmrelay's frame is that message's part; llmrelay's innermost frame
// (offstack's hand-off left out: its caller's part) names the rest.
func handlerPart(stack []string) string {
	for _, f := range stack {
		switch {
		case strings.HasPrefix(f, "google.golang.org/grpc."):
			if strings.Contains(f, ".SendMsg") || strings.Contains(f, ".SetHeader") || strings.Contains(f, ".SendHeader") {
				return partSend
			}
			if strings.Contains(f, ".RecvMsg") {
				return partRecv
			}
		case strings.HasPrefix(f, "main."):
			return partFloor
		case strings.HasPrefix(f, ours+"offstack."), strings.HasPrefix(f, ours+"interceptors.requestCodec."),
			strings.HasPrefix(f, ours+"interceptors.(*requestCodec)."):
		case strings.HasPrefix(f, ours+"provider"):
			return partAdapter
		case strings.HasPrefix(f, ours+"metrics"):
			return partMetrics
		case strings.HasPrefix(f, ours+"engine"), strings.HasPrefix(f, ours+"retry"), strings.HasPrefix(f, ours+"route"):
			return partEngine
		case strings.HasPrefix(f, "github.com/llmrelay/llmrelay/"):
			return partChain
		}
	}
	return partHandler
}

// printPerf prints the CPU per stream of each recorded process by part.
func printPerf(w io.Writer, splits []perfSplit) {
	if len(splits) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### CPU per stream by part of the call, concurrency 1 (perf, a sample every %s of CPU)\n\n", us(perfPeriod))
	fmt.Fprintln(w, "Each relay process's CPU samples while the concurrency-1 streams ran, by the goroutine and the innermost")
	fmt.Fprintln(w, "llmrelay frame they were in, divided by the streams it served (bench/perf.go: callPart).")
	fmt.Fprintln(w)
	head, rule := "| part |", "| --- |"
	for _, s := range splits {
		head += " " + s.name + " |"
		rule += " ---: |"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	per := func(s perfSplit, samples int) string {
		if s.streams == 0 {
			return "–"
		}
		return us(time.Duration(samples) * perfPeriod / time.Duration(s.streams))
	}
	for _, part := range partOrder {
		line, any := "| "+part+" |", false
		for _, s := range splits {
			line += " " + per(s, s.parts[part]) + " |"
			any = any || s.parts[part] > 0
		}
		if any {
			fmt.Fprintln(w, line)
		}
	}
	line := "| **all** |"
	check := "| the process's CPU time (/proc) |"
	for _, s := range splits {
		line += " " + per(s, s.total) + " |"
		check += " " + us(s.cpu/time.Duration(max(s.streams, 1))) + " |"
	}
	fmt.Fprintln(w, line)
	fmt.Fprintln(w, check)
}
