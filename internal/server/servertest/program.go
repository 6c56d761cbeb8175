package servertest

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
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
