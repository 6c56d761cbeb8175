package server_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// serveTCP serves cfg's server on a loopback port, and returns the port's
// address; cleanup shuts it down.
func serveTCP(t *testing.T, cfg *config.Config) (*server.Server, string) {
	t.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Shutdown(context.Background())
		<-served
	})
	return srv, lis.Addr().String()
}

// TestProbe: what `llmrelay health` reports, over plaintext and TLS, and
// for a server that is draining or not there at all.
func TestProbe(t *testing.T) {
	plain := config.Default()
	plain.Providers = config.DefaultProviders()
	secured := securedConfig()
	secured.TLS.CertFile, secured.TLS.KeyFile, _ = servertest.SelfSigned(t, t.TempDir())
	for name, cfg := range map[string]*config.Config{"plaintext": plain, "tls": secured} {
		t.Run(name, func(t *testing.T) {
			cfg.DrainDelay = time.Hour // ended by the test through Shutdown's context
			srv, addr := serveTCP(t, cfg)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if err := server.Probe(ctx, cfg, addr, ""); err != nil {
				t.Errorf("Probe of a serving server: %v", err)
			}
			if err := server.Probe(ctx, cfg, addr, "llmrelay.v1.LLMService"); err != nil {
				t.Errorf("Probe of the LLMService: %v", err)
			}
			if err := server.Probe(ctx, cfg, addr, "no.such.Service"); err == nil {
				t.Error("Probe of an unknown service succeeded")
			}

			endDrain, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				srv.Shutdown(endDrain)
				close(done)
			}()
			deadline := time.Now().Add(time.Minute) // a guard against hangs
			for err := server.Probe(ctx, cfg, addr, ""); !errors.Is(err, server.ErrNotServing); err = server.Probe(ctx, cfg, addr, "") {
				if time.Now().After(deadline) {
					t.Fatalf("Probe during the drain: %v, want ErrNotServing", err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			stop()
			<-done
		})
	}
	t.Run("nothing listening", func(t *testing.T) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := lis.Addr().String()
		lis.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		if err := server.Probe(ctx, plain, addr, ""); err == nil || errors.Is(err, server.ErrNotServing) {
			t.Errorf("Probe with nothing listening: %v, want a connection error", err)
		}
	})
}
