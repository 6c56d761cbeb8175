package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/llmrelay/llmrelay/internal/freeport"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
)

// relay is a gRPC server the benchmark streams through, running as a
// child process on loopback TCP: llmrelay, or the floor (floor.go).
type relay struct {
	name        string
	cmd         *exec.Cmd
	addr        string // gRPC host:port
	httpAddr    string // the HTTP doors' host:port; "" for the floor
	metricsAddr string // /metrics host:port
	exited      chan error
	stderr      *bytes.Buffer
	// floor is the floor's process (or the gRPC hop's), nil for llmrelay.
	floor *child
	// hopOnly: the gRPC hop alone, which relays nothing and holds no
	// stream open.
	hopOnly bool
	// dumpFile holds the process's stderr, when it goes to a file.
	dumpFile string
}

// startFloor starts the floor relay in front of the upstreams.
func startFloor(ctx context.Context, env, fastURL, slowURL, ca string, perChunk bool) (*relay, error) {
	name := "floor"
	if perChunk {
		name = "floor-per-chunk"
	}
	c, err := startChild(ctx, "floor", env, "", "-child-fast", fastURL, "-child-slow", slowURL, "-child-ca", ca, "-child-per-chunk="+strconv.FormatBool(perChunk))
	if err != nil {
		return nil, err
	}
	return &relay{name: name, cmd: c.cmd, addr: c.addrs["grpc"], metricsAddr: c.addrs["metrics"], exited: c.exited, floor: c}, nil
}

// startHop starts the gRPC hop alone (floor.go's hopService) for a reply
// of chunks chunks.
func startHop(ctx context.Context, env string, chunks int) (*relay, error) {
	c, err := startChild(ctx, "hop", env, "", "-child-chunks", strconv.Itoa(chunks))
	if err != nil {
		return nil, err
	}
	return &relay{name: "grpc-hop", cmd: c.cmd, addr: c.addrs["grpc"], metricsAddr: c.addrs["metrics"], exited: c.exited, floor: c, hopOnly: true}, nil
}

// startFloorDump starts the floor as startFloor does, with
// GOTRACEBACK=system and its stderr in the file dir/floor.stderr (for the
// goroutine dump of -stacks).
func startFloorDump(ctx context.Context, env string, up *upstream, dir string) (*relay, error) {
	path := filepath.Join(dir, "floor.stderr")
	c, err := startChild(ctx, "floor", strings.Trim(env+",GOTRACEBACK=system", ","), path, "-child-fast", up.fast, "-child-slow", up.slow, "-child-ca", up.ca)
	if err != nil {
		return nil, err
	}
	return &relay{name: "floor", cmd: c.cmd, addr: c.addrs["grpc"], metricsAddr: c.addrs["metrics"], exited: c.exited, dumpFile: path}, nil
}

// relayConfig is the generated configuration: an `openai` provider at the
// fast upstream and a `slow` one at the paced upstream, both of the
// upstream's format (-upstream-format; a key only where the adapter needs
// one), limits that let 10,000 streams through, idle limits no shorter than
// a slow stream (slowStream: its whole length, so any -hold-chunk-delay
// passes), and the metrics endpoint on, for the Go runtime's memory and
// allocation counters. With a CA file the
// fast and slow upstreams serve HTTPS (and HTTP/2) on a certificate it
// holds. When tailURL is not empty, a `tail` provider points at the
// upstream whose first byte has a long tail (for hedging; HTTP/1.1).
func relayConfig(listen, httpListen, metricsListen, fastURL, slowURL, tailURL, ca string, slowStream time.Duration) string {
	transport := ""
	if ca != "" {
		transport = fmt.Sprintf("\n    transport: {ca_file: %q}", ca)
	}
	if upstreamFormat != openaitest.FormatOpenAI {
		// Anthropic's and Gemini's adapters require a key; the upstream
		// takes any.
		transport += "\n    api_key_env: " + upstreamKeyEnv
	}
	tail := ""
	if tailURL != "" {
		tail = fmt.Sprintf(`
  - name: tail
    kind: openai
    base_url: %s`, tailURL)
	}
	door := "" // http_listen unset: a release from before the HTTP doors
	if httpListen != "" {
		door = "\nhttp_listen: " + httpListen
	}
	return fmt.Sprintf(`listen: %[1]s%[2]s
metrics_listen: "%[3]s"
shutdown_grace: 5s
log: {level: warn, format: text}
providers:
  - name: openai
    kind: %[9]s
    base_url: %[4]s%[6]s
  - name: slow
    kind: %[9]s
    base_url: %[5]s%[6]s%[7]s
deadlines:
  default: %[8]s
  max: 600s
  stream_idle: %[10]s
  max_stream_idle: %[11]s
limits:
  max_concurrent_streams_per_conn: 1000
  provider_queue: 64
  keepalive_min_time: 10s
  keepalive_time: 2m
  keepalive_timeout: 20s
`, listen, door, metricsListen, fastURL, slowURL, transport, tail, slowStream+time.Minute, upstreamFormat,
		max(30*time.Second, slowStream), max(300*time.Second, slowStream))
}

// upstreamFormat is the upstream's wire format (-upstream-format): the
// upstream child serves it and the relays' providers are of its kind.
var upstreamFormat = openaitest.FormatOpenAI

// upstreamKeyEnv holds the key the relays' Anthropic and Gemini providers
// send (the upstream takes any).
const upstreamKeyEnv = "LLMRELAY_BENCH_UPSTREAM_KEY"

// startRelay writes the configuration to dir and starts the binary with it
// (and env, comma-separated KEY=VALUE pairs, added to this process's
// environment), then waits until its health check says SERVING.
func startRelay(ctx context.Context, bin, env, dir, fastURL, slowURL, tailURL, ca string, slowStream time.Duration) (*relay, error) {
	return startRelayTo(ctx, bin, env, dir, fastURL, slowURL, tailURL, ca, slowStream, "", doorOn)
}

// startRelayB starts the second binary (-llmrelay-b) as startRelay does,
// with its HTTP doors off; a release from before them, whose configuration
// does not know http_listen, without the setting.
func startRelayB(ctx context.Context, bin, env, dir, fastURL, slowURL, ca string, slowStream time.Duration) (*relay, error) {
	r, err := startRelayTo(ctx, bin, env, dir, fastURL, slowURL, "", ca, slowStream, "", doorOff)
	if err != nil && strings.Contains(err.Error(), "http_listen") {
		return startRelayTo(ctx, bin, env, dir, fastURL, slowURL, "", ca, slowStream, "", doorUnknown)
	}
	return r, err
}

// How a relay's configuration sets its HTTP doors (http_listen).
const (
	doorOn      = "on"      // on a free loopback port
	doorOff     = "off"     // off
	doorUnknown = "unknown" // not at all: a release from before the doors
)

// startRelayDump starts the binary as startRelay does, in front of up, with
// its stderr in the file dir/stderr (for the goroutine dump of -stacks).
func startRelayDump(ctx context.Context, bin, env, dir string, up *upstream, slowStream time.Duration) (*relay, error) {
	return startRelayTo(ctx, bin, env, dir, up.fast, up.slow, "", up.ca, slowStream, filepath.Join(dir, "stderr"), doorOff)
}

// startRelayTo is startRelay, with the process's stderr in the file
// stderrPath when it is not empty, and its HTTP doors as door says
// (doorOn, doorOff, doorUnknown).
func startRelayTo(ctx context.Context, bin, env, dir, fastURL, slowURL, tailURL, ca string, slowStream time.Duration, stderrPath, door string) (*relay, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	maddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	haddr := ""
	switch door {
	case doorOn:
		if haddr, err = freeAddr(); err != nil {
			return nil, err
		}
	case doorOff:
		haddr = "off"
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "llmrelay.yaml")
	if err := os.WriteFile(cfgPath, []byte(relayConfig(addr, haddr, maddr, fastURL, slowURL, tailURL, ca, slowStream)), 0o600); err != nil {
		return nil, err
	}
	r := &relay{name: "llmrelay", addr: addr, metricsAddr: maddr, exited: make(chan error, 1), stderr: &bytes.Buffer{}}
	if door == doorOn {
		r.httpAddr = haddr
	}
	r.cmd = exec.Command(bin, "--config", cfgPath)
	r.cmd.Env = append(os.Environ(), upstreamKeyEnv+"=bench")
	if env != "" {
		r.cmd.Env = append(r.cmd.Env, strings.Split(env, ",")...)
	}
	r.cmd.Stdout = io.Discard
	r.cmd.Stderr = &limitedWriter{w: r.stderr, n: 64 << 10}
	if stderrPath != "" {
		f, err := os.Create(stderrPath)
		if err != nil {
			return nil, err
		}
		defer f.Close() // the child has its own descriptor
		r.cmd.Stderr, r.dumpFile = f, stderrPath
	}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() { r.exited <- r.cmd.Wait() }()
	if err := r.waitServing(ctx); err != nil {
		r.kill()
		return nil, err
	}
	return r, nil
}

// freeAddr returns a loopback address with a port nobody listens on now,
// below the ephemeral range, where the benchmark's own outgoing
// connections cannot take it before llmrelay listens on it (freeport).
func freeAddr() (string, error) {
	port, err := freeport.Port()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

func (r *relay) waitServing(ctx context.Context) error {
	conn, err := grpc.NewClient(r.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(30 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		resp, err := hc.Check(cctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		select {
		case err := <-r.exited:
			return fmt.Errorf("%s exited before serving: %v\n%s", r.name, err, r.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not SERVING after 30s (last: %v)\n%s", r.name, err, r.stderr)
		}
	}
}

// stop sends SIGTERM (closes the floor's stdin) and waits for the process
// to exit.
func (r *relay) stop() error {
	if r.floor != nil {
		r.floor.stop()
		return nil
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.exited:
		return err
	case <-time.After(30 * time.Second):
		r.kill()
		return fmt.Errorf("%s did not exit within 30s of SIGTERM", r.name)
	}
}

func (r *relay) kill() {
	_ = r.cmd.Process.Kill()
}

// usage is a snapshot of the process's resource use.
type usage struct {
	cpu       time.Duration // user + system CPU time
	rss       int64         // resident set size, bytes
	heap      float64       // Go heap in use, bytes
	goal      float64       // the heap size at which the next collection starts (twice what was live at the last, by default), bytes
	stack     float64       // goroutine stacks in use, bytes
	mallocs   float64       // heap objects allocated so far
	goroutine float64       // goroutines
	fds       float64       // open file descriptors (client and upstream connections, listeners)
	// handled calls took handling seconds in all, from the interceptor
	// chain's start to the status; firstDeltas calls took toFirstDelta
	// seconds from the handler's start to their first delta.
	handled, handling         float64
	firstDeltas, toFirstDelta float64
}

// inside is the mean time per call between two samples: in llmrelay's
// interceptor chain and handler, and from the handler's start to the first
// delta.
func inside(before, after usage) (call, firstDelta time.Duration) {
	mean := func(sum, n float64) time.Duration {
		if n <= 0 {
			return 0
		}
		return time.Duration(sum / n * float64(time.Second))
	}
	return mean(after.handling-before.handling, after.handled-before.handled),
		mean(after.toFirstDelta-before.toFirstDelta, after.firstDeltas-before.firstDeltas)
}

// sample reads the process's CPU time and RSS from /proc (the kernel's
// rusage for a live process; zero where there is no /proc) and the Go
// runtime's counters from /metrics.
func (r *relay) sample() (usage, error) {
	var u usage
	if err := r.procStats(&u); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return u, err
	}
	m, err := r.metrics()
	if err != nil {
		return u, err
	}
	u.heap, u.stack = m["go_memstats_heap_inuse_bytes"], m["go_memstats_stack_inuse_bytes"]
	u.goal = m["go_memstats_next_gc_bytes"]
	u.mallocs, u.goroutine = m["go_memstats_mallocs_total"], m["go_goroutines"]
	u.fds = m["process_open_fds"]
	u.handled, u.handling = m["grpc_server_handling_seconds_count"], m["grpc_server_handling_seconds_sum"]
	u.firstDeltas, u.toFirstDelta = m["llmrelay_time_to_first_delta_seconds_count"], m["llmrelay_time_to_first_delta_seconds_sum"]
	return u, nil
}

// procStats reads the CPU time and RSS from /proc.
func (r *relay) procStats(u *usage) error {
	pid := r.cmd.Process.Pid
	u.cpu = cpuOf(pid)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			u.rss = kb << 10
		}
	}
	return nil
}

// metrics scrapes /metrics; samples of one name are summed over their
// labels.
func (r *relay) metrics() (map[string]float64, error) {
	resp, err := http.Get("http://" + r.metricsAddr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		name := line[:i]
		if j := strings.IndexByte(name, '{'); j >= 0 {
			name = name[:j]
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[name] += v
		}
	}
	return out, sc.Err()
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
