// Package mcptest runs real MCP servers for tests, on loopback: the
// reference server @modelcontextprotocol/server-everything (npm, pinned in
// everything/package-lock.json), started as a real Node process over the
// streamable HTTP transport, and GoServer, a server built with the
// official go-sdk whose tools a test controls (a tool that hangs, one
// that blocks until its server is killed, one that fails).
package mcptest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// EverythingVersion is the pinned version of
// @modelcontextprotocol/server-everything (everything/package.json).
const EverythingVersion = "2026.8.31"

// Everything is a running @modelcontextprotocol/server-everything.
type Everything struct {
	// URL is its streamable HTTP endpoint: http://127.0.0.1:<port>/mcp.
	URL  string
	Port int

	t    testing.TB
	cmd  *exec.Cmd
	done chan struct{}
	log  *lockedLog
}

// dir returns the directory of the package's npm project.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "everything")
}

// entry is server-everything's main script.
func entry() string {
	return filepath.Join(dir(), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

// unavailable skips the test, saying why, or fails it in CI (CI set), where
// .ci/run installs the server first: there a missing server is a defect of
// the setup, never a reason to skip.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set: tests of server tools must run)", msg)
	}
	t.Skip(msg)
}

// install makes sure server-everything is installed, running the
// project's scripts/test-deps.sh (npm ci from the lockfile) when it is
// not. Installation runs once per test binary.
var install = sync.OnceValue(func() error {
	if _, err := os.Stat(entry()); err == nil {
		return nil
	}
	script := filepath.Join(dir(), "..", "..", "..", "..", "scripts", "test-deps.sh")
	out, err := exec.Command("bash", script).CombinedOutput()
	if _, serr := os.Stat(entry()); serr != nil {
		return fmt.Errorf("scripts/test-deps.sh could not install it (%v): %s", err, out)
	}
	return nil
})

// StartEverything starts server-everything on a free loopback port and
// stops it when the test ends. It skips the test when Node or the npm
// package cannot be had (failing it in CI).
func StartEverything(t testing.TB) *Everything {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not installed: the tests of server tools run @modelcontextprotocol/server-everything")
	}
	if err := install(); err != nil {
		unavailable(t, "@modelcontextprotocol/server-everything@%s is not installed: %v", EverythingVersion, err)
	}
	var last string
	for range 5 {
		e, log, ok := startEverything(t, node)
		if ok {
			return e
		}
		last = log
	}
	t.Fatalf("server-everything did not start:\n%s", last)
	return nil
}

// startEverything tries once, on a port that was free a moment ago; ok is
// false when the process exited before listening (the port was taken).
func startEverything(t testing.TB, node string) (*Everything, string, bool) {
	port := FreePort(t)
	cmd := exec.Command(node, "--import", "file://"+filepath.Join(dir(), "loopback.mjs"), entry(), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.Dir = dir()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	log := &lockedLog{}
	cmd.Stdout = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e := &Everything{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Port: port, t: t, cmd: cmd, done: make(chan struct{}), log: log}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			line := sc.Text()
			log.Write([]byte(line + "\n"))
			if !said && strings.Contains(line, "listening on port") {
				said = true
				close(listening)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() { _ = cmd.Wait(); close(e.done) }()
	select {
	case <-listening:
	case <-e.done:
		return nil, log.String(), false
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-e.done
		t.Fatalf("server-everything did not listen within 2 minutes:\n%s", log.String())
	}
	t.Cleanup(func() {
		e.Kill()
		if t.Failed() {
			t.Logf("server-everything's log:\n%s", log.String())
		}
	})
	return e, "", true
}

// Kill stops the server at once (SIGKILL) and waits for it to exit.
func (e *Everything) Kill() {
	_ = e.cmd.Process.Kill()
	<-e.done
}

// Log returns what the server printed.
func (e *Everything) Log() string { return e.log.String() }

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lockedLog is a log buffer safe for concurrent writers.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
