package soak_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// pacedRelay starts the server in-process with an `openai` provider whose
// streams hold after their first chunk until gate is closed, then take
// chunks × delay; and the given shutdown grace. The stream idle timeout is
// far longer than any test waits, so that held streams do not stall however
// long a loaded machine takes to start them all.
func pacedRelay(t *testing.T, delay, grace time.Duration, gate <-chan struct{}) (*servertest.Instance, *openaitest.Server) {
	t.Helper()
	t.Cleanup(func() {
		leaktest.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction(offstack.WorkerFunction))
	})
	upstream := openaitest.NewServer(openaitest.Options{Chunks: chunks, ChunkDelay: delay, Gate: gate})
	t.Cleanup(upstream.Close)
	t.Cleanup(httpx.CloseIdleConnections)
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.ShutdownGrace = grace
	cfg.Deadlines.StreamIdle, cfg.Deadlines.MaxStreamIdle = 10*time.Minute, 10*time.Minute
	cfg.Deadlines.Default, cfg.Deadlines.Max = 20*time.Minute, 20*time.Minute
	cfg.Providers = []provider.Config{{Name: "openai", Kind: "openai", BaseURL: upstream.URL()}}
	return servertest.Start(t, cfg), upstream
}

// order hands out positions in which things happened.
type order struct{ n atomic.Int64 }

func (o *order) next() int64 { return o.n.Add(1) }

// stream is one call in flight: started once its first delta arrived,
// ended with its events and status, and the position of its end.
type stream struct {
	started   chan struct{}
	deltaSeen bool
	events    []*llmrelayv1.GenerateEvent
	err       error
	endedAt   int64
}

// heldRequest is call i's request, with the server's stream idle timeout
// (pacedRelay's, far longer than streams are held) instead of the soak's.
func heldRequest(i int) *llmrelayv1.GenerateRequest {
	req := request(i, 1)
	req.StreamIdleTimeout = nil
	return req
}

// startStreams starts n calls on client and returns them once every one
// has received its first delta (or ended).
func startStreams(t *testing.T, ctx context.Context, client llmrelayv1.LLMServiceClient, n int, ord *order) ([]*stream, *sync.WaitGroup) {
	t.Helper()
	streams := make([]*stream, n)
	var wg sync.WaitGroup
	for i := range streams {
		s := &stream{started: make(chan struct{})}
		streams[i] = s
		wg.Go(func() {
			defer func() { s.endedAt = ord.next() }()
			gs, err := client.Generate(ctx, heldRequest(i))
			if err != nil {
				s.err = err
				close(s.started)
				return
			}
			for {
				ev, err := gs.Recv()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						s.err = err
					}
					select {
					case <-s.started:
					default:
						close(s.started)
					}
					return
				}
				s.events = append(s.events, ev)
				// Started once the upstream stream is open and held: a
				// will_retry (a connection refused on a loaded machine, say)
				// comes before that.
				if ev.GetDelta() != nil && !s.deltaSeen {
					s.deltaSeen = true
					close(s.started)
				}
			}
		})
	}
	for i, s := range streams {
		select {
		case <-s.started:
		case <-time.After(30 * time.Second):
			t.Fatalf("stream %d did not start", i)
		}
	}
	return streams, &wg
}

// watchHealth watches the server's overall health and returns the
// position at which it first turned NOT_SERVING (0 if it never did), once
// it has, or once ctx ends.
func watchHealth(t *testing.T, ctx context.Context, conn grpc.ClientConnInterface, ord *order) <-chan int64 {
	t.Helper()
	w, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := w.Recv()
	if err != nil || first.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health before shutdown: %v, %v; want SERVING", first, err)
	}
	at := make(chan int64, 1)
	go func() {
		defer close(at)
		for {
			resp, err := w.Recv()
			if err != nil {
				return
			}
			if resp.GetStatus() == healthpb.HealthCheckResponse_NOT_SERVING {
				at <- ord.next()
				return
			}
		}
	}()
	return at
}

// TestShutdownUnderLoad shuts the server down with 100 streams in flight:
// health turns NOT_SERVING before any of them ends, new calls are refused,
// and every stream either finishes within the grace period or ends
// UNAVAILABLE (SERVER_SHUTTING_DOWN); none hangs.
func TestShutdownUnderLoad(t *testing.T) {
	const inFlight = 100
	tests := []struct {
		name         string
		delay, grace time.Duration
		finish       bool // the streams are let go once shutdown began
	}{
		// Let go once health turned NOT_SERVING: 20 chunks 50ms apart, one
		// second, far within the grace.
		{"streams finish within the grace period", 50 * time.Millisecond, time.Minute, true},
		// Held until the grace period ends.
		{"streams past the grace period end UNAVAILABLE", 50 * time.Millisecond, 300 * time.Millisecond, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gate := make(chan struct{})
			in, _ := pacedRelay(t, tc.delay, tc.grace, gate)
			var ord order
			wctx, stopWatch := context.WithCancel(t.Context())
			defer stopWatch()
			notServing := watchHealth(t, wctx, in.Conn, &ord)
			streams, wg := startStreams(t, t.Context(), in.Client, inFlight, &ord)

			shutdown := make(chan struct{})
			go func() {
				defer close(shutdown)
				in.Server.Shutdown(context.Background())
			}()
			at := <-notServing
			stopWatch() // the watch is a call in flight too
			if at == 0 {
				t.Fatal("health never turned NOT_SERVING")
			}
			if tc.finish {
				close(gate)
			}
			refused := refusedSoon(t, llmrelayv1.NewLLMServiceClient(in.Dial(t)))
			select {
			case <-shutdown:
			case <-time.After(time.Minute):
				t.Fatal("Shutdown did not return") // a guard against hangs only
			}
			wg.Wait()

			if refused != codes.Unavailable {
				t.Errorf("a new call during shutdown ended %v, want UNAVAILABLE", refused)
			}
			finished, cut := 0, 0
			for i, s := range streams {
				if s.endedAt < at {
					t.Errorf("stream %d ended (at %d) before health turned NOT_SERVING (at %d)", i, s.endedAt, at)
				}
				st, _ := status.FromError(s.err)
				switch {
				case s.err == nil && s.events[len(s.events)-1].GetFinal().GetMessage().GetContent() == openaitest.Text(chunks):
					finished++
				case st.Code() == codes.Unavailable && reason(st) == apierr.ReasonShuttingDown:
					cut++
				default:
					t.Errorf("stream %d ended with %v after %d events, want a Final or UNAVAILABLE %s", i, s.err, len(s.events), apierr.ReasonShuttingDown)
				}
			}
			if tc.finish && finished != inFlight {
				t.Errorf("%d of %d streams finished, want all within the grace period", finished, inFlight)
			}
			if !tc.finish && cut != inFlight {
				t.Errorf("%d of %d streams were cut off with UNAVAILABLE, want all", cut, inFlight)
			}
		})
	}
}

// refusedSoon makes new calls on a new connection until one is refused,
// and returns its code: once the server is shutting down, new calls fail at
// once (the few made in the instant between health turning NOT_SERVING and
// the server closing its listener still succeed, which is fine). It gives
// up, with codes.OK, after a guard period.
func refusedSoon(t *testing.T, client llmrelayv1.LLMServiceClient) codes.Code {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		_, err := servertest.Collect(ctx, client, heldRequest(-1))
		cancel()
		if err != nil {
			return status.Code(err)
		}
	}
	return codes.OK
}

// TestClientCancellationClosesUpstreamStreams cancels 500 streams half-way
// and checks that llmrelay closes every one of the upstream streams.
func TestClientCancellationClosesUpstreamStreams(t *testing.T) {
	const n = 500
	// Held after their first chunk: none ends before all have started,
	// however loaded the machine.
	in, upstream := pacedRelay(t, 100*time.Millisecond, time.Minute, make(chan struct{}))
	var ord order
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	streams, wg := startStreams(t, ctx, in.Client, n, &ord)
	if open := upstream.OpenStreams(); open != n {
		for i, s := range streams {
			if s.err != nil {
				t.Errorf("stream %d ended before the cancel: %v after %d events", i, s.err, len(s.events))
				break
			}
		}
		t.Fatalf("%d upstream streams open, want %d", open, n)
	}
	cancelled := time.Now()
	cancel()
	for upstream.OpenStreams() > 0 && time.Since(cancelled) < 30*time.Second { // a guard against hangs only
		time.Sleep(time.Millisecond)
	}
	closed := time.Since(cancelled)
	if open := upstream.OpenStreams(); open > 0 {
		t.Fatalf("%d upstream streams still open after the clients cancelled", open)
	}
	wg.Wait()
	for i, s := range streams {
		if status.Code(s.err) != codes.Canceled {
			t.Errorf("stream %d ended with %v, want CANCELLED", i, s.err)
		}
	}
	t.Logf("%d streams cancelled half-way: every upstream stream closed %v after the cancel", n, closed.Round(time.Millisecond))
}
