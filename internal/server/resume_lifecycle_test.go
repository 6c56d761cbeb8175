package server_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
)

// TestResumedHeartbeatsKeepTheSequence: heartbeats are events of the call
// like the others: numbered by its emitter, logged while nobody reads the
// call, replayed and tailed by Resume, so the sequence a client sees
// across its streams has no gap (and a resumed stream stays alive
// through a proxy while the model is quiet).
func TestResumedHeartbeatsKeepTheSequence(t *testing.T) {
	const chunks = 8
	release := make(chan struct{})
	up := openaitest.Start(t, openaitest.Options{Chunks: chunks, Pause: &openaitest.Pause{After: 3, Until: release}})
	cfg := resumeConfig(up)
	cfg.Heartbeat.MinInterval = 20 * time.Millisecond
	in := servertest.Start(t, cfg)
	id := uuid.NewString()
	req := resumableRequest(id)
	req.HeartbeatInterval = durationpb.New(50 * time.Millisecond)

	ctx, cancel := context.WithCancel(keyed(t.Context(), resumeKeyA))
	gs, err := in.Client.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var before []*llmrelayv1.GenerateEvent
	for deltas := 0; deltas < 3; {
		ev, err := gs.Recv()
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, ev)
		if ev.GetDelta() != nil {
			deltas++
		}
	}
	cancel() // gone while the model is quiet: heartbeats go on, into the log

	rs, err := in.Client.Resume(keyed(t.Context(), resumeKeyA), &llmrelayv1.ResumeRequest{RequestId: id, AfterSequence: before[len(before)-1].GetSequence()})
	if err != nil {
		t.Fatal(err)
	}
	var after []*llmrelayv1.GenerateEvent
	for beats := 0; beats < 3; {
		ev, err := rs.Recv()
		if err != nil {
			t.Fatal(err)
		}
		after = append(after, ev)
		if ev.GetHeartbeat() != nil {
			if ev.GetAttempt() != 0 {
				t.Fatalf("a heartbeat of attempt %d", ev.GetAttempt())
			}
			beats++
		}
	}
	close(release)
	rest, err := readAll(rs)
	if err != nil {
		t.Fatal(err)
	}
	after = append(after, rest...)
	all := append(before, after...)
	var text string
	for i, ev := range all {
		if ev.GetSequence() != uint64(i+1) {
			t.Fatalf("event %d has sequence %d: a gap or a duplicate", i, ev.GetSequence())
		}
		text += ev.GetDelta().GetText()
	}
	if text != openaitest.Text(chunks) || all[len(all)-1].GetFinal() == nil {
		t.Fatalf("deltas %q, last %v", text, all[len(all)-1])
	}
}

// TestDetachedCallKeepsItsDeadline: a call outlives its stream, not its
// deadline: it ends DEADLINE_EXCEEDED when the client's deadline passes,
// and a resume then gets its events and that status.
func TestDetachedCallKeepsItsDeadline(t *testing.T) {
	never := make(chan struct{})
	up := openaitest.Start(t, openaitest.Options{Chunks: 10, Pause: &openaitest.Pause{After: 2, Until: never}})
	in := servertest.Start(t, resumeConfig(up)) // grace 60s: only the deadline ends the call
	// The client leaves after the call's first two deltas, before its
	// deadline: a loaded machine may spend the deadline before they came
	// (and the test failed there). Then the call is made again with twice
	// the time; the calls before it end at their deadlines too.
	var id string
	calls := 0
	for deadline := 2 * time.Second; ; deadline *= 2 {
		calls++
		id = uuid.NewString()
		ctx, cancel := context.WithTimeout(keyed(t.Context(), resumeKeyA), deadline)
		gs, err := in.Client.Generate(ctx, resumableRequest(id))
		for got := 0; err == nil && got < 2; got++ {
			_, err = gs.Recv()
		}
		cancel() // the client goes away
		if err == nil {
			break
		}
		if status.Code(err) != codes.DeadlineExceeded || deadline >= time.Minute {
			t.Fatalf("before the call's first 2 events (deadline %v): %v", deadline, err)
		}
		t.Logf("the deadline (%v) passed before the call's first 2 events: again with %v", deadline, 2*deadline)
	}
	eventually(t, "the call ended at its deadline", func() bool {
		return metricValue(in, metrics.NameCalls, `code="DeadlineExceeded"`) == strconv.Itoa(calls)
	})
	eventually(t, "the upstream request closed", func() bool { return up.OpenStreams() == 0 })
	rs, err := in.Client.Resume(keyed(t.Context(), resumeKeyA), &llmrelayv1.ResumeRequest{RequestId: id})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := readAll(rs)
	if status.Code(err) != codes.DeadlineExceeded || len(evs) != 2 {
		t.Fatalf("Resume: %d events, %v; want the 2 deltas and DEADLINE_EXCEEDED", len(evs), err)
	}
}

// TestDetachedCallHoldsItsStreamSlot: a detached call still counts
// against its key's max_concurrent_streams until it ends; Resume takes no
// slot of its own, so the key can pick its call up at its limit.
func TestDetachedCallHoldsItsStreamSlot(t *testing.T) {
	release := make(chan struct{})
	up := openaitest.Start(t, openaitest.Options{Chunks: 6, Pause: &openaitest.Pause{After: 2, Until: release}})
	cfg := resumeConfig(up)
	cfg.Auth.Keys[0].MaxConcurrentStreams = 1
	in := servertest.Start(t, cfg)
	id := uuid.NewString()
	ctx, cancel := context.WithCancel(keyed(t.Context(), resumeKeyA))
	gs, err := in.Client.Generate(ctx, resumableRequest(id))
	if err != nil {
		t.Fatal(err)
	}
	recvN(t, gs, 2)
	cancel()
	eventually(t, "the call detached", func() bool { return metricValue(in, metrics.NameResumeEvents, `event="detached"`) == "1" })
	_, err = readAllGenerate(keyed(t.Context(), resumeKeyA), in.Client, resumableRequest(uuid.NewString()))
	if status.Code(err) != codes.ResourceExhausted || errReason(err) != "TOO_MANY_STREAMS" {
		t.Fatalf("a second stream while the detached call runs: %v, want TOO_MANY_STREAMS", err)
	}
	rs, err := in.Client.Resume(keyed(t.Context(), resumeKeyA), &llmrelayv1.ResumeRequest{RequestId: id, AfterSequence: 2})
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	if _, err := readAll(rs); err != nil {
		t.Fatalf("Resume at the key's stream limit: %v", err)
	}
	eventually(t, "the slot freed once the call ended", func() bool {
		_, err := readAllGenerate(keyed(t.Context(), resumeKeyA), in.Client, resumableRequest(uuid.NewString()))
		return err == nil
	})
}

// TestShutdownDrainsADetachedCall: a detached call is one of the calls a
// shutdown waits for; when the grace period ends it is cut off with the
// others, its upstream request closed, and lost: it ends ABORTED,
// RESUMABLE_CALL_LOST (not SERVER_SHUTTING_DOWN), which its log keeps
// for a reader elsewhere.
func TestShutdownDrainsADetachedCall(t *testing.T) {
	never := make(chan struct{})
	up := openaitest.Start(t, openaitest.Options{Chunks: 10, Pause: &openaitest.Pause{After: 2, Until: never}})
	cfg := resumeConfig(up)
	cfg.ShutdownGrace = 500 * time.Millisecond
	addr, srv := servertest.Listen(t, cfg)
	stub := dial(t, addr)
	ctx, cancel := context.WithCancel(keyed(t.Context(), resumeKeyA))
	gs, err := stub.Generate(ctx, resumableRequest(uuid.NewString()))
	if err != nil {
		t.Fatal(err)
	}
	recvN(t, gs, 2)
	cancel()
	waitFor := func(name, match, want string) {
		eventually(t, name+" "+match, func() bool { return metricIn(srv.Metrics().Text(), name, match) == want })
	}
	waitFor(metrics.NameResumeEvents, `event="detached"`, "1")
	shutCtx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	srv.Shutdown(shutCtx) // returns once the call ended: the shutdown waited for it
	if got := metricIn(srv.Metrics().Text(), metrics.NameCalls, `code="Aborted"`); got != "1" {
		t.Fatalf("after the shutdown, %q calls ended ABORTED, want the detached one", got)
	}
	if got := metricIn(srv.Metrics().Text(), metrics.NameResumeEvents, `event="lost"`); got != "1" {
		t.Fatalf("after the shutdown, %q resumable calls lost, want the detached one", got)
	}
	// The upstream notices its request closed when its connection does.
	eventually(t, "the upstream request closed", func() bool { return up.OpenStreams() == 0 })
}

// TestResumableCallWhileTheStoreIsDown: with the redis store unreachable a
// resumable call is served as an ordinary one: its client gets the answer,
// and the headers do not say it is resumable.
func TestResumableCallWhileTheStoreIsDown(t *testing.T) {
	redis := redistest.Start(t)
	up := openaitest.Start(t, openaitest.Options{Chunks: 4})
	cfg := redisConfig(redis, "fail_open")
	cfg.Providers = resumeConfig(up).Providers
	in := servertest.Start(t, cfg)
	redis.Stop()
	waitReachable := func() bool {
		return metricValue(in, metrics.NameStateStoreUp, "") == "0"
	}
	eventually(t, "the store is seen down", waitReachable)
	var header metadata.MD
	gs, err := in.Client.Generate(metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer limited-key"), resumableRequest(uuid.NewString()))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := readAll(gs)
	if err != nil || evs[len(evs)-1].GetFinal().GetMessage().GetContent() != openaitest.Text(4) {
		t.Fatalf("the call while the store is down: %v", err)
	}
	header, _ = gs.Header()
	if len(header.Get("llmrelay-resumable")) != 0 {
		t.Fatalf("headers %v say the call is resumable; its log could not be kept", header)
	}
}

// TestResumeNeedsTheGenerateScope: Resume is opened by the generate scope,
// like Generate.
func TestResumeNeedsTheGenerateScope(t *testing.T) {
	up := openaitest.Start(t, openaitest.Options{Chunks: 2})
	cfg := resumeConfig(up)
	cfg.Auth.Keys = append(cfg.Auth.Keys, config.APIKey{Name: "lister", SHA256: auth.HashKey("lister-key"), Scopes: []string{"models.list"}, Models: []string{"*"}})
	in := servertest.Start(t, cfg)
	rs, err := in.Client.Resume(keyed(t.Context(), "lister-key"), &llmrelayv1.ResumeRequest{RequestId: uuid.NewString()})
	if err == nil {
		_, err = readAll(rs)
	}
	if status.Code(err) != codes.PermissionDenied || errReason(err) != "SCOPE_MISSING" {
		t.Fatalf("Resume with a models.list key: %v, want PERMISSION_DENIED SCOPE_MISSING", err)
	}
}
