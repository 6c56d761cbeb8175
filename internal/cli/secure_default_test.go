package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRefusesToServeOpenBeyondLoopback(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		err := run(t.Context(), []string{"--listen", listen}, nil, &bytes.Buffer{}, &bytes.Buffer{}, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), "refusing to serve without authentication") {
			t.Errorf("--listen %s without keys: %v, want the refusal", listen, err)
		}
	}
}
