package server_test

import (
	"context"
	"os"
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/telemetry"
	"github.com/llmrelay/llmrelay/internal/telemetry/otlptest"
)

// BenchmarkGenerateEcho measures one four-delta mock/echo call over
// bufconn through the whole production chain: open, with a key, and with
// a key and every call traced (exported over OTLP/gRPC to an in-process
// receiver). Open and keyed run with tracing off, which must cost no
// allocation (docs/performance.md).
func BenchmarkGenerateEcho(b *testing.B) {
	for _, name := range []string{"open", "keyed", "traced"} {
		b.Run(name, func(b *testing.B) {
			var cfg *config.Config
			var opts []server.Option
			if name != "open" {
				cfg = securedConfig()
			}
			if name == "traced" {
				_, endpoint := otlptest.StartGRPC(b)
				b.Setenv(telemetry.EnvEndpoint, endpoint)
				b.Setenv(telemetry.EnvProtocol, telemetry.ProtocolGRPC)
				tr, err := telemetry.Setup(b.Context(), os.Getenv, telemetry.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
				opts = append(opts, server.WithTracing(tr))
			}
			in := servertest.Start(b, cfg, opts...)
			ctx := b.Context()
			if name != "open" {
				ctx = bearer(ctx, keyFull)
			}
			req := echoRequest("hello brave new world")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := servertest.Collect(ctx, in.Client, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
