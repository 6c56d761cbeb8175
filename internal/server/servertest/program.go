package servertest

import (
	"net"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Program returns the path of a program some tests run as a real process
// (haproxy, nghttpx), installing its Debian package with the project's
// scripts/test-deps.sh when it is missing; the test skips, saying why,
// only when it cannot be installed.
func Program(t testing.TB, name, debianPackage string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts", "test-deps.sh")
	out, err := exec.Command("bash", script).CombinedOutput()
	if p, lerr := exec.LookPath(name); lerr == nil {
		return p
	}
	t.Skipf("%s (Debian package %s) is not installed and scripts/test-deps.sh could not install it (%v): %s", name, debianPackage, err, out)
	return ""
}

// StartProgram starts cmd, a program serving on addr (a proxy in front of
// llmrelay), waits until it accepts connections there, and kills it when
// the test ends. log reads the program's output, shown when it exits early
// or the test fails.
func StartProgram(t testing.TB, cmd *exec.Cmd, addr string, log func() string) {
	t.Helper()
	name := filepath.Base(cmd.Path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, log())
		}
	})
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("%s exited: %s", name, log())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
