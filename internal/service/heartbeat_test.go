package service_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// heartbeatConfig allows heartbeats as short as the tests use.
func heartbeatConfig(cfg *config.Config) *config.Config {
	cfg.Heartbeat.MinInterval = 10 * time.Millisecond
	return cfg
}

// TestHeartbeatSendsHeadersAtOnceAndBeatsWhileTheProviderThinks: with a
// heartbeat, the response headers arrive before the provider has sent
// anything, and heartbeat events follow while it stays silent.
func TestHeartbeatSendsHeadersAtOnceAndBeatsWhileTheProviderThinks(t *testing.T) {
	p := newScripted(t, step{block: true}) // silent until cancelled
	in := servertest.Start(t, heartbeatConfig(scriptedConfig(t)))
	req := echo(t, input, "", nil)
	req.Model = "scripted/any"
	req.HeartbeatInterval = durationpb.New(20 * time.Millisecond)

	stream, err := in.Client.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Header(); err != nil { // blocks until the headers arrive
		t.Fatalf("headers: %v", err)
	}
	for i := range 3 {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
		if ev.GetHeartbeat() == nil || ev.GetSequence() != uint64(i+1) || ev.GetAttempt() != 0 {
			t.Fatalf("event %d is %v; want heartbeat %d of no attempt", i+1, ev, i+1)
		}
	}
	if len(p.Requests()) != 1 {
		t.Errorf("the provider received %d attempts, want 1 still running", len(p.Requests()))
	}
}

// TestHeartbeatDuringARetryWait: heartbeats fill the wait before a retry
// (here the provider's 1.5s retry hint, 15 heartbeat intervals), numbered
// with the other events, and none follows the final.
func TestHeartbeatDuringARetryWait(t *testing.T) {
	in := servertest.Start(t, heartbeatConfig(config.Default()))
	req := echo(t, input, `[{"status":503,"retry_after_ms":1500}]`, nil)
	req.HeartbeatInterval = durationpb.New(100 * time.Millisecond)
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i, ev := range events {
		if ev.GetSequence() != uint64(i+1) {
			t.Errorf("event %d has sequence %d", i+1, ev.GetSequence())
		}
		switch {
		case ev.GetHeartbeat() != nil:
			kinds = append(kinds, "heartbeat")
		case ev.GetWillRetry() != nil:
			kinds = append(kinds, "will_retry")
		case ev.GetDelta() != nil:
			kinds = append(kinds, "delta")
		case ev.GetFinal() != nil:
			kinds = append(kinds, "final")
		}
	}
	got := strings.Join(kinds, " ")
	wait := got[strings.Index(got, "will_retry"):strings.Index(got, "delta")]
	if !strings.Contains(wait, "heartbeat") {
		t.Errorf("events %s: want heartbeats between will_retry and the retry's deltas", got)
	}
	if !strings.HasSuffix(got, "delta final") {
		t.Errorf("events %s: want the final last, after the deltas", got)
	}
}

func TestHeartbeatFromTheServersConfig(t *testing.T) {
	cfg := heartbeatConfig(scriptedConfig(t))
	cfg.Heartbeat.Interval = 20 * time.Millisecond
	newScripted(t, step{block: true})
	in := servertest.Start(t, cfg)
	req := echo(t, input, "", nil)
	req.Model = "scripted/any"
	stream, err := in.Client.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := stream.Recv(); err != nil || ev.GetHeartbeat() == nil {
		t.Fatalf("first event %v, %v; want a heartbeat", ev, err)
	}
}

func TestHeartbeatBelowTheServersMinimumIsRefused(t *testing.T) {
	in := servertest.Start(t, nil) // heartbeat.min_interval 1s
	req := echo(t, input, "", nil)
	req.HeartbeatInterval = durationpb.New(100 * time.Millisecond)
	_, err := servertest.Collect(t.Context(), in.Client, req)
	st := wantStatus(t, err, codes.InvalidArgument, "INVALID_REQUEST", nil)
	if !strings.Contains(st.Message(), "heartbeat_interval: must be at least 1s") {
		t.Errorf("message %q", st.Message())
	}
}

// TestNoHeartbeatByDefault: a call that does not ask gets no heartbeat,
// even when it waits to retry.
func TestNoHeartbeatByDefault(t *testing.T) {
	in := servertest.Start(t, nil)
	events, err := servertest.Collect(t.Context(), in.Client, echo(t, input, `[{"status":503,"retry_after_ms":300}]`, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.GetHeartbeat() != nil {
			t.Errorf("a heartbeat without asking: %v", ev)
		}
	}
}
