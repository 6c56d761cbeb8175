package cli

import (
	"strings"
	"testing"
)

func TestRefusesToServeOpenBeyondLoopback(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		r := runCLI(t.Context(), t, []string{"--listen", listen, "--metrics-listen", "off"}, nil, "")
		if r.code != ExitFailed || !strings.Contains(r.stderr, "refusing to serve without authentication") {
			t.Errorf("--listen %s without keys: exit %d, %q; want the refusal", listen, r.code, r.stderr)
		}
	}
}
