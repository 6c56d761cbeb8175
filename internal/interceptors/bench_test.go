package interceptors

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/state/memory"
)

// BenchmarkChain measures a one-event Generate call over bufconn with no
// links and with every link, as internal/server chains them, logging at info
// and at warn (the level that drops the start and success lines).
func BenchmarkChain(b *testing.B) {
	keys := testKeys(b, auth.KeyConfig{Name: "k", SHA256: auth.HashKey("bench-key"), Scopes: []string{"generate"},
		Models: []string{"mock/*"}, RequestsPerSecond: 1e9, Burst: 1e9, MaxConcurrentStreams: 1000})
	m := metrics.New()
	all := func(log *slog.Logger) []Link {
		return []Link{
			Guard(log), Metrics(m), Logging(log), APIOnly(Auth(keyAuth(keys))),
			KeyLimits(engine.NewKeyLimits(memory.New(), m)), APIOnly(Deadline(time.Minute, time.Hour)), RequestSize(4 << 20),
			Validate(newValidator(b)), ModelAccess(), ResolveModel(testRoutes(b, nil, "mock")),
			ProviderQueue(engine.NewProviderQueue(map[string]int{"mock": 1000}, 10, m)), Recovery(log),
		}
	}
	warn := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	for name, links := range map[string][]Link{"none": nil, "all": all(discardLogger()), "all-log-warn": all(warn)} {
		b.Run(name, func(b *testing.B) {
			c := serve(b, &fakeService{}, links...)
			ctx := withKey(context.Background(), "bench-key")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.generate(ctx, validRequest()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
