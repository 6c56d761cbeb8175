package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
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
				_, tr := otlpTracing(b)
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

// BenchmarkDoorChat measures one non-streamed Chat Completions call of
// four words of mock/lorem through the HTTP doors, over loopback HTTP on a
// kept-alive connection, with tracing off and with every request traced
// (its server span, exported over OTLP/gRPC to an in-process receiver):
// what the request's server span costs beside the call. The client's side
// of the request is counted too; it is the same in both.
func BenchmarkDoorChat(b *testing.B) {
	for _, name := range []string{"untraced", "traced"} {
		b.Run(name, func(b *testing.B) {
			var opts []server.Option
			if name == "traced" {
				_, tr := otlpTracing(b)
				opts = append(opts, server.WithTracing(tr))
			}
			url := servertest.Start(b, nil, opts...).HTTP(b) + "/v1/chat/completions"
			client := &http.Client{Transport: &http.Transport{}}
			b.Cleanup(client.CloseIdleConnections)
			body := chatBody(false, 4, 0)
			b.ReportAllocs()
			for b.Loop() {
				req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, url, strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("traceparent", "00-"+clientTraceID+"-"+clientSpanID+"-01")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}

// BenchmarkGenerateResumable measures what making a call resumable adds:
// a 20-delta mock/echo call over bufconn, ordinary, resumable on the
// memory store, and resumable on the redis store (a local redis-server;
// skipped without one). Each resumable call creates its log, appends
// every event (off the call's path) and ends it (docs/performance.md).
func BenchmarkGenerateResumable(b *testing.B) {
	text := strings.TrimSpace(strings.Repeat("word ", 20))
	for _, name := range []string{"ordinary", "memory", "redis"} {
		b.Run(name, func(b *testing.B) {
			cfg := config.Default()
			if name == "redis" {
				srv := redistest.Start(b)
				cfg.State.Store = state.StoreRedis
				cfg.State.Redis.Address = srv.Addr
				cfg.State.Redis.KeyPrefix = "bench:"
			}
			cfg.Resume.Grace = time.Second // keep what is kept steady
			in := servertest.Start(b, cfg)
			req := echoRequest(text)
			req.Resumable = proto.Bool(name != "ordinary")
			b.ReportAllocs()
			for b.Loop() {
				req.RequestId = uuid.NewString()
				if _, err := servertest.Collect(b.Context(), in.Client, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
