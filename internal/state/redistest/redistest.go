// Package redistest runs a real redis-server (Debian's package, installed
// by scripts/redis-server.sh) for tests: on a free loopback port, with no
// persistence, stopped in t.Cleanup. There is no mock of Redis.
//
// A test that needs one calls Start; where redis-server cannot be found
// the test is skipped with a message saying how to install it, except under
// CI (CI=true), which installs it and so fails instead. Programs (the scale
// benchmark) call Run and Stop themselves.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmrelay/llmrelay/internal/freeport"
)

// startTimeout bounds how long a redis-server may take to answer PING; it
// is generous because the test machines are loaded.
const startTimeout = 30 * time.Second

// Server is a redis-server process run by a test.
type Server struct {
	// Addr is the server's 127.0.0.1:port; it stays the same across
	// Stop and Restart.
	Addr string

	bin   string
	port  int
	dir   string
	first []string // redis-server arguments before the others (a config file)
	extra []string // more redis-server arguments
	bus   int      // the cluster bus port, for cluster nodes

	mu   sync.Mutex
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan struct{}
}

// binaryOrSkip returns redis-server's path, or skips the test (fails it
// under CI) when it cannot be found.
func binaryOrSkip(t testing.TB) string {
	t.Helper()
	bin := Binary()
	if bin == "" {
		msg := "redis-server not found: install it with scripts/redis-server.sh (Debian's redis-server package)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + "; CI installs it, so this is a failure here")
		}
		t.Skip(msg)
	}
	return bin
}

// Binary returns the path of redis-server, or "" when it cannot be found.
func Binary() string {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/bin/redis-server", "/usr/sbin/redis-server", "/usr/local/bin/redis-server"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// Start starts a redis-server on a free loopback port and stops it when
// the test ends. It skips the test when redis-server cannot be found
// (and fails it under CI).
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Run(binaryOrSkip(t), t.TempDir())
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Run starts the redis-server bin on a free loopback port, with dir as its
// working directory (nothing is written there: no persistence). The
// caller stops it.
func Run(bin, dir string, args ...string) (*Server, error) {
	return runWith(bin, dir, nil, args...)
}

func runWith(bin, dir string, first []string, args ...string) (*Server, error) {
	s := &Server{bin: bin, dir: dir, first: first}
	var err error
	for range 5 { // another process may take the free port before redis-server binds it
		if s.port, err = freeport.Port(); err != nil {
			return nil, err
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
		s.extra = args
		if len(args) > 0 && args[0] == "--cluster-enabled" {
			// The cluster bus needs a free port of its own, too.
			if s.bus, err = freeport.Port(); err != nil {
				return nil, err
			}
			s.extra = append(slices.Clone(args), "--cluster-port", strconv.Itoa(s.bus))
		}
		if err = s.start(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

// Stop stops the server (SIGTERM, then SIGKILL after a while) and waits for
// it to exit; data is not saved. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Pause stops the server's process (SIGSTOP) without closing anything, as
// a Redis that stalls: what clients send meanwhile waits in its sockets,
// and runs once Resume continues it, even for a client that gave up
// waiting and closed its connection. Resume is also the test's cleanup.
func (s *Server) Pause(t testing.TB) {
	t.Helper()
	s.signal(t, syscall.SIGSTOP)
	t.Cleanup(func() { s.signal(t, syscall.SIGCONT) })
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume(t testing.TB) {
	t.Helper()
	s.signal(t, syscall.SIGCONT)
}

func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatalf("redistest: %v: %v", sig, err)
	}
}

// Restart starts the server again on the same address, empty.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	var err error
	deadline := time.Now().Add(startTimeout)
	for { // the port may take a moment to be free again
		if err = s.start(); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("redistest: restart: %v", err)
	}
}

// Client returns a go-redis client of the server, closed when the test
// ends.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Log returns what the server printed so far, for failure messages.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out == nil {
		return ""
	}
	return s.out.String()
}

func (s *Server) start() error {
	out := &bytes.Buffer{}
	cmd := exec.Command(s.bin, append(slices.Clone(s.first),
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--daemonize", "no",
		"--loglevel", "warning",
	)...)
	cmd.Args = append(cmd.Args, s.extra...)
	cmd.Stdout, cmd.Stderr = &lockedWriter{mu: &s.mu, w: out}, &lockedWriter{mu: &s.mu, w: out}
	// Its own process group, so a signal meant for the test's process
	// group (^C) does not reach it before the cleanup does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			break
		}
		select {
		case <-done:
			return fmt.Errorf("redis-server on port %d exited at start: %s", s.port, out.String())
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("redis-server on port %d did not answer PING within %v: %v", s.port, startTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.mu.Lock()
	s.cmd, s.out, s.done = cmd, out, done
	s.mu.Unlock()
	return nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// StartCluster starts a Redis Cluster of n primaries (no replicas) on free
// loopback ports, with the 16384 slots split between them, waits until
// every node reports the cluster ok, and stops it when the test ends. It
// returns the nodes' addresses.
func StartCluster(t testing.TB, n int) []string {
	t.Helper()
	bin := binaryOrSkip(t)
	nodes := make([]*Server, n)
	addrs := make([]string, n)
	for i := range nodes {
		var err error
		nodes[i], err = Run(bin, t.TempDir(), "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
		if err != nil {
			t.Fatalf("redistest: cluster node %d: %v", i, err)
		}
		t.Cleanup(nodes[i].Stop)
		addrs[i] = nodes[i].Addr
	}
	ctx := context.Background()
	const slots = 16384
	for i, node := range nodes {
		c := node.Client(t)
		lo, hi := i*slots/n, (i+1)*slots/n-1
		if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			t.Fatalf("redistest: CLUSTER ADDSLOTSRANGE on node %d: %v", i, err)
		}
		if i > 0 {
			if err := c.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", nodes[0].port, nodes[0].bus).Err(); err != nil {
				t.Fatalf("redistest: CLUSTER MEET: %v", err)
			}
		}
	}
	deadline := time.Now().Add(startTimeout)
	for _, node := range nodes {
		c := node.Client(t)
		for {
			info, err := c.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("redistest: the cluster is not ok within %v: %s %v", startTimeout, info, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return addrs
}

// StartSentinel starts a Redis Sentinel monitoring primary under the name
// master (quorum 1) on a free loopback port, waits until it knows the
// primary, stops it when the test ends, and returns its address.
func StartSentinel(t testing.TB, primary *Server, master string) string {
	t.Helper()
	bin := binaryOrSkip(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	body := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 1\nsentinel down-after-milliseconds %s 5000\n", master, primary.port, master)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	// redis-server CONFIG --sentinel: the config file must come first.
	s, err := runWith(bin, dir, []string{conf, "--sentinel"})
	if err != nil {
		t.Fatalf("redistest: sentinel: %v", err)
	}
	t.Cleanup(s.Stop)
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		addr, err := c.GetMasterAddrByName(context.Background(), master).Result()
		if err == nil && len(addr) == 2 && addr[1] == strconv.Itoa(primary.port) {
			return s.Addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: the sentinel does not know %s within %v: %v %v", master, startTimeout, addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
