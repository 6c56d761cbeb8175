package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the outputs the tests get")

// result is what one run of the command line gave.
type result struct {
	code           int
	stdout, stderr string
}

// fakeBuild is the build information tests run with, so that version
// output does not depend on how the test binary was built.
func fakeBuild() (*debug.BuildInfo, bool) {
	return &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/llmrelay/llmrelay", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
			{Key: "vcs.revision", Value: "d0eed5a1e2f3c4b5a6978812345678901234abcd"}, {Key: "vcs.modified", Value: "true"},
		},
	}, true
}

// runCLI runs the command line with args, the environment variables in
// environ (and no others) and stdin.
func runCLI(ctx context.Context, t *testing.T, args []string, environ map[string]string, stdin string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(ctx, args, Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut,
		Getenv:    func(k string) string { return environ[k] },
		BuildInfo: fakeBuild,
	})
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// golden compares got with testdata/<name>, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "llmrelay.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
