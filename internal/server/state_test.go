package server_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/interceptors"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
)

// redisConfig returns a server config whose state lives in srv, with one
// key limited to 1000 requests per second and 10 streams.
func redisConfig(srv *redistest.Server, policy string) *config.Config {
	cfg := config.Default()
	cfg.Auth.Keys = []config.APIKey{{Name: "limited", SHA256: auth.HashKey("limited-key"), Scopes: []string{"generate", "models.list"},
		Models: []string{"*"}, RequestsPerSecond: 1000, Burst: 1000, MaxConcurrentStreams: 10}}
	cfg.State.Store, cfg.State.OnStoreFailure = state.StoreRedis, policy
	r := &cfg.State.Redis
	r.Address = srv.Addr
	r.KeyPrefix = "server-" + policy + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	r.ReadTimeout, r.WriteTimeout = 5*time.Second, 5*time.Second
	r.HealthCheckInterval = 100 * time.Millisecond
	return cfg
}

func healthOf(t *testing.T, in *servertest.Instance, service string) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	resp, err := healthpb.NewHealthClient(in.Conn).Check(t.Context(), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatalf("health check %q: %v", service, err)
	}
	return resp.GetStatus()
}

func waitHealth(t *testing.T, in *servertest.Instance, service string, want healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for healthOf(t, in, service) != want {
		if time.Now().After(deadline) {
			t.Fatalf("health of %q did not turn %v", service, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func limitedCall(t *testing.T, in *servertest.Instance) error {
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer limited-key")
	_, err := servertest.Collect(ctx, in.Client, echoRequest("hi"))
	return err
}

// TestReadinessFollowsFailClosedStore: while a fail_closed store is down,
// the readiness service is NOT_SERVING and limited calls fail UNAVAILABLE
// (STATE_STORE_UNAVAILABLE); liveness ("") stays SERVING; both recover when
// Redis is back, without a restart.
func TestReadinessFollowsFailClosedStore(t *testing.T) {
	srv := redistest.Start(t)
	in := servertest.Start(t, redisConfig(srv, state.FailClosed))
	if got := healthOf(t, in, server.ReadinessService); got != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("readiness %v at start", got)
	}
	if err := limitedCall(t, in); err != nil {
		t.Fatalf("a call with Redis up: %v", err)
	}

	srv.Stop()
	waitHealth(t, in, server.ReadinessService, healthpb.HealthCheckResponse_NOT_SERVING)
	if got := healthOf(t, in, ""); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("liveness (\"\") %v while the store is down, want SERVING", got)
	}
	err := limitedCall(t, in)
	st := status.Convert(err)
	var reason string
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			reason = ei.GetReason()
		}
	}
	if st.Code() != codes.Unavailable || reason != interceptors.ReasonStateStoreUnavailable {
		t.Fatalf("a call with the store down: %v (reason %q), want UNAVAILABLE %s", err, reason, interceptors.ReasonStateStoreUnavailable)
	}

	srv.Restart(t)
	waitHealth(t, in, server.ReadinessService, healthpb.HealthCheckResponse_SERVING)
	if err := limitedCall(t, in); err != nil {
		t.Fatalf("a call after Redis came back: %v", err)
	}
}

// TestFailOpenStaysReady: with fail_open, readiness stays SERVING through
// an outage and calls go on, on local limits.
func TestFailOpenStaysReady(t *testing.T) {
	srv := redistest.Start(t)
	in := servertest.Start(t, redisConfig(srv, state.FailOpen))
	srv.Stop()
	// The outage is noticed: a call fails over to local limits.
	deadline := time.Now().Add(30 * time.Second)
	for fallbacks(t, in) == 0 {
		if err := limitedCall(t, in); err != nil {
			t.Fatalf("a call during the outage with fail_open: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no fallback decision counted")
		}
	}
	if got := healthOf(t, in, server.ReadinessService); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("readiness %v during the outage with fail_open, want SERVING", got)
	}
}

// TestShutdownWithRedisStore: a redis-backed server shuts down cleanly
// (its store's goroutines end: goleak checks) even with Redis gone.
func TestShutdownWithRedisStore(t *testing.T) {
	srv := redistest.Start(t)
	s, err := server.New(redisConfig(srv, state.FailOpen))
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.Shutdown(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("shutdown took the whole grace period")
	}
}

func fallbacks(t *testing.T, in *servertest.Instance) float64 {
	t.Helper()
	mfs, err := in.Server.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == metrics.NameStateStoreFallbacks {
			var n float64
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
			return n
		}
	}
	return 0
}
