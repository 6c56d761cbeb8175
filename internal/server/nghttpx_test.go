package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/freeport"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// nghttpxInFront starts a real llmrelay on loopback with cfg and nghttpx in
// front of it (cleartext HTTP/2 on both sides) with the given backend read
// timeout, the timeout that cuts a stream whose backend sent nothing for
// that long, and returns a client connected through the proxy.
func nghttpxInFront(t *testing.T, cfg *config.Config, readTimeout time.Duration) llmrelayv1.LLMServiceClient {
	t.Helper()
	bin := servertest.Program(t, "nghttpx", "nghttp2-proxy")
	relay, _ := servertest.Listen(t, cfg)

	front := freeport.For(t) // the proxy's frontend
	_, backendPort, _ := net.SplitHostPort(relay)
	errlog := filepath.Join(t.TempDir(), "nghttpx.log")
	cmd := exec.Command(bin, "--conf=/dev/null", "--single-process", "--workers=1",
		fmt.Sprintf("--frontend=127.0.0.1,%d;no-tls", front),
		fmt.Sprintf("--backend=127.0.0.1,%s;;proto=h2", backendPort),
		"--backend-read-timeout="+readTimeout.String(),
		"--errorlog-file="+errlog, "--accesslog-file=/dev/null", "--log-level=WARN")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	return proxyClient(t, cmd, front, func() string {
		log, _ := os.ReadFile(errlog)
		return string(log)
	})
}

// TestHeartbeatKeepsASilentStreamAliveThroughNghttpx reproduces, scaled
// down, the proxy: nghttpx's backend read timeout (60s by default)
// cut streams that were silent for longer, such as 90s of a model thinking
// or a long retry wait. Here the timeout is 6s and the silence 10s (a
// provider that thinks 10s before its first delta; a 10s retry hint), with
// a 0.5s heartbeat: about the same ratio of silence to timeout, at a scale
// a test can wait for, and 5.5s of slack for a heartbeat held up on a
// loaded machine.
// With the heartbeat the stream survives and ends with its final; without
// it, the proxy kills it. (nghttpx's read timeout is per backend
// connection: each case has a proxy and a relay of its own.)
func TestHeartbeatKeepsASilentStreamAliveThroughNghttpx(t *testing.T) {
	const (
		readTimeout = 6 * time.Second
		heartbeat   = 500 * time.Millisecond
	)
	silences := []struct {
		name    string
		options map[string]any // provider_options of mock/echo
	}{
		{"the model thinks 10s before its first delta", map[string]any{"chunk_delay_ms": 10000}},
		{"a 10s retry wait after the first attempt", map[string]any{"faults": []any{map[string]any{"status": 503, "retry_after_ms": 10000}}}},
	}
	for _, s := range silences {
		for _, beat := range []bool{true, false} {
			name := s.name + ", without a heartbeat"
			if beat {
				name = s.name + ", with a heartbeat"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				// A proxy and a relay of its own: nghttpx's read timeout is
				// per backend connection, which other streams would keep
				// busy.
				cfg := config.Default()
				cfg.MetricsListen = ""
				cfg.Providers = config.DefaultProviders()
				cfg.Heartbeat.MinInterval = 100 * time.Millisecond
				client := nghttpxInFront(t, cfg, readTimeout)
				req := withOptions(t, echoRequest("hello"), s.options)
				if beat {
					req.HeartbeatInterval = durationpb.New(heartbeat)
				}
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against hangs only
				defer cancel()
				final, heartbeats, err := collectThrough(ctx, client, req)
				switch {
				case beat && err != nil:
					t.Fatalf("with a heartbeat the stream failed through the proxy after %d heartbeats: %v", heartbeats, err)
				case beat && final.GetMessage().GetContent() != "hello":
					t.Fatalf("with a heartbeat: final %v, want hello", final)
				case beat && heartbeats == 0:
					t.Error("the stream survived without a single heartbeat: is the proxy's timeout in force?")
				case !beat && err == nil:
					t.Fatal("without a heartbeat the stream survived 10s of silence through a proxy with a 6s read timeout: the test proves nothing")
				case !beat:
					t.Logf("without a heartbeat the proxy cut the stream: %v", err)
				}
			})
		}
	}
}

// collectThrough reads a Generate call to its end and returns its final,
// how many heartbeats came, and the error that ended it.
func collectThrough(ctx context.Context, c llmrelayv1.LLMServiceClient, req *llmrelayv1.GenerateRequest) (*llmrelayv1.Final, int, error) {
	stream, err := c.Generate(ctx, req)
	if err != nil {
		return nil, 0, err
	}
	var final *llmrelayv1.Final
	beats := 0
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return final, beats, nil
		}
		if err != nil {
			return final, beats, err
		}
		if ev.GetHeartbeat() != nil {
			beats++
		}
		if f := ev.GetFinal(); f != nil {
			final = f
		}
	}
}
