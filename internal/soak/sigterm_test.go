package soak_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/freeport"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
)

// TestSIGTERMWithStreamsInFlight builds the server binary, runs it on
// loopback TCP and sends it SIGTERM with 100 streams in flight: health
// turns NOT_SERVING before any stream ends, new calls are refused, every
// stream finishes within the grace period, and the process exits cleanly.
func TestSIGTERMWithStreamsInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary")
	}
	bin := buildServer(t)
	// Streams hold after their first chunk until SIGTERM has turned health
	// NOT_SERVING: none ends before, however long starting them all takes.
	gate := make(chan struct{})
	upstream := openaitest.NewServer(openaitest.Options{Chunks: chunks, ChunkDelay: 50 * time.Millisecond, Gate: gate})
	t.Cleanup(upstream.Close)
	var stderr bytes.Buffer
	addr, _, cmd, exited := startServer(t, bin, fmt.Sprintf("shutdown_grace: 1m\nlog: {level: warn}\ndeadlines: {stream_idle: 10m, max_stream_idle: 10m}\nproviders:\n  - {name: openai, kind: openai, base_url: %q}\n", upstream.URL()), &stderr)

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitServing(t, conn)
	var ord order
	wctx, stopWatch := context.WithCancel(t.Context())
	defer stopWatch()
	notServing := watchHealth(t, wctx, conn, &ord)
	streams, wg := startStreams(t, t.Context(), llmrelayv1.NewLLMServiceClient(conn), 100, &ord)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	at := <-notServing
	stopWatch()
	if at == 0 {
		t.Fatal("health never turned NOT_SERVING")
	}
	close(gate)
	fresh, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if code := refusedSoon(t, llmrelayv1.NewLLMServiceClient(fresh)); code != codes.Unavailable {
		t.Errorf("a new call after SIGTERM ended %v, want UNAVAILABLE", code)
	}
	wg.Wait()
	for i, s := range streams {
		if s.endedAt < at {
			t.Errorf("stream %d ended before health turned NOT_SERVING", i)
		}
		if s.err != nil || s.events[len(s.events)-1].GetFinal().GetMessage().GetContent() != openaitest.Text(chunks) {
			t.Errorf("stream %d ended with %v after %d events, want its Final", i, s.err, len(s.events))
		}
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Errorf("llmrelay exited with %v after SIGTERM\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute): // a guard against hangs only
		t.Fatalf("llmrelay still running a minute after SIGTERM\n%s", stderr.String())
	}
}

// buildServer builds the server binary into a temporary directory and
// returns its path.
func buildServer(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the server with")
	}
	bin := filepath.Join(t.TempDir(), "llmrelay")
	build := exec.Command(gobin, "build", "-o", bin, "github.com/llmrelay/llmrelay/cmd/server")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServer runs the server binary with cfg plus a free loopback listen
// address and no metrics listener, and returns the address, the config's
// path, the process and a channel that gets its exit; cleanup kills it.
func startServer(t *testing.T, bin, cfg string, stderr io.Writer) (addr, cfgPath string, cmd *exec.Cmd, exited chan error) {
	t.Helper()
	addr = freeport.Addr(t)
	cfgPath = filepath.Join(t.TempDir(), "llmrelay.yaml")
	if err := os.WriteFile(cfgPath, []byte("listen: "+addr+"\nmetrics_listen: \"\"\n"+cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(bin, "--config", cfgPath)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	return addr, cfgPath, cmd, exited
}

// waitServing polls the health check until the server says SERVING.
func waitServing(t *testing.T, conn grpc.ClientConnInterface) {
	t.Helper()
	hc := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server is not SERVING: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
