package scaleout_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
)

// The keys of the resume tests.
const (
	resumeKeyA = "resume-a"
	resumeKeyB = "resume-b"
)

var resumePrefixes int

// resumeReplicas starts two replicas in front of up (provider "up")
// sharing redis under a prefix of their own.
func resumeReplicas(t *testing.T, redis *redistest.Server, up *openaitest.Server) (a, b *replica) {
	t.Helper()
	resumePrefixes++
	prefix := "resume" + strconv.Itoa(resumePrefixes) + ":"
	config := func(listen, metricsListen string) string {
		return fmt.Sprintf(`listen: %s
metrics_listen: %s
shutdown_grace: 5s
log: {level: warn}
providers:
  - {name: up, kind: openai, base_url: %s, models: [fake-model]}
auth:
  keys:
    - {name: a, sha256: %s, scopes: [generate], models: ["*"]}
    - {name: b, sha256: %s, scopes: [generate], models: ["*"]}
state:
  store: redis
  redis:
    address: %s
    key_prefix: %q
    lease_ttl: %s
    health_check_interval: 200ms
    read_timeout: 3s
    write_timeout: 3s
`, listen, metricsListen, up.URL(), auth.HashKey(resumeKeyA), auth.HashKey(resumeKeyB), redis.Addr, prefix, leaseTTL)
	}
	return startReplicaWith(t, "a", config), startReplicaWith(t, "b", config)
}

func resumable(id string) *llmrelayv1.GenerateRequest {
	return &llmrelayv1.GenerateRequest{
		Model:     "up/fake-model",
		Messages:  []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "go"}},
		RequestId: id,
		Resumable: proto.Bool(true),
	}
}

var readEvents = servertest.ReadAll

// wantWholeCall checks that before and evs, the events of a call read
// over two streams, are its whole reply of chunks deltas and its final,
// with no gap and no duplicate.
func wantWholeCall(t *testing.T, before, evs []*llmrelayv1.GenerateEvent, chunks int) {
	t.Helper()
	servertest.CheckWholeReply(t, append(append([]*llmrelayv1.GenerateEvent(nil), before...), evs...), openaitest.Text(chunks))
}

// TestResumeOnAnotherReplica is the done-when test across two replicas
// sharing redis-server: the client's connection to replica a is cut after
// 10 deltas; it resumes on replica b with after_sequence 10 and gets
// exactly the remaining deltas and the final, the call running on a all
// along; the upstream saw one request. Another key is denied there too,
// and the finished call replays from b.
func TestResumeOnAnotherReplica(t *testing.T) {
	redis := redistest.Start(t)
	const chunks = 25
	release := make(chan struct{})
	up := openaitest.Start(t, openaitest.Options{Chunks: chunks, Pause: &openaitest.Pause{After: 10, Until: release}})
	a, b := resumeReplicas(t, redis, up)
	proxy := servertest.StartProxy(t, a.addr)
	conn, err := grpc.NewClient(proxy.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := withKey(t.Context(), resumeKeyA)
	id := uuid.NewString()

	gs, err := llmrelayv1.NewLLMServiceClient(conn).Generate(ctx, resumable(id))
	if err != nil {
		t.Fatal(err)
	}
	var before []*llmrelayv1.GenerateEvent
	for len(before) < 10 {
		ev, err := gs.Recv()
		if err != nil {
			t.Fatalf("after %d events: %v", len(before), err)
		}
		before = append(before, ev)
	}
	proxy.Cut()
	if _, err := gs.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("the cut stream ended with %v, want UNAVAILABLE", err)
	}

	if _, err := readEvents(must(b.client.Resume(withKey(t.Context(), resumeKeyB), &llmrelayv1.ResumeRequest{RequestId: id, AfterSequence: 10}))); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("Resume on b with another key: %v, want PERMISSION_DENIED", err)
	}
	close(release)
	after, err := readEvents(must(b.client.Resume(ctx, &llmrelayv1.ResumeRequest{RequestId: id, AfterSequence: 10})))
	if err != nil {
		t.Fatalf("Resume on b: %v", err)
	}
	if len(after) == 0 || after[0].GetSequence() != 11 {
		t.Fatalf("Resume on b started with %v, want event 11", after)
	}
	wantWholeCall(t, before, after, chunks)
	if n := up.Requests(); n != 1 {
		t.Fatalf("the upstream saw %d requests, want 1", n)
	}
	replay, err := readEvents(must(b.client.Resume(ctx, &llmrelayv1.ResumeRequest{RequestId: id})))
	if err != nil {
		t.Fatalf("replay on b: %v", err)
	}
	wantWholeCall(t, nil, replay, chunks)
	if got := a.metric(t, "llmrelay_generate_calls_total", `code="OK"`); got != 1 {
		t.Fatalf("replica a counted %v successful calls, want the one it ran", got)
	}
	if got := b.metric(t, "llmrelay_generate_calls_total", ""); got != 0 {
		t.Fatalf("replica b counted %v calls, want none: it only read a's log", got)
	}
}

// goClientCall is a resumable call made by the Go client through a proxy
// to replica a, which a second replica b can take over.
type goClientCall struct {
	redis   *redistest.Server
	up      *openaitest.Server
	a, b    *replica
	proxy   *servertest.Proxy
	release chan struct{} // lets the upstream go on past its pause
	stream  *client.Stream
}

// startGoClientCall starts redis, an upstream of chunks chunks that
// pauses after pauseAfter until release, two replicas, and the Go
// client's resumable call through the proxy to a.
func startGoClientCall(t *testing.T, chunks, pauseAfter int) *goClientCall {
	t.Helper()
	g := &goClientCall{redis: redistest.Start(t), release: make(chan struct{})}
	g.up = openaitest.Start(t, openaitest.Options{Chunks: chunks, Pause: &openaitest.Pause{After: pauseAfter, Until: g.release}})
	g.a, g.b = resumeReplicas(t, g.redis, g.up)
	g.proxy = servertest.StartProxy(t, g.a.addr)
	c, err := client.New(g.proxy.Addr(), client.WithInsecure(), client.WithAPIKey(resumeKeyA))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if g.stream, err = c.Generate(t.Context(), resumable("")); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGoClientResumesOnAnotherReplica: the Go client, whose reconnection a
// load balancer sends to another replica, picks the call up there by
// itself.
func TestGoClientResumesOnAnotherReplica(t *testing.T) {
	const chunks = 25
	g := startGoClientCall(t, chunks, 10)
	up, b, proxy := g.up, g.b, g.proxy
	var text strings.Builder
	deltas := 0
	var resumed []uint64
	final, err := client.Collect(g.stream, &client.Hooks{
		OnDelta: func(d *llmrelayv1.Delta) {
			text.WriteString(d.GetText())
			if deltas++; deltas == 10 {
				proxy.SetTarget(b.addr) // the next connection lands on b
				proxy.Cut()
				close(g.release)
			}
		},
		OnResume: func(after uint64, _ error) { resumed = append(resumed, after) },
	})
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if len(resumed) != 1 || resumed[0] != 10 || text.String() != openaitest.Text(chunks) || final.GetMessage().GetContent() != openaitest.Text(chunks) {
		t.Fatalf("resumed after %v; deltas %q; final %q", resumed, text.String(), final.GetMessage().GetContent())
	}
	if n := up.Requests(); n != 1 {
		t.Fatalf("the upstream saw %d requests, want 1", n)
	}
	if got := b.metric(t, "llmrelay_resume_events_total", `event="resumed"`); got != 1 {
		t.Fatalf("replica b served %v resumes, want 1", got)
	}
}

// TestResumeWhenTheReplicaRunningTheCallDies: when the replica running a
// call is killed (kill -9), a reader on another replica gets the events it
// logged, then ABORTED RESUMABLE_CALL_LOST at once, long before the lease
// TTL (after which the log would simply be gone); a later Resume learns
// the same, and the same request sent again runs the call anew there.
func TestResumeWhenTheReplicaRunningTheCallDies(t *testing.T) {
	redis := redistest.Start(t)
	never := make(chan struct{})
	up := openaitest.Start(t, openaitest.Options{Chunks: 20, Pause: &openaitest.Pause{After: 5, Until: never}})
	a, b := resumeReplicas(t, redis, up)
	ctx, cancel := context.WithCancel(withKey(t.Context(), resumeKeyA))
	id := uuid.NewString()
	gs := must(a.client.Generate(ctx, resumable(id)))
	for range 5 {
		if _, err := gs.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	rs := must(b.client.Resume(withKey(t.Context(), resumeKeyA), &llmrelayv1.ResumeRequest{RequestId: id}))
	for range 5 { // what a logged before it died
		if _, err := rs.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	a.kill()
	_, err := readEvents(rs)
	if status.Code(err) != codes.Aborted || reason(err) != "RESUMABLE_CALL_LOST" {
		t.Fatalf("the reader on b ended with %v, want ABORTED RESUMABLE_CALL_LOST", err)
	}
	t.Logf("the reader learned the call was lost %v after its replica died (lease_ttl %v)", time.Since(start).Round(time.Millisecond), leaseTTL)
	evs, err := readEvents(must(b.client.Resume(withKey(t.Context(), resumeKeyA), &llmrelayv1.ResumeRequest{RequestId: id, AfterSequence: 5})))
	if len(evs) != 0 || reason(err) != "RESUMABLE_CALL_LOST" {
		t.Fatalf("a later Resume: %d events, %v; want RESUMABLE_CALL_LOST", len(evs), err)
	}
	// The same request again: the lost call makes way (the upstream, still
	// paused, shows the new call began).
	again := must(b.client.Generate(withKey(t.Context(), resumeKeyA), resumable(id)))
	if _, err := again.Recv(); err != nil {
		t.Fatalf("the same request sent again: %v", err)
	}
	if n := up.Requests(); n != 2 {
		t.Fatalf("the upstream saw %d requests, want the lost call's and the new one", n)
	}
}

// TestGoClientReissuesACallLostWithItsReplica: the Go client, allowed to
// (Hooks.OnReissue), sends the request of a call lost with its replica
// again, takes back what it showed, and gets the whole answer once.
func TestGoClientReissuesACallLostWithItsReplica(t *testing.T) {
	const chunks = 12
	g := startGoClientCall(t, chunks, 4)
	up, a, b, proxy := g.up, g.a, g.b, g.proxy
	var screen strings.Builder
	deltas, reissued := 0, 0
	final, err := client.Collect(g.stream, &client.Hooks{
		OnDelta: func(d *llmrelayv1.Delta) {
			screen.WriteString(d.GetText())
			if deltas++; deltas == 4 {
				proxy.SetTarget(b.addr) // the next connection lands on b
				a.kill()
			}
			if deltas == 6 {
				close(g.release) // the new call, on b, goes on
			}
		},
		OnReissue: func(cause error, discarded string) {
			reissued++
			if client.FromError(cause).Reason != client.ReasonResumableCallLost {
				t.Errorf("reissued after %v, want RESUMABLE_CALL_LOST", cause)
			}
			rest := strings.TrimSuffix(screen.String(), discarded)
			screen.Reset()
			screen.WriteString(rest)
		},
	})
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if reissued != 1 || screen.String() != openaitest.Text(chunks) || final.GetMessage().GetContent() != openaitest.Text(chunks) {
		t.Fatalf("reissued %d times; screen %q; final %q", reissued, screen.String(), final.GetMessage().GetContent())
	}
	if n := up.Requests(); n != 2 {
		t.Fatalf("the upstream saw %d requests, want the lost call's and the new one", n)
	}
}

// TestResumableCallOutlivesAnEmptyRedisRestart: redis-server restarts
// without its data in the middle of a resumable call, whose first 10
// events were stored. The replica running it puts its log back, from
// event 10; the Go client, cut off from it right after the restart,
// resumes on the other replica after event 10 (told to try again while
// the replicas put their logs back, not that the call is gone), and shows
// the whole reply once, the upstream asked once. Only a resume from
// before event 10 finds the events lost.
func TestResumableCallOutlivesAnEmptyRedisRestart(t *testing.T) {
	const chunks = 25
	g := startGoClientCall(t, chunks, 10)
	redis, up, b, proxy := g.redis, g.up, g.b, g.proxy
	id := g.stream.RequestID()
	stored := func() uint64 { // the last event a stored in the call's log
		rdb := redis.Client(t)
		keys, err := rdb.Keys(t.Context(), "*{r:"+id+"}:meta").Result()
		if err != nil || len(keys) != 1 {
			return 0
		}
		n, _ := rdb.HGet(t.Context(), keys[0], "last").Uint64()
		return n
	}
	var text strings.Builder
	deltas := 0
	var resumed []uint64
	final, err := client.Collect(g.stream, &client.Hooks{
		OnDelta: func(d *llmrelayv1.Delta) {
			text.WriteString(d.GetText())
			if deltas++; deltas == 10 {
				eventually(t, "the first 10 events stored", func() bool { return stored() == 10 })
				redis.Restart(t)
				proxy.SetTarget(b.addr) // the next connection lands on b
				proxy.Cut()
				close(g.release)
			}
		},
		OnResume: func(after uint64, _ error) { resumed = append(resumed, after) },
	})
	if err != nil {
		t.Fatalf("Collect: %v (resumed after %v)", err, resumed)
	}
	if len(resumed) == 0 || text.String() != openaitest.Text(chunks) || final.GetMessage().GetContent() != openaitest.Text(chunks) {
		t.Fatalf("resumed after %v; deltas %q; final %q", resumed, text.String(), final.GetMessage().GetContent())
	}
	for _, after := range resumed {
		if after != 10 {
			t.Fatalf("resumed after %v, want after 10 each time", resumed)
		}
	}
	if n := up.Requests(); n != 1 {
		t.Fatalf("the upstream saw %d requests, want 1", n)
	}
	_, err = readEvents(must(b.client.Resume(withKey(t.Context(), resumeKeyA), &llmrelayv1.ResumeRequest{RequestId: id})))
	if status.Code(err) != codes.DataLoss || reason(err) != "RESUME_EVENTS_LOST" {
		t.Fatalf("a Resume from the start: %v, want DATA_LOSS RESUME_EVENTS_LOST (events 1 to 10 went with Redis's data)", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestResumeReaderShutdownInterrupts: a replica that serves a Resume and
// shuts down ends it with RESUME_INTERRUPTED, not the call's end: the
// call runs on on its replica, and the client resumes it there.
func TestResumeReaderShutdownInterrupts(t *testing.T) {
	redis := redistest.Start(t)
	const chunks = 12
	release := make(chan struct{})
	up := openaitest.Start(t, openaitest.Options{Chunks: chunks, Pause: &openaitest.Pause{After: 4, Until: release}})
	a, b := resumeReplicas(t, redis, up)
	ctx := withKey(t.Context(), resumeKeyA)
	id := uuid.NewString()
	gctx, cancel := context.WithCancel(ctx)
	gs := must(a.client.Generate(gctx, resumable(id)))
	var first []*llmrelayv1.GenerateEvent
	for range 4 {
		first = append(first, must(gs.Recv()))
	}
	cancel()
	rs := must(b.client.Resume(ctx, &llmrelayv1.ResumeRequest{RequestId: id, AfterSequence: 2}))
	for want := uint64(3); want <= 4; want++ {
		if ev := must(rs.Recv()); ev.GetSequence() != want {
			t.Fatalf("Resume on b: event %d, want %d", ev.GetSequence(), want)
		}
	}
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, err := readEvents(rs)
	if status.Code(err) != codes.Unavailable || reason(err) != "RESUME_INTERRUPTED" {
		t.Fatalf("the Resume on the replica shutting down ended with %v, want UNAVAILABLE RESUME_INTERRUPTED", err)
	}
	close(release)
	rest, err := readEvents(must(a.client.Resume(ctx, &llmrelayv1.ResumeRequest{RequestId: id, AfterSequence: 4})))
	if err != nil {
		t.Fatalf("Resume on a after b went: %v", err)
	}
	wantWholeCall(t, first, rest, chunks)
}

// TestResumeFloodOfOneKeyStarvesNoOther (issue 23): 200 concurrent Resumes
// by one key, tailing a call on a real redis-server with the default Redis
// timeouts and pool, do not make another key's Generate or Resume fail:
// the flood's readers past resume.max_readers_per_key are refused
// TOO_MANY_STREAMS, and the ones admitted share the blocking reads with
// the other key's reader, which waits its turn instead of failing.
func TestResumeFloodOfOneKeyStarvesNoOther(t *testing.T) {
	redis := redistest.Start(t)
	const flood, chunks = 200, 12
	releaseA, releaseB := make(chan struct{}), make(chan struct{})
	upA := openaitest.Start(t, openaitest.Options{Chunks: chunks, Pause: &openaitest.Pause{After: 2, Until: releaseA}})
	upB := openaitest.Start(t, openaitest.Options{Chunks: chunks, Pause: &openaitest.Pause{After: 4, Until: releaseB}})
	r := startReplicaWith(t, "r", func(listen, metricsListen string) string {
		return fmt.Sprintf(`listen: %s
metrics_listen: %s
shutdown_grace: 5s
log: {level: warn}
providers:
  - {name: a, kind: openai, base_url: %s, models: [fake-model]}
  - {name: b, kind: openai, base_url: %s, models: [fake-model]}
auth:
  keys:
    - {name: a, sha256: %s, scopes: [generate], models: ["*"]}
    - {name: b, sha256: %s, scopes: [generate], models: ["*"]}
state:
  store: redis
  redis: {address: %s, key_prefix: "flood:"}
`, listen, metricsListen, upA.URL(), upB.URL(), auth.HashKey(resumeKeyA), auth.HashKey(resumeKeyB), redis.Addr)
	})
	request := func(provider, id string) *llmrelayv1.GenerateRequest {
		req := resumable(id)
		req.Model = provider + "/fake-model"
		return req
	}
	ctxA, ctxB := withKey(t.Context(), resumeKeyA), withKey(t.Context(), resumeKeyB)

	// a's call, paused after 2 deltas; its client leaves.
	idA := uuid.NewString()
	gctx, leave := context.WithCancel(ctxA)
	gs := must(r.client.Generate(gctx, request("a", idA)))
	for range 2 {
		must(gs.Recv())
	}
	leave()
	// The flood: 200 readers of a's call at once.
	type result struct {
		events int
		err    error
	}
	results := make(chan result, flood)
	for range flood {
		go func() {
			rs, err := r.client.Resume(ctxA, &llmrelayv1.ResumeRequest{RequestId: idA})
			if err != nil {
				results <- result{0, err}
				return
			}
			evs, err := readEvents(rs)
			results <- result{len(evs), err}
		}()
	}
	var refused []error
	eventually(t, "every reader of the flood admitted or refused", func() bool {
		for {
			select {
			case res := <-results:
				refused = append(refused, res.err)
				continue
			default:
			}
			break
		}
		return int(r.metric(t, "llmrelay_resume_events_total", `event="resumed"`))+len(refused) == flood
	})
	for _, err := range refused {
		if status.Code(err) != codes.ResourceExhausted || reason(err) != "TOO_MANY_STREAMS" {
			t.Fatalf("a reader of the flood refused with %v, want RESOURCE_EXHAUSTED TOO_MANY_STREAMS", err)
		}
	}
	admitted := flood - len(refused)
	t.Logf("the flood: %d readers admitted, %d refused", admitted, len(refused))
	if admitted != 32 {
		t.Fatalf("%d of the flood's readers admitted, want resume.max_readers_per_key (32)", admitted)
	}

	// b, meanwhile: a resumable Generate, and a Resume of it that tails it.
	idB := uuid.NewString()
	live := must(r.client.Generate(ctxB, request("b", idB)))
	var first []*llmrelayv1.GenerateEvent
	for range 4 {
		ev, err := live.Recv()
		if err != nil {
			t.Fatalf("b's Generate during the flood: %v", err)
		}
		first = append(first, ev)
	}
	reader := must(r.client.Resume(ctxB, &llmrelayv1.ResumeRequest{RequestId: idB, AfterSequence: 2}))
	close(releaseB)
	rest, err := readEvents(live)
	if err != nil {
		t.Fatalf("b's Generate during the flood: %v", err)
	}
	wantWholeCall(t, first, rest, chunks)
	resumed, err := readEvents(reader)
	if err != nil {
		t.Fatalf("b's Resume during the flood: %v", err)
	}
	wantWholeCall(t, first[:2], resumed, chunks)

	// The flood's admitted readers get a's whole call once it goes on.
	close(releaseA)
	for range admitted {
		if res := <-results; res.err != nil || res.events == 0 {
			t.Fatalf("an admitted reader of a's call: %d events, %v", res.events, res.err)
		}
	}
}
