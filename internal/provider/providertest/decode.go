package providertest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// Decode runs dec over a whole stream body, as an adapter's stream does,
// and assembles the result. extra is the adapter's non-standard line field
// (see httpx.GetReader), "" for none.
func Decode(body, extra string, dec httpx.Decoder) Result {
	s := httpx.NewStream(context.Background(), io.NopCloser(bytes.NewReader([]byte(body))), extra, dec)
	defer s.Close()
	return Drain(s, nil)
}

// BenchmarkDecode measures an adapter's decode path: the stream body in
// testdata/file, bytes to events, decoded by a fresh newDec() per stream,
// one stream per op. It fails unless every stream yields wantEvents events
// and ends with its terminator.
func BenchmarkDecode(b *testing.B, file, extra string, newDec func() httpx.Decoder, wantEvents int) {
	body, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	ctx := context.Background()
	for b.Loop() {
		s := httpx.NewStream(ctx, io.NopCloser(bytes.NewReader(body)), extra, newDec())
		n := 0
		for {
			if _, err := s.Recv(); err != nil {
				if !errors.Is(err, io.EOF) {
					b.Fatal(err)
				}
				break
			}
			n++
		}
		_ = s.Close()
		if n != wantEvents {
			b.Fatalf("%d events, want %d", n, wantEvents)
		}
	}
}

// HTTPProvider builds an HTTP adapter for a test: it puts key in the
// environment variable cfg.APIKeyEnv names (when both are set), builds the
// provider with factory, and closes the shared client's idle connections
// when the test ends.
func HTTPProvider(t *testing.T, factory provider.Factory, cfg provider.Config, key string) provider.Provider {
	t.Helper()
	if cfg.APIKeyEnv != "" && key != "" {
		t.Setenv(cfg.APIKeyEnv, key)
	}
	p, err := factory(cfg)
	if err != nil {
		t.Fatalf("building the %s provider: %v", cfg.Kind, err)
	}
	t.Cleanup(httpx.CloseIdleConnections)
	return p
}
