package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestServeStopsCleanlyWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	// No metrics listener: the default port may be taken on a shared machine.
	cfgFile := filepath.Join(t.TempDir(), "llmrelay.yaml")
	if err := os.WriteFile(cfgFile, []byte("metrics_listen: \"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", cfgFile, "--listen", "127.0.0.1:0"}
	go func() { done <- run(ctx, args, nil, &bytes.Buffer{}, stderr, func(string) string { return "" }) }()
	// Cancel once the server says it is serving, however long that takes.
	for !strings.Contains(stderr.String(), "llmrelay serving") {
		select {
		case err := <-done:
			t.Fatalf("run returned %v before serving: %s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
	if !strings.Contains(stderr.String(), "llmrelay serving") {
		t.Errorf("log %q does not say the server was serving", stderr.String())
	}
}

func TestRunRejectsBadInvocations(t *testing.T) {
	tests := [][]string{
		{"--listen", "nowhere"},
		{"--no-such-flag"},
		{"stray"},
		{"--config", "/does/not/exist.yaml"},
	}
	for _, args := range tests {
		err := run(t.Context(), args, nil, &bytes.Buffer{}, &bytes.Buffer{}, func(string) string { return "" })
		if err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"version"}, nil, &out, &bytes.Buffer{}, nil); err != nil || !strings.HasPrefix(out.String(), "llmrelay") {
		t.Errorf("version printed %q, %v", out.String(), err)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
