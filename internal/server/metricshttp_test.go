package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
)

// TestReadyzAndLivezFollowHealth: the HTTP probes on the metrics listener
// say what the gRPC health service says: /readyz turns 503 with the
// readiness service (a fail_closed store down) and at the first moment of
// a shutdown, while calls are still served through the drain delay;
// /livez only at shutdown.
func TestReadyzAndLivezFollowHealth(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = config.DefaultProviders()
	cfg.DrainDelay = time.Hour // ended by the test through Shutdown's context
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mlis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stopMetrics := s.serveMetrics(mlis)
	defer stopMetrics()
	glis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(glis) }()
	conn, err := grpc.NewClient(glis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	probe := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + mlis.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	want := func(path string, code int, body string) {
		t.Helper()
		if gotCode, gotBody := probe(path); gotCode != code || gotBody != body {
			t.Fatalf("GET %s: %d %q, want %d %q", path, gotCode, gotBody, code, body)
		}
	}
	want("/readyz", http.StatusOK, "SERVING")
	want("/livez", http.StatusOK, "SERVING")

	// What a fail_closed store that is down does to readiness.
	s.health.SetServingStatus(ReadinessService, healthpb.HealthCheckResponse_NOT_SERVING)
	want("/readyz", http.StatusServiceUnavailable, "NOT_SERVING")
	want("/livez", http.StatusOK, "SERVING")
	s.health.SetServingStatus(ReadinessService, healthpb.HealthCheckResponse_SERVING)
	want("/readyz", http.StatusOK, "SERVING")

	endDrain, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		s.Shutdown(endDrain)
		close(done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for code, _ := probe("/readyz"); code != http.StatusServiceUnavailable; code, _ = probe("/readyz") {
		if time.Now().After(deadline) {
			t.Fatal("/readyz still 200 30s into the drain")
		}
		time.Sleep(5 * time.Millisecond)
	}
	want("/readyz", http.StatusServiceUnavailable, "NOT_SERVING")
	want("/livez", http.StatusServiceUnavailable, "NOT_SERVING")
	// Still the drain delay: calls are served.
	stream, err := llmrelayv1.NewLLMServiceClient(conn).Generate(t.Context(), &llmrelayv1.GenerateRequest{
		Model: "mock/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("a call during the drain delay: %v", err)
		}
		if ev.GetFinal() != nil {
			break
		}
	}
	select {
	case <-done:
		t.Fatal("Shutdown returned before its drain delay ended")
	default:
	}
	cancel()
	<-done
	<-served
}
