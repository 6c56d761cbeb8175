package cli

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
)

// TestHealthOnTheDefaultAddressSaysTheServerMayBeElsewhere: `health` with
// no address probes the embedded default, 127.0.0.1:50051; a server that
// found it taken (a second `make run`, or another program on it) listens
// on a free port instead, so a failed probe there says so and how to name
// the port. An address someone named gets no such word: a server there
// never moves.
func TestHealthOnTheDefaultAddressSaysTheServerMayBeElsewhere(t *testing.T) {
	const hint = "a server started on the default address listens on a free port when 127.0.0.1:50051 is taken"
	// Another program on the default address: it accepts and hangs up.
	lis, err := net.Listen("tcp", "127.0.0.1:50051")
	switch {
	case err == nil:
		defer lis.Close()
		go func() {
			for {
				c, err := lis.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	case !errors.Is(err, syscall.EADDRINUSE):
		t.Fatal(err)
	}
	r := runCLI(t.Context(), t, []string{"health", "--timeout", "10s"}, nil, "")
	if r.code == ExitOK {
		t.Skip("a server on this machine answers SERVING at the default address")
	}
	if r.code != ExitFailed || !strings.Contains(r.stderr, hint) || !strings.Contains(r.stderr, "--addr HOST:PORT") {
		t.Errorf("health on the default address: exit %d, stderr:\n%s\nwant exit 1 and %q, naming --addr", r.code, r.stderr, hint)
	}

	for name, run := range map[string]struct {
		args    []string
		environ map[string]string
	}{
		"--addr":          {[]string{"health", "--addr", "127.0.0.1:1"}, nil},
		"LLMRELAY_LISTEN": {[]string{"health"}, map[string]string{"LLMRELAY_LISTEN": "127.0.0.1:1"}},
	} {
		r := runCLI(t.Context(), t, run.args, run.environ, "")
		if r.code != ExitFailed || strings.Contains(r.stderr, hint) {
			t.Errorf("health on an address named by %s: exit %d, stderr:\n%s\nwant exit 1 and no word of a free port", name, r.code, r.stderr)
		}
	}
}
