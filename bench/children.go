package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
)

// The benchmark's other processes are this program again, started with a
// hidden mode flag: the upstream (so that its CPU time is its own, not the
// client's) and the floor relay (floor.go). Each prints one line of
// addresses on stdout once it serves, and exits when its stdin closes (when
// the benchmark exits, however it exits).

// childMode is the hidden flag that makes this program a child.
var childMode = flag.String("child", "", "internal: run as the benchmark's upstream or floor process")

// runChild runs this process as the child named by -child and reports
// whether it was one.
func runChild() bool {
	switch *childMode {
	case "":
		return false
	case "upstream":
		serveUpstream()
	case "floor":
		serveFloor()
	case "hop":
		serveHop()
	default:
		fmt.Fprintln(os.Stderr, "bench: unknown -child", *childMode)
		os.Exit(2)
	}
	return true
}

// Flags of the children.
var (
	childChunks    = flag.Int("child-chunks", 20, "internal: content chunks per stream of the upstream child")
	childSlowDelay = flag.Duration("child-slow-delay", 1500*time.Millisecond, "internal: the slow upstream's pause before each chunk")
	childSlowFirst = flag.Duration("child-slow-first", 0, "internal: the slow upstream's pause before its response head")
	childFast      = flag.String("child-fast", "", "internal: the floor child's fast upstream")
	childSlow      = flag.String("child-slow", "", "internal: the floor child's slow upstream")
	childPerChunk  = flag.Bool("child-per-chunk", false, "internal: the floor child relays one delta per upstream chunk")
	childFormat    = flag.String("child-format", openaitest.FormatOpenAI, "internal: the upstream child's wire format (-upstream-format)")
	childCA        = flag.String("child-ca", "", "internal: the upstream child serves HTTPS with HTTP/2 and writes its certificate here; the floor child trusts it")
)

// serveUpstream runs the fast and slow upstreams and a control endpoint
// that reports how many streams the slow one has open, then prints
// "fast=URL slow=URL ctl=URL".
func serveUpstream() {
	tls := *childCA != ""
	fast := openaitest.NewServer(openaitest.Options{Chunks: *childChunks, TLS: tls, Format: *childFormat})
	slow := openaitest.NewServer(slowOptions(*childChunks, *childSlowDelay, *childSlowFirst, tls, *childFormat))
	if tls {
		// httptest serves every TLS server with the same certificate.
		if err := os.WriteFile(*childCA, fast.CertificatePEM(), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "bench upstream:", err)
			os.Exit(1)
		}
	}
	ctl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench upstream:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/open", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, slow.OpenStreams())
	})
	go func() { _ = http.Serve(ctl, mux) }()
	fmt.Printf("fast=%s slow=%s ctl=http://%s\n", fast.URL(), slow.URL(), ctl.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// child is one of the benchmark's processes.
type child struct {
	cmd    *exec.Cmd
	addrs  map[string]string // what it printed
	exited chan error
	stderr *limitedWriter
	stdin  io.WriteCloser
}

// startChild starts this program in mode with args and waits for its line
// of addresses.
func startChild(ctx context.Context, mode string, env, stderrPath string, args ...string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c := &child{exited: make(chan error, 1), stderr: &limitedWriter{w: &strings.Builder{}, n: 64 << 10}}
	c.cmd = exec.CommandContext(ctx, self, append([]string{"-child", mode}, args...)...)
	c.cmd.Env = os.Environ()
	if env != "" {
		c.cmd.Env = append(c.cmd.Env, strings.Split(env, ",")...)
	}
	c.cmd.Stderr = c.stderr
	if stderrPath != "" {
		f, err := os.Create(stderrPath)
		if err != nil {
			return nil, err
		}
		defer f.Close() // the child has its own descriptor
		c.cmd.Stderr = f
	}
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s process: %w", mode, err)
	}
	go func() { c.exited <- c.cmd.Wait() }()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case line := <-lines:
		c.addrs = map[string]string{}
		for _, f := range strings.Fields(line) {
			if k, v, ok := strings.Cut(f, "="); ok {
				c.addrs[k] = v
			}
		}
		if len(c.addrs) == 0 {
			c.stop()
			return nil, fmt.Errorf("the %s process printed no addresses: %s", mode, c.stderr.w)
		}
		return c, nil
	case err := <-c.exited:
		return nil, fmt.Errorf("the %s process exited: %v: %s", mode, err, c.stderr.w)
	case <-time.After(30 * time.Second):
		c.stop()
		return nil, fmt.Errorf("the %s process did not start within 30s", mode)
	}
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop closes its stdin and waits for it to exit.
func (c *child) stop() {
	_ = c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
	}
}

// upstream is the upstream child: its two servers' base URLs and, when
// they serve HTTPS (HTTP/2), the file holding their certificate.
type upstream struct {
	*child
	fast, slow, ctl string
	ca              string
}

// slowOptions are the slow upstream's: chunks paced by delay, after a
// response head that waits first (a model's time to first token).
func slowOptions(chunks int, delay, first time.Duration, tls bool, format string) openaitest.Options {
	o := openaitest.Options{Chunks: chunks, ChunkDelay: delay, TLS: tls, Format: format}
	if first > 0 {
		o.FaultFor = func(int, []byte) openaitest.Fault { return openaitest.Fault{FirstByteDelay: first} }
	}
	return o
}

// startUpstream starts the upstream child; with a non-empty ca it serves
// HTTPS with HTTP/2 and writes its certificate to the file ca.
func startUpstream(ctx context.Context, chunks int, slowDelay, slowFirst time.Duration, ca string) (*upstream, error) {
	c, err := startChild(ctx, "upstream", "", "", "-child-chunks", strconv.Itoa(chunks), "-child-slow-delay", slowDelay.String(), "-child-slow-first", slowFirst.String(), "-child-ca", ca, "-child-format", upstreamFormat)
	if err != nil {
		return nil, err
	}
	return &upstream{child: c, fast: c.addrs["fast"], slow: c.addrs["slow"], ctl: c.addrs["ctl"], ca: ca}, nil
}

// OpenStreams returns how many streams the slow upstream has open.
func (u *upstream) OpenStreams() int64 {
	resp, err := http.Get(u.ctl + "/open") // the control endpoint is plain HTTP
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	n, _ := strconv.ParseInt(string(b), 10, 64)
	return n
}

// openCounter counts the streams the slow upstream has open.
type openCounter interface{ OpenStreams() int64 }

// cpuOf returns a process's user + system CPU time so far, from /proc
// (zero where there is none).
func cpuOf(pid int) time.Duration {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 || i+2 > len(stat) {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is field 3, utime 14, stime 15 (man 5 proc).
	f := strings.Fields(string(stat[i+2:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// serveMetrics serves the default Prometheus registry (Go runtime and
// process collectors) on a loopback port, for the memory samples.
func serveMetrics() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() { _ = http.Serve(l, promhttp.Handler()) }()
	return l.Addr().String(), nil
}
