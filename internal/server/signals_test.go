package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/logtest"
)

// TestSignals drives the signal loops with a channel in place of the
// process's signals: SIGHUP leaves the server serving; SIGTERM starts the
// drain (health NOT_SERVING, new calls still served); a second signal
// stops the server at once, long before the drain delay and grace are
// over, cutting off the call in flight.
func TestSignals(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.HTTPListen = "127.0.0.1:0"
	cfg.Providers = config.DefaultProviders()
	cfg.DrainDelay = time.Hour
	cfg.ShutdownGrace = time.Hour
	var logs logtest.Buffer
	s, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal) // unbuffered: a send returns once the loop took the signal
	ran := make(chan error, 1)
	go func() { ran <- s.serveOn(t.Context(), lis, sigs) }()
	t.Cleanup(func() { s.Shutdown(context.Background()) })

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	client := llmrelayv1.NewLLMServiceClient(conn)
	health := healthpb.NewHealthClient(conn)
	generate := func(text string, delayMs float64) (llmrelayv1.LLMService_GenerateClient, error) {
		opts, err := structpb.NewStruct(map[string]any{"chunk_delay_ms": delayMs})
		if err != nil {
			t.Fatal(err)
		}
		return client.Generate(t.Context(), &llmrelayv1.GenerateRequest{
			Model:           "mock/echo",
			Messages:        []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: text}},
			ProviderOptions: opts,
		})
	}
	final := func(text string) error {
		stream, err := generate(text, 0)
		if err != nil {
			return err
		}
		for {
			ev, err := stream.Recv()
			if err != nil {
				return err
			}
			if got := ev.GetFinal().GetMessage().GetContent(); got != "" {
				if got != text {
					return errors.New("final " + got)
				}
				return nil
			}
		}
	}
	inFlight, err := generate(strings.Repeat("w ", 1000), 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inFlight.Recv(); err != nil {
		t.Fatal(err)
	}
	healthIs := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		resp, err := health.Check(t.Context(), &healthpb.HealthCheckRequest{})
		if err != nil || resp.GetStatus() != want {
			t.Fatalf("health %v, %v; want %v", resp.GetStatus(), err, want)
		}
	}

	sigs <- syscall.SIGHUP
	healthIs(healthpb.HealthCheckResponse_SERVING)
	if err := final("after SIGHUP"); err != nil {
		t.Errorf("a call after SIGHUP: %v", err)
	}

	sigs <- syscall.SIGTERM
	waitNotServing(t, health)
	if err := final("during the drain"); err != nil {
		t.Errorf("a call during the drain delay: %v", err)
	}
	select {
	case err := <-ran:
		t.Fatalf("the server stopped during its drain delay: %v", err)
	default:
	}

	sigs <- syscall.SIGINT
	select {
	case err := <-ran:
		if !errors.Is(err, ErrStoppedAtOnce) {
			t.Errorf("after a second signal: %v, want ErrStoppedAtOnce", err)
		}
	case <-time.After(time.Minute): // a guard against hangs; drain and grace are an hour each
		t.Fatal("a second signal did not stop the server")
	}
	for {
		if _, err := inFlight.Recv(); err != nil {
			if status.Code(err) != codes.Unavailable {
				t.Errorf("the call in flight ended with %v, want UNAVAILABLE", err)
			}
			break
		}
	}
	for _, want := range []string{"config reload: the server has no config source", "signal received: shutting down", "second signal: stopping at once", "msg=stopped", "error=\"" + ErrStoppedAtOnce.Error()} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs.String())
		}
	}
}

// TestCleanStopLogsNoError: a server that drained and stopped within its
// grace ends its log with a "stopped" line that carries no error field (it
// said error=<nil>, which reads as a failure to whoever greps for errors);
// TestSignals shows the line of a stop cut short, which names its error.
func TestCleanStopLogsNoError(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.HTTPListen = ""
	cfg.Providers = config.DefaultProviders()
	var logs logtest.Buffer
	s, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal)
	ran := make(chan error, 1)
	go func() { ran <- s.serveOn(t.Context(), lis, sigs) }()
	sigs <- syscall.SIGTERM
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("a clean stop returned %v", err)
		}
	case <-time.After(time.Minute): // a guard against hangs
		t.Fatal("SIGTERM did not stop the server")
	}
	var stopped string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "msg=stopped") {
			stopped = line
		}
	}
	if stopped == "" || strings.Contains(stopped, "error=") {
		t.Errorf("the last line of a clean stop: %q, want msg=stopped without an error field:\n%s", stopped, logs.String())
	}
}

func TestProbeAddr(t *testing.T) {
	tests := []struct{ listen, want string }{
		{"127.0.0.1:50051", "127.0.0.1:50051"},
		{"0.0.0.0:50051", "127.0.0.1:50051"},
		{":50051", "127.0.0.1:50051"},
		{"[::]:50051", "127.0.0.1:50051"},
		{"10.1.2.3:50051", "10.1.2.3:50051"},
		{"llmrelay.internal:443", "llmrelay.internal:443"},
	}
	for _, tc := range tests {
		if got := probeAddr(tc.listen); got != tc.want {
			t.Errorf("probeAddr(%q) = %q, want %q", tc.listen, got, tc.want)
		}
	}
}

// waitNotServing watches the server's health until it reports
// NOT_SERVING (as it does first thing when it starts to shut down).
func waitNotServing(t *testing.T, health healthpb.HealthClient) {
	t.Helper()
	watch, err := health.Watch(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		st, err := watch.Recv()
		if err != nil {
			t.Fatalf("health watch: %v", err)
		}
		if st.GetStatus() == healthpb.HealthCheckResponse_NOT_SERVING {
			return
		}
	}
}
