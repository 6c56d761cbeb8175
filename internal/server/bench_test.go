package server_test

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// BenchmarkGenerateEcho measures one four-delta mock/echo call over
// bufconn through the whole production chain, open and with a key.
func BenchmarkGenerateEcho(b *testing.B) {
	for name, cfg := range map[string]*config.Config{"open": nil, "keyed": securedConfig()} {
		b.Run(name, func(b *testing.B) {
			in := servertest.Start(b, cfg)
			ctx := b.Context()
			if name == "keyed" {
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
