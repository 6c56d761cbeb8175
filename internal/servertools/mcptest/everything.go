// Package mcptest runs real MCP servers for tests, on loopback: the
// reference server @modelcontextprotocol/server-everything (npm, pinned in
// everything/package-lock.json), started as a real Node process over the
// streamable HTTP transport, and GoServer, a server built with the
// official go-sdk whose tools a test controls (a tool that hangs, one
// that blocks until its server is killed, one that fails).
package mcptest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/freeport"
)

// EverythingVersion is the pinned version of
// @modelcontextprotocol/server-everything (everything/package.json).
const EverythingVersion = "2026.8.31"

// Everything is a running @modelcontextprotocol/server-everything.
type Everything struct {
	// URL is its streamable HTTP endpoint: http://127.0.0.1:<port>/mcp.
	URL  string
	Port int

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

// ErrUnavailable is the error of RunEverything when Node or the npm
// package cannot be had.
var ErrUnavailable = errors.New("@modelcontextprotocol/server-everything cannot run here")

// install makes sure server-everything is installed, running the
// project's scripts/test-deps.sh (npm ci from the lockfile) when it is
// not. Installation runs once per process.
var install = sync.OnceValue(func() error {
	if _, err := os.Stat(entry()); err == nil {
		return nil
	}
	script := filepath.Join(dir(), "..", "..", "..", "..", "scripts", "test-deps.sh")
	out, err := exec.Command("bash", script).CombinedOutput()
	if _, serr := os.Stat(entry()); serr != nil {
		return fmt.Errorf("%w: @modelcontextprotocol/server-everything@%s is not installed, and scripts/test-deps.sh could not install it (%v): %s", ErrUnavailable, EverythingVersion, err, out)
	}
	return nil
})

// StartEverything starts server-everything on a free loopback port and
// stops it when the test ends. It skips the test when Node or the npm
// package cannot be had (failing it in CI).
func StartEverything(t testing.TB) *Everything {
	t.Helper()
	e, err := RunEverything()
	if errors.Is(err, ErrUnavailable) {
		unavailable(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Kill()
		if t.Failed() {
			t.Logf("server-everything's log:\n%s", e.Log())
		}
	})
	return e
}

// RunEverything starts server-everything on a free loopback port, for a
// program rather than a test (make test-docs); Kill stops it. The error
// wraps ErrUnavailable when Node or the package cannot be had.
func RunEverything() (*Everything, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: node is not installed", ErrUnavailable)
	}
	if err := install(); err != nil {
		return nil, err
	}
	var last string
	for range 5 {
		e, log, err := startEverything(node)
		if err != nil {
			return nil, err
		}
		if e != nil {
			return e, nil
		}
		last = log
	}
	return nil, fmt.Errorf("server-everything did not start:\n%s", last)
}

// startEverything tries once, on a port that was free a moment ago; e is
// nil when the process exited before listening (the port was taken).
func startEverything(node string) (e *Everything, log string, err error) {
	port, err := freeport.Port()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(node, "--import", "file://"+filepath.Join(dir(), "loopback.mjs"), entry(), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.Dir = dir()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	logs := &lockedLog{}
	cmd.Stdout = logs
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	e = &Everything{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Port: port, cmd: cmd, done: make(chan struct{}), log: logs}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			line := sc.Text()
			logs.Write([]byte(line + "\n"))
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
		return e, "", nil
	case <-e.done:
		return nil, logs.String(), nil
	case <-time.After(2 * time.Minute):
		e.Kill()
		return nil, "", fmt.Errorf("server-everything did not listen within 2 minutes:\n%s", logs.String())
	}
}

// Kill stops the server at once (SIGKILL) and waits for it to exit.
func (e *Everything) Kill() {
	_ = e.cmd.Process.Kill()
	<-e.done
}

// Log returns what the server printed.
func (e *Everything) Log() string { return e.log.String() }

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
