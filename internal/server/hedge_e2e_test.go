package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/retry/retrytest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/telemetry/otlptest"
)

// The numbers: the first upstream request is slow to its first
// byte (2s in the issue; here it holds until its request is closed, so that
// no machine is slow enough to let it answer first), the second takes 50ms,
// and the call hedges after 200ms. The time to first delta this gives (the
// issue asks under 400ms) is measured by `make bench`, not asserted: see
// docs/hedging.md.
const (
	fastFirstByte = 50 * time.Millisecond
	hedgeAfter    = 200 * time.Millisecond
)

// recvWithin receives from ch; the deadline only guards against hangs.
func recvWithin[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not within 30s", what)
		var zero T
		return zero
	}
}

// goneRequest is an upstream request whose client went away before its
// response was complete (openaitest.Options.ClientGone).
type goneRequest struct {
	n     int
	wrote bool
}

// httpPool ignores the goroutines of idle HTTP connections, llmrelay's to
// the upstream and the upstream's own: they are the connection pool's,
// kept for the next call, not the call's.
var httpPool = []goleak.Option{
	goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
}

// TestHedgeWinsOverASlowUpstreamRequest is the done-when test of hedging,
// over the real wire: an OpenAI-compatible upstream whose first request
// holds back its first byte and whose second answers after 50ms, and
// hedge_after 200ms. The call asks for a 200ms hedging delay; once the
// first request is at the upstream, the test lets that delay pass (the
// retry timer is the test's) and the hedge's request arrives. The reply
// comes from the hedge, attempt 2; the slow request is closed (the
// upstream sees its client go away before it wrote anything); every event
// the client saw is the hedge's; and no goroutine of the call outlives it.
func TestHedgeWinsOverASlowUpstreamRequest(t *testing.T) {
	const chunks = 5
	arrived := make(chan int, 4)
	gone := make(chan goneRequest, 4)
	up := openaitest.Start(t, openaitest.Options{
		Chunks: chunks,
		FaultFor: func(n int, _ []byte) openaitest.Fault {
			arrived <- n
			if n == 0 {
				return openaitest.Fault{FirstByteDelay: time.Hour} // until its request is closed
			}
			return openaitest.Fault{FirstByteDelay: fastFirstByte}
		},
		ClientGone: func(n int, wrote bool) { gone <- goneRequest{n, wrote} },
	})
	timer := retrytest.NewManualTimer()
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL(), Models: []string{"fake-model"}}}
	in := servertest.Start(t, cfg, server.WithRetryTimer(timer))
	// Connect first: the connection's goroutines are not the call's.
	if _, err := healthpb.NewHealthClient(in.Conn).Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	ignore := goleak.IgnoreCurrent()

	req := upRequest(1)
	req.Hedging = &llmrelayv1.HedgePolicy{HedgeAfter: durationpb.New(hedgeAfter)}
	stream, err := in.Client.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if n := recvWithin(t, arrived, "the first attempt's request"); n != 0 {
		t.Fatalf("request %d arrived first", n)
	}
	w := timer.Next(t)
	if w.D != hedgeAfter {
		t.Fatalf("the call waits %v before hedging, want hedge_after, %v", w.D, hedgeAfter)
	}
	w.Fire() // hedge_after passed without a delta
	if n := recvWithin(t, arrived, "the hedge's request"); n != 1 {
		t.Fatalf("request %d arrived second", n)
	}
	events, err := servertest.ReadAll(stream)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	servertest.CheckWholeReply(t, events, openaitest.Text(chunks))
	for _, ev := range events {
		if ev.GetAttempt() != 2 {
			t.Fatalf("the client saw an event of attempt %d (%v); want the hedge's only, attempt 2", ev.GetAttempt(), ev)
		}
	}
	if final := events[len(events)-1].GetFinal(); final.GetAttempts() != 2 || final.GetHedges() != 1 {
		t.Fatalf("final attempts %d, hedges %d; want 2 and 1", final.GetAttempts(), final.GetHedges())
	}
	if g := recvWithin(t, gone, "the slow request closed"); g.n != 0 || g.wrote {
		t.Fatalf("request %d's client went away (after it wrote: %v); want the slow request, 0, before its first byte", g.n, g.wrote)
	}
	if got := up.Requests(); got != 2 {
		t.Fatalf("the upstream saw %d requests, want 2", got)
	}
	leaktest.VerifyNone(t, append(httpPool, ignore, goleak.IgnoreAnyFunction(offstack.WorkerFunction))...)
}

// TestTraceOfAHedgedCall: each attempt of a race has its span, the hedge
// marked, and says how it fared; the server span counts the hedges.
func TestTraceOfAHedgedCall(t *testing.T) {
	recv, tr := otlpTracing(t)
	in := servertest.Start(t, config.Default(), server.WithTracing(tr), server.WithRetryTimer(instantTimer{}))
	req := echoRequest("hello there")
	faults, err := structpb.NewStruct(map[string]any{"faults": []any{map[string]any{"first_delay_ms": 600000.0}}})
	if err != nil {
		t.Fatal(err)
	}
	req.ProviderOptions = faults
	req.Hedging = &llmrelayv1.HedgePolicy{HedgeAfter: durationpb.New(hedgeAfter)}
	if _, err := servertest.Collect(t.Context(), in.Client, req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	spans := exported(t, tr, recv, 3)
	var attempts []otlptest.Span
	var srv otlptest.Span
	for _, s := range spans {
		if _, ok := s.Attr("llmrelay.attempt"); ok {
			attempts = append(attempts, s)
		} else if _, ok := s.Attr("llmrelay.attempts"); ok {
			srv = s
		}
	}
	if len(attempts) != 2 {
		t.Fatalf("%d attempt spans, want 2", len(attempts))
	}
	for _, s := range attempts {
		n, _ := s.Attr("llmrelay.attempt")
		switch n.GetIntValue() {
		case 1:
			wantAttrs(t, "attempt 1", s, map[string]any{"llmrelay.hedge.outcome": "lost", "llmrelay.deltas": int64(0)})
			if _, ok := s.Attr("llmrelay.hedge"); ok {
				t.Error("attempt 1 is marked a hedge")
			}
		case 2:
			wantAttrs(t, "attempt 2", s, map[string]any{"llmrelay.hedge": true, "llmrelay.hedge.outcome": "won", "gen_ai.response.model": "echo"})
		}
	}
	wantAttrs(t, "server span", srv, map[string]any{"llmrelay.attempts": int64(2), "llmrelay.hedges": int64(1)})
}

// instantTimer ends every wait at once.
type instantTimer struct{}

func (instantTimer) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Now()
	return ch
}

// TestResumableHedgedCall: a call both resumable and hedged. Its event
// log is what its client is sent, the winner's events only: a resume
// after the client went away, and a replay from the start, hold nothing
// of the loser, whichever attempt wins, including when both answer at
// once. The upstream requests are held after three chunks, so that the
// client goes away mid-reply and the rest comes from the log.
func TestResumableHedgedCall(t *testing.T) {
	const chunks, before = 8, 3
	for _, tc := range []struct {
		name string
		// fault is what request n gets; hedgeArrived is closed when the
		// hedge's request (1) has arrived.
		fault func(n int, hedgeArrived <-chan struct{}) openaitest.Fault
		// winner is the attempt that must win; 0: either.
		winner uint32
	}{
		{"the hedge wins", func(n int, _ <-chan struct{}) openaitest.Fault {
			if n == 0 {
				return openaitest.Fault{FirstByteDelay: time.Hour} // until its request is closed
			}
			return openaitest.Fault{}
		}, 2},
		{"the first attempt wins after its hedge started", func(n int, hedgeArrived <-chan struct{}) openaitest.Fault {
			if n == 0 {
				<-hedgeArrived
				return openaitest.Fault{}
			}
			return openaitest.Fault{FirstByteDelay: time.Hour}
		}, 1},
		{"both answer at once", func(n int, hedgeArrived <-chan struct{}) openaitest.Fault {
			if n == 0 {
				<-hedgeArrived
			}
			return openaitest.Fault{}
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrived := make(chan int, 4)
			hedgeArrived := make(chan struct{})
			gone := make(chan goneRequest, 4)
			release := make(chan struct{})
			up := openaitest.Start(t, openaitest.Options{
				Chunks: chunks,
				Pause:  &openaitest.Pause{After: before, Until: release},
				FaultFor: func(n int, _ []byte) openaitest.Fault {
					arrived <- n
					if n == 1 {
						close(hedgeArrived)
					}
					return tc.fault(n, hedgeArrived)
				},
				ClientGone: func(n int, wrote bool) { gone <- goneRequest{n, wrote} },
			})
			timer := retrytest.NewManualTimer()
			in := servertest.Start(t, resumeConfig(up), server.WithRetryTimer(timer))

			id := uuid.NewString()
			req := resumableRequest(id)
			req.Hedging = &llmrelayv1.HedgePolicy{HedgeAfter: durationpb.New(hedgeAfter)}
			ctx, cancel := context.WithCancel(keyed(t.Context(), resumeKeyA))
			defer cancel()
			gs, err := in.Client.Generate(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if n := recvWithin(t, arrived, "the first attempt's request"); n != 0 {
				t.Fatalf("request %d arrived first", n)
			}
			timer.Next(t).Fire() // hedge_after passed without a delta
			if n := recvWithin(t, arrived, "the hedge's request"); n != 1 {
				t.Fatalf("request %d arrived second", n)
			}
			live := recvN(t, gs, before)
			winner := live[0].GetAttempt()
			if tc.winner != 0 && winner != tc.winner {
				t.Fatalf("attempt %d won, want %d", winner, tc.winner)
			}
			// The race is decided: the loser's request is closed.
			loser := recvWithin(t, gone, "the loser's request closed")
			if want := 2 - int(winner); loser.n != want {
				t.Fatalf("request %d was closed, want the loser's, %d", loser.n, want)
			}
			cancel() // the client goes away; the call runs on
			eventually(t, "the call detached", func() bool { return metricValue(in, metrics.NameResumeEvents, `event="detached"`) == "1" })
			close(release)

			resume := func(after uint64) []*llmrelayv1.GenerateEvent {
				t.Helper()
				rs, err := in.Client.Resume(keyed(t.Context(), resumeKeyA), &llmrelayv1.ResumeRequest{RequestId: id, AfterSequence: after})
				if err != nil {
					t.Fatal(err)
				}
				evs, err := readAll(rs)
				if err != nil {
					t.Fatalf("Resume after %d: %v", after, err)
				}
				return evs
			}
			rest := resume(before)
			servertest.CheckWholeReply(t, append(append([]*llmrelayv1.GenerateEvent(nil), live...), rest...), openaitest.Text(chunks))
			replay := resume(0)
			servertest.CheckWholeReply(t, replay, openaitest.Text(chunks))
			for i, ev := range live {
				if !proto.Equal(ev, replay[i]) {
					t.Fatalf("event %d: the client was sent %v, the log holds %v", i+1, ev, replay[i])
				}
			}
			for _, ev := range replay {
				if ev.GetAttempt() != winner || ev.GetWillRetry() != nil {
					t.Fatalf("the log holds %v; want attempt %d's events only", ev, winner)
				}
			}
			if final := replay[len(replay)-1].GetFinal(); final.GetAttempts() != 2 || final.GetHedges() != 1 {
				t.Fatalf("final attempts %d, hedges %d; want 2 and 1", final.GetAttempts(), final.GetHedges())
			}
			if got := up.Requests(); got != 2 {
				t.Fatalf("the upstream saw %d requests, want 2", got)
			}
		})
	}
}
