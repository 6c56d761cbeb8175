package soak_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// waitForLog waits until the log holds want; the minute is a guard
// against hangs only.
func waitForLog(t *testing.T, l *servertest.LockedBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(l.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q:\n%s", want, l.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSignalsToTheBinary runs the built server with an hour's drain delay
// and grace: SIGHUP reloads the config (a provider added serves, the
// stream in flight goes on; an invalid file is refused and the server
// goes on as it was); SIGTERM turns health NOT_SERVING
// (`llmrelay health` then fails) while new calls are still served; a
// second SIGTERM makes the process exit at once, with a non-zero status,
// cutting off the stream in flight.
func TestSignalsToTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary")
	}
	bin := buildServer(t)
	var logs servertest.LockedBuffer
	// The mock provider; an hour's drain and grace.
	addr, cfgPath, cmd, exited := startServer(t, bin, "drain_delay: 1h\nshutdown_grace: 1h\n", &logs)
	probe := func() error {
		out, err := exec.Command(bin, "health", "--config", cfgPath, "--timeout", "30s").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	}
	stillRunning := func(when string) {
		t.Helper()
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("llmrelay exited %s: %v\n%s", when, err, logs.String())
		default:
		}
	}

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitServing(t, conn)
	if err := probe(); err != nil {
		t.Errorf("llmrelay health while serving: %v", err)
	}
	client := llmrelayv1.NewLLMServiceClient(conn)
	// 1000 words, 100ms apart: in flight until the test ends it.
	inFlight, err := client.Generate(t.Context(), mockEcho(t, strings.Repeat("w ", 1000), 100))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inFlight.Recv(); err != nil {
		t.Fatal(err)
	}

	// The same config with a provider added, then one that does not
	// validate.
	original, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	reloadWith := func(content, wantLog string) {
		t.Helper()
		if err := os.WriteFile(cfgPath, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		waitForLog(t, &logs, wantLog)
		stillRunning("on SIGHUP")
	}
	spare := mockEcho(t, "after SIGHUP", 0)
	spare.Model = "spare/echo"
	if err := finishes(t.Context(), client, spare); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a provider not configured yet: %v, want INVALID_ARGUMENT", err)
	}
	reloadWith(string(original)+"providers:\n  - {name: mock, kind: mock}\n  - {name: spare, kind: mock}\n", "config reloaded")
	if err := finishes(t.Context(), client, spare); err != nil {
		t.Errorf("the provider added by SIGHUP: %v", err)
	}
	reloadWith(string(original)+"retry: {max_attempts_limit: 99}\n", "config reload refused")
	if err := finishes(t.Context(), client, spare); err != nil {
		t.Errorf("after a refused reload, the provider of the config in use: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, &logs, "draining")
	if err := probe(); err == nil {
		t.Error("llmrelay health succeeded during the drain, want a failure")
	}
	fresh, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := finishes(t.Context(), llmrelayv1.NewLLMServiceClient(fresh), mockEcho(t, "during the drain", 0)); err != nil {
		t.Errorf("a call on a new connection during the drain delay: %v", err)
	}
	stillRunning("during its drain delay")

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() <= 0 {
			t.Errorf("llmrelay exited with %v after a second SIGTERM, want a non-zero status", err)
		}
	case <-time.After(time.Minute): // a guard against hangs; drain and grace are an hour each
		t.Fatalf("llmrelay still running a minute after a second SIGTERM\n%s", logs.String())
	}
	for {
		if _, err := inFlight.Recv(); err != nil {
			if status.Code(err) != codes.Unavailable {
				t.Errorf("the stream in flight ended with %v, want UNAVAILABLE", err)
			}
			break
		}
	}
	if !strings.Contains(logs.String(), "stopped at once on a second signal") {
		t.Errorf("llmrelay did not say why it stopped:\n%s", logs.String())
	}
}

// mockEcho asks the mock provider to echo text, one word every delayMs.
func mockEcho(t *testing.T, text string, delayMs float64) *llmrelayv1.GenerateRequest {
	t.Helper()
	opts, err := structpb.NewStruct(map[string]any{"chunk_delay_ms": delayMs})
	if err != nil {
		t.Fatal(err)
	}
	return &llmrelayv1.GenerateRequest{
		Model:           "mock/echo",
		Messages:        []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: text}},
		ProviderOptions: opts,
	}
}

// finishes runs one call and returns an error unless it ends with its
// Final.
func finishes(ctx context.Context, client llmrelayv1.LLMServiceClient, req *llmrelayv1.GenerateRequest) error {
	stream, err := client.Generate(ctx, req)
	if err != nil {
		return err
	}
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return errors.New("the stream ended without a final")
		}
		if err != nil {
			return err
		}
		if ev.GetFinal() != nil {
			return nil
		}
	}
}
