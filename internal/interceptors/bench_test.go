package interceptors

import (
	"context"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/metrics"
)

// BenchmarkChain measures a one-event Generate call over bufconn with no
// links and with every link, as internal/server chains them.
func BenchmarkChain(b *testing.B) {
	keys := testKeys(b, auth.KeyConfig{Name: "k", SHA256: auth.HashKey("bench-key"), Scopes: []string{"generate"},
		Models: []string{"mock/*"}, RequestsPerSecond: 1e9, Burst: 1e9, MaxConcurrentStreams: 1000})
	m := metrics.New()
	all := []Link{
		Recovery(discardLogger()), Metrics(m), Logging(discardLogger()), APIOnly(Auth(keys)),
		NewKeyLimits(keys, m).Link(), APIOnly(Deadline(time.Minute, time.Hour)), RequestSize(4 << 20),
		Validate(newValidator(b)), ModelAccess(), NewProviderQueue(map[string]int{"mock": 1000}, 10, m).Link(),
	}
	for name, links := range map[string][]Link{"none": nil, "all": all} {
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
