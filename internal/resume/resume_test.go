package resume_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/engine/callctx"
	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/resume"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
)

func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

// harness is a Registry on a memory store, closed at cleanup.
type harness struct {
	r    *resume.Registry
	logs *memory.Store
}

func newHarness(t *testing.T, cfg resume.Config) *harness {
	t.Helper()
	if cfg.Grace == 0 {
		cfg.Grace = time.Hour
	}
	if cfg.MaxCallBytes == 0 {
		cfg.MaxCallBytes = 1 << 20
	}
	if cfg.MaxBufferedBytes == 0 {
		cfg.MaxBufferedBytes = 16 << 20
	}
	h := &harness{logs: memory.New()}
	h.r = resume.New(cfg, h.logs, nil, nil)
	t.Cleanup(h.r.Close)
	return h
}

// call is one started call and how it was cancelled.
type call struct {
	*resume.Call
	mu    sync.Mutex
	cause error
}

func (c *call) cancelled() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cause
}

func (h *harness) start(t *testing.T, id string) *call {
	t.Helper()
	c := &call{}
	rc, err := h.r.Start(t.Context(), id, resume.Owner{ID: "id", Name: "key"}, "fp", func(cause error) {
		c.mu.Lock()
		if c.cause == nil {
			c.cause = cause
		}
		c.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("Start(%s): %v", id, err)
	}
	c.Call = rc
	return c
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// reasonOf returns the ErrorInfo reason of err, an *apierr.Error or the
// status a log replays.
func reasonOf(err error) string {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae.Reason
	}
	for _, d := range status.Convert(err).Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return ei.GetReason()
		}
	}
	return ""
}

// replay reads call id after after to its end, returning the data sent.
func replay(t *testing.T, r *resume.Registry, id string, after uint64) ([]string, error) {
	t.Helper()
	var got []string
	err := r.Replay(t.Context(), id, resume.Owner{ID: "id", Name: "key"}, after, func(b []byte) error {
		got = append(got, string(b))
		return nil
	})
	return got, err
}

func TestDetachedCallWithoutReaderIsCancelled(t *testing.T) {
	h := newHarness(t, resume.Config{Grace: 50 * time.Millisecond})
	c := h.start(t, "call")
	c.Append(1, []byte("e1"))
	c.Detach()
	eventually(t, "the call cancelled", func() bool { return c.cancelled() != nil })
	if reasonOf(c.cancelled()) != resume.ReasonGraceExpired {
		t.Fatalf("cancelled with %v, want %s", c.cancelled(), resume.ReasonGraceExpired)
	}
	eventually(t, "its log deleted", func() bool { _, err := replay(t, h.r, "call", 0); return reasonOf(err) == resume.ReasonNotFound })
	eventually(t, "its bytes given back", func() bool { return h.r.Buffered() == 0 })
}

// TestReaderHoldKeepsTheCallRunning: a reader's hold on the log (from any
// replica) keeps a detached call running past the grace period; the call
// ends, and its log goes, only when nothing holds it.
func TestReaderHoldKeepsTheCallRunning(t *testing.T) {
	const grace = 50 * time.Millisecond
	h := newHarness(t, resume.Config{Grace: grace})
	c := h.start(t, "call")
	c.Append(1, []byte("e1"))
	if _, err := h.logs.KeepLog(t.Context(), "call", time.Hour); err != nil { // a reader elsewhere
		t.Fatal(err)
	}
	c.Detach()
	time.Sleep(10 * grace)
	if err := c.cancelled(); err != nil {
		t.Fatalf("cancelled (%v) while a reader held it", err)
	}
	c.End(2, nil)
	if got, err := replay(t, h.r, "call", 0); err != nil || len(got) != 1 {
		t.Fatalf("replay of the held call: %v, %v", got, err)
	}
	if err := c.cancelled(); err != nil {
		t.Fatalf("the ended call was cancelled: %v", err)
	}
}

// TestEndedCallIsKeptForTheGracePeriod runs on an injected clock (the
// memory store sharing it): on real time a grace period short enough for a
// test passed, on a loaded machine, before the replays that must find the
// call.
func TestEndedCallIsKeptForTheGracePeriod(t *testing.T) {
	const grace = time.Minute
	clock := newFakeClock()
	logs := memory.New(memory.WithClock(clock.Now))
	h := &harness{logs: logs, r: resume.New(resume.Config{Grace: grace, MaxCallBytes: 1 << 20, MaxBufferedBytes: 16 << 20}, logs, nil, nil, resume.WithClock(clock))}
	t.Cleanup(h.r.Close)
	c := h.start(t, "call")
	for s := uint64(1); s <= 3; s++ {
		c.Append(s, []byte("e"+strconv.FormatUint(s, 10)))
	}
	c.End(4, nil)
	c.Detach()
	// The writer stores the end and keeps the log for the grace period,
	// from now on the clock.
	eventually(t, "the call kept for the grace period", func() bool {
		left, err := logs.KeepLog(t.Context(), "call", 0)
		return err == nil && left == grace
	})
	got, err := replay(t, h.r, "call", 1)
	if err != nil || len(got) != 2 || got[0] != "e2" || got[1] != "e3" {
		t.Fatalf("replay after 1: %v, %v; want e2, e3", got, err)
	}
	if _, err := replay(t, h.r, "call", 3); err != nil {
		t.Fatalf("replay after the last event: %v, want the end", err)
	}
	if _, err := replay(t, h.r, "call", 4); status.Code(toStatus(err)) != codes.OutOfRange {
		t.Fatalf("replay past the end: %v, want OUT_OF_RANGE", err)
	}
	clock.Advance(grace - time.Second)
	if got, err := replay(t, h.r, "call", 0); err != nil || len(got) != 3 {
		t.Fatalf("replay at grace − 1s: %v, %v; want the call", got, err)
	}
	// The replays gave the call the grace period again, from when they
	// left (plus the renewal period of their hold, at most a third of it).
	clock.Advance(grace + grace/3)
	eventually(t, "the log dropped after the grace period", func() bool { return h.r.Buffered() == 0 })
	if _, err := replay(t, h.r, "call", 0); reasonOf(err) != resume.ReasonNotFound {
		t.Fatalf("replay after the grace period: %v, want %s", err, resume.ReasonNotFound)
	}
}

func toStatus(err error) error {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae.GRPCStatus().Err()
	}
	return err
}

// TestFailedCallReplaysItsStatus: a call that failed ends its log with its
// status, which a replay returns after the events.
func TestFailedCallReplaysItsStatus(t *testing.T) {
	h := newHarness(t, resume.Config{})
	c := h.start(t, "call")
	c.Append(1, []byte("e1"))
	c.End(2, &apierr.Error{Kind: apierr.Unavailable, Reason: apierr.ReasonRetriesExhausted, Message: "gave up"})
	got, err := replay(t, h.r, "call", 0)
	if len(got) != 1 || status.Code(err) != codes.Unavailable || status.Convert(err).Message() != "gave up" {
		t.Fatalf("replay: %v, %v; want e1 then the call's status", got, err)
	}
}

// TestStartOfAnIDKeptAlready: a call of the same key and request attaches;
// another key or request is REQUEST_ID_IN_USE; a failed call is replaced.
func TestStartOfAnIDKeptAlready(t *testing.T) {
	h := newHarness(t, resume.Config{})
	c := h.start(t, "call")
	start := func(key, fp string) error {
		owner := resume.Owner{ID: "id", Name: key}
		if key != "key" {
			owner.ID = "id-of-" + key
		}
		_, err := h.r.Start(t.Context(), "call", owner, fp, func(error) {})
		return err
	}
	if err := start("key", "fp"); !errors.Is(err, resume.ErrAttach) {
		t.Fatalf("the same call again: %v, want ErrAttach", err)
	}
	for _, kf := range [][2]string{{"other", "fp"}, {"key", "other"}} {
		if err := start(kf[0], kf[1]); reasonOf(err) != resume.ReasonRequestIDInUse {
			t.Fatalf("Start(%v): %v, want %s", kf, err, resume.ReasonRequestIDInUse)
		}
	}
	c.End(1, errors.New("boom"))
	eventually(t, "the failure logged", func() bool { _, err := replay(t, h.r, "call", 0); return err != nil })
	again, err := h.r.Start(t.Context(), "call", resume.Owner{ID: "id", Name: "key"}, "fp", func(error) {})
	if err != nil {
		t.Fatalf("Start after the call failed: %v, want a new call", err)
	}
	again.Append(1, []byte("new"))
	again.End(2, nil)
	if got, err := replay(t, h.r, "call", 0); err != nil || len(got) != 1 || got[0] != "new" {
		t.Fatalf("replay of the new call: %v, %v", got, err)
	}
}

// TestBoundsPerCallAndInTotal: a call's log ends RESUME_BUFFER_FULL at the
// event that would pass either bound (each call costing CallOverhead
// besides its events); a detached call is cancelled then.
func TestBoundsPerCallAndInTotal(t *testing.T) {
	const event = 100 // bytes
	const cost = event + resume.RecordOverhead
	const total = 2*resume.CallOverhead + 9*cost
	h := newHarness(t, resume.Config{MaxCallBytes: 5 * cost, MaxBufferedBytes: total})
	data := make([]byte, event)
	a := h.start(t, "a")
	for s := uint64(1); s <= 7; s++ {
		a.Append(s, data)
	}
	got, err := replay(t, h.r, "a", 0)
	if len(got) != 5 || reasonOf(err) != resume.ReasonBufferFull {
		t.Fatalf("a past its own bound: %d events, %v; want 5 and %s", len(got), err, resume.ReasonBufferFull)
	}
	if a.cancelled() != nil {
		t.Fatal("a call still read live was cancelled for its log")
	}
	b := h.start(t, "b")
	room := (total - h.r.Buffered()) / cost // what b's events may still take
	if room < 1 || room >= 5 {
		t.Fatalf("room for b: %d events; the test wants b to pass the total bound before its own", room)
	}
	b.Detach() // nobody reads b
	for s := uint64(1); s <= 5; s++ {
		b.Append(s, data)
	}
	got, err = replay(t, h.r, "b", 0)
	if int64(len(got)) != room || reasonOf(err) != resume.ReasonBufferFull {
		t.Fatalf("b past the total: %d events, %v; want %d and %s", len(got), err, room, resume.ReasonBufferFull)
	}
	if reasonOf(b.cancelled()) != resume.ReasonBufferFull {
		t.Fatalf("b, detached and full: cancelled with %v, want %s", b.cancelled(), resume.ReasonBufferFull)
	}
	// Each log's end is charged whatever the bounds: it is all that passes.
	if n, most := h.r.Buffered(), int64(total+2*(resume.RecordOverhead+1024)); n > most {
		t.Fatalf("buffered %d, want at most the total bound and two ends, %d", n, most)
	}
}

// TestReplayNoticesAGap: a log that misses events (a store that trimmed
// it) fails the replay with DATA_LOSS rather than skip them.
func TestReplayNoticesAGap(t *testing.T) {
	h := newHarness(t, resume.Config{})
	ctx := t.Context()
	if _, err := h.logs.CreateLog(ctx, "gap", state.LogInfo{Key: "key", Token: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := h.logs.AppendLog(ctx, "gap", "t", []state.LogRecord{{Seq: 1}, {Seq: 3}}); err != nil {
		t.Fatal(err)
	}
	got, err := replay(t, h.r, "gap", 0)
	if len(got) != 1 || reasonOf(err) != resume.ReasonEventsLost {
		t.Fatalf("replay of a log with a gap: %v, %v; want %s after event 1", got, err, resume.ReasonEventsLost)
	}
}

// TestReplayTailsTheLiveCall: a reader gets the events logged while it
// waits, in order, and the end.
func TestReplayTailsTheLiveCall(t *testing.T) {
	h := newHarness(t, resume.Config{})
	c := h.start(t, "call")
	c.Append(1, []byte("e1"))
	got := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		done <- h.r.Replay(t.Context(), "call", resume.Owner{ID: "id", Name: "key"}, 0, func(b []byte) error { got <- string(b); return nil })
	}()
	if e := <-got; e != "e1" {
		t.Fatalf("first %q", e)
	}
	for s := uint64(2); s <= 50; s++ {
		c.Append(s, []byte("e"+strconv.FormatUint(s, 10)))
	}
	c.End(51, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(got)
	n := 1
	for e := range got {
		n++
		if e != "e"+strconv.Itoa(n) {
			t.Fatalf("event %d is %q", n, e)
		}
	}
	if n != 50 {
		t.Fatalf("tailed %d events, want 50", n)
	}
}

// TestMemoryPerBufferedCallIsBounded: however much a call streams, what is
// kept of it stays within max_call_bytes: 40 calls streaming 1 MiB each
// with a bound of 64 KiB grow the heap by about 40 × 64 KiB, not 40 MiB.
func TestMemoryPerBufferedCallIsBounded(t *testing.T) {
	const calls, perCall, bound = 40, 1 << 20, 64 << 10
	const total = calls * (bound + resume.CallOverhead)
	h := newHarness(t, resume.Config{MaxCallBytes: bound, MaxBufferedBytes: total})
	before := heap()
	event := make([]byte, 1000)
	for i := range calls {
		c := h.start(t, "call"+strconv.Itoa(i))
		for s := uint64(1); s <= perCall/uint64(len(event)); s++ {
			c.Append(s, event)
		}
	}
	// Wait for the writers to store what they have.
	eventually(t, "the logs written", func() bool {
		for i := range calls {
			in, _, err := h.logs.ReadLog(t.Context(), "call"+strconv.Itoa(i), 0, 1, 0)
			if err != nil || in.End == state.LogOpen {
				return false
			}
		}
		return true
	})
	grown := heap() - before
	perCallHeap := grown / calls
	t.Logf("heap per buffered call: %d bytes (bound %d; unbounded it would be %d)", perCallHeap, bound, perCall)
	if perCallHeap > 2*bound {
		t.Fatalf("heap per buffered call %d bytes, want within twice the bound (%d)", perCallHeap, 2*bound)
	}
	// Each log's end (a status of a few hundred bytes) is charged whatever
	// the bounds.
	if b, most := h.r.Buffered(), int64(total+calls*(resume.RecordOverhead+512)); b > most {
		t.Fatalf("buffered %d, over the total bound and the ends (%d)", b, most)
	}
}

func heap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestDetach: a detached context keeps the values and the deadline, ends
// at the shutdown's cut-off, and not when its parent is cancelled.
func TestDetach(t *testing.T) {
	type key struct{}
	parent, cancelParent := context.WithTimeout(context.WithValue(context.Background(), key{}, "v"), time.Hour)
	cutoff, cut := context.WithCancel(context.Background())
	defer cut()
	r := resume.New(resume.Config{}, memory.New(), nil, nil, resume.WithCutoff(cutoff))
	defer r.Close()
	ctx, cancel := r.Detach(parent)
	defer cancel(nil)
	cancelParent()
	if ctx.Err() != nil {
		t.Fatal("the detached context ended with its parent")
	}
	if ctx.Value(key{}) != "v" {
		t.Fatal("the detached context lost a value")
	}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) < 50*time.Minute {
		t.Fatalf("deadline %v, %v; want the parent's", d, ok)
	}
	cut()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), apierr.ErrShuttingDown) {
		t.Fatalf("cause %v, want ErrShuttingDown", context.Cause(ctx))
	}

	short, stop := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer stop()
	plain := resume.New(resume.Config{}, memory.New(), nil, nil)
	defer plain.Close()
	d, cancel2 := plain.Detach(short)
	defer cancel2(nil)
	<-d.Done()
	if !errors.Is(d.Err(), context.DeadlineExceeded) {
		t.Fatalf("a detached context past its deadline: %v", d.Err())
	}
}

// TestDetachedCallsLetGoOfTheirStreams: once a detached call's cancel has
// run, nothing of the registry's keeps the stream's context (its values:
// the request, the call record) alive, while the process has many timers
// of an hour, as a replica keeping calls for their grace period has. A
// runtime timer for the detached deadline, stopped, stays in its
// processor's timer heap until the runtime clears it out, and held the
// whole chain of a call long over (a fifth to a quarter of them here).
func TestDetachedCallsLetGoOfTheirStreams(t *testing.T) {
	const calls = 2000
	r := resume.New(resume.Config{}, memory.New(), nil, nil)
	defer r.Close()
	type key struct{}
	var freed atomic.Int64
	for range calls {
		grace := time.AfterFunc(time.Hour, func() {})
		defer grace.Stop()
		req := new([4096]byte)
		runtime.AddCleanup(req, func(n *atomic.Int64) { n.Add(1) }, &freed)
		stream, end := context.WithCancel(context.WithValue(context.Background(), key{}, req))
		// The stream's deadline as the deadline link sets it.
		call, stop := callctx.WithDeadline(stream, time.Now().Add(5*time.Minute))
		_, cancel := r.Detach(call)
		cancel(nil)
		stop()
		end()
	}
	eventually(t, "every call's stream context let go", func() bool {
		runtime.GC()
		return freed.Load() == calls
	})
}

// TestKeptCallsCostWhatIsCharged: 10,000 resumable calls that ended and
// are kept for their grace period grow the heap by what the registry
// charges for them against max_buffered_bytes, and reports as
// llmrelay_resume_buffered_bytes (Buffered), within 20 %; and none keeps a
// goroutine.
func TestKeptCallsCostWhatIsCharged(t *testing.T) {
	const calls, events = 10_000, 12
	h := newHarness(t, resume.Config{MaxCallBytes: 1 << 20, MaxBufferedBytes: 1 << 30})
	goroutines := runtime.NumGoroutine()
	before := heap()
	for i := range calls {
		c := h.start(t, "call-"+strconv.Itoa(i))
		for s := uint64(1); s <= events; s++ {
			// Deltas of a few words, as a provider streams them; each
			// event is its own allocation, as the emitter's encoding is.
			c.Append(s, make([]byte, 20+(int(s)*i)%60))
		}
		c.End(events+1, nil)
		c.Detach()
	}
	eventually(t, "every log written to its end", func() bool {
		for i := range calls {
			in, _, err := h.logs.ReadLog(t.Context(), "call-"+strconv.Itoa(i), 0, 1, 0)
			if err != nil || in.End == state.LogOpen {
				return false
			}
		}
		return true
	})
	eventually(t, "the writers gone", func() bool { return runtime.NumGoroutine() <= goroutines+2 })
	grown, charged := heap()-before, h.r.Buffered()
	t.Logf("%d kept calls: heap grew %d bytes (%d per call), charged %d (%d per call)", calls, grown, grown/calls, charged, charged/calls)
	if d := float64(grown-charged) / float64(charged); d > 0.2 || d < -0.2 {
		t.Fatalf("heap grew %d bytes, charged %d: %.0f%% apart, want within 20%%", grown, charged, 100*d)
	}
}

// TestReplayAheadOfAnEndStoredLater: a client whose live stream went on
// past a log that ended early (RESUME_BUFFER_FULL), resuming before the
// writer stored that end, gets the end's status as soon as it is stored,
// not when its own deadline passes; and, no longer holding the log, lets
// it go after the grace period.
//
// The clock is injected (the memory store sharing it): on real time a grace
// period short enough for a test could pass before the Replay began, on a
// loaded machine, and the Replay found nothing.
func TestReplayAheadOfAnEndStoredLater(t *testing.T) {
	const event = 100
	const grace = time.Minute
	clock := newFakeClock()
	logs := memory.New(memory.WithClock(clock.Now))
	h := &harness{logs: logs, r: resume.New(resume.Config{MaxCallBytes: 3 * (event + resume.RecordOverhead), MaxBufferedBytes: 16 << 20, Grace: grace}, logs, nil, nil, resume.WithClock(clock))}
	t.Cleanup(h.r.Close)
	c := h.start(t, "call")
	data := make([]byte, event)
	for seq := uint64(1); seq <= 3; seq++ {
		c.Append(seq, data)
	}
	eventually(t, "3 events stored", func() bool {
		in, _, err := h.logs.ReadLog(t.Context(), "call", 0, 10, 0)
		return err == nil && in.Last == 3
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		// The client saw events 4 and 5 live: 4 overflowed the log (its
		// end takes seq 4), 5 went on the live stream.
		done <- h.r.Replay(ctx, "call", resume.Owner{ID: "id", Name: "key"}, 5, func([]byte) error { return nil })
	}()
	c.Append(4, data)
	c.Append(5, data)
	c.Detach()
	select {
	case err := <-done:
		if reasonOf(err) != resume.ReasonBufferFull {
			t.Fatalf("Replay ahead of the end: %v, want %s", err, resume.ReasonBufferFull)
		}
	case <-time.After(time.Minute):
		t.Fatal("Replay ahead of the end did not see the end stored after it began")
	}
	clock.Advance(grace + grace/3) // from when the Replay left, plus its hold's renewal period
	eventually(t, "the log dropped after its grace period", func() bool {
		_, _, err := h.logs.ReadLog(t.Context(), "call", 0, 1, 0)
		return errors.Is(err, state.ErrLogNotFound)
	})
}

// TestReplacedCallIsCancelledWhenDetached: a reader took a running call
// for lost and its client sent the request again, whose new call has the
// id's log now (simulated: the log deleted and created again under
// another token). The old call's writer finds that out at its next
// append: the call keeps nothing more and, with no stream reading it
// live, is cancelled as lost at once rather than running without a
// reader for the grace period. The new call's log is untouched.
func TestReplacedCallIsCancelledWhenDetached(t *testing.T) {
	h := newHarness(t, resume.Config{})
	ctx := t.Context()
	c := h.start(t, "call")
	c.Append(1, []byte("e1"))
	var old state.LogInfo
	eventually(t, "the first event stored", func() bool {
		in, recs, err := h.logs.ReadLog(ctx, "call", 0, 10, 0)
		old = in
		return err == nil && len(recs) == 1
	})
	if err := h.logs.DeleteLog(ctx, "call", old.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := h.logs.CreateLog(ctx, "call", state.LogInfo{Key: "key", Fingerprint: "fp", Token: "the new call"}); err != nil {
		t.Fatal(err)
	}
	c.Detach()
	if c.cancelled() != nil {
		t.Fatalf("cancelled before it knew: %v", c.cancelled())
	}
	c.Append(2, []byte("e2"))
	eventually(t, "the call cancelled", func() bool { return c.cancelled() != nil })
	if reasonOf(c.cancelled()) != resume.ReasonLost {
		t.Fatalf("cancelled with %v, want %s", c.cancelled(), resume.ReasonLost)
	}
	c.Append(3, []byte("e3"))
	if in, recs, err := h.logs.ReadLog(ctx, "call", 0, 10, 0); err != nil || in.Token != "the new call" || len(recs) != 0 {
		t.Fatalf("the new call's log: %+v, %v, %v; want it untouched", in, recs, err)
	}
	if got, want := h.r.Buffered(), int64(resume.CallOverhead); got != want {
		t.Fatalf("%d bytes buffered, want %d: the call's own, nothing of its events", got, want)
	}
}

// TestOwnerIsTheKeyNotItsName: a call belongs to its API key's ID, which a
// rename keeps: the key renamed still resumes and attaches to it, another
// key given the name does neither. A log written by an earlier version,
// which has no key ID, belongs to the key's name, as that version
// decided, so the calls it started stay resumable across an upgrade.
func TestOwnerIsTheKeyNotItsName(t *testing.T) {
	h := newHarness(t, resume.Config{})
	owner := resume.Owner{ID: "id-1", Name: "a"}
	c, err := h.r.Start(t.Context(), "call", owner, "fp", func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	c.Append(1, []byte("e1"))
	c.End(2, nil)
	// An earlier version's log: the key's name alone.
	if _, err := h.logs.CreateLog(t.Context(), "old", state.LogInfo{Key: "a", Fingerprint: "fp", Token: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := h.logs.AppendLog(t.Context(), "old", "t", []state.LogRecord{{Seq: 1, Data: []byte("o1")}, {Seq: 2, End: state.LogSucceeded}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		id     string
		owner  resume.Owner
		reason string // "" for the events
	}{
		{"the key", "call", owner, ""},
		{"the key renamed", "call", resume.Owner{ID: "id-1", Name: "b"}, ""},
		{"another key given its name", "call", resume.Owner{ID: "id-2", Name: "a"}, resume.ReasonKeyMismatch},
		{"no key", "call", resume.Owner{}, resume.ReasonKeyMismatch},
		{"an earlier version's log, by the key's name", "old", resume.Owner{ID: "id-1", Name: "a"}, ""},
		{"an earlier version's log, by another name", "old", resume.Owner{ID: "id-1", Name: "b"}, resume.ReasonKeyMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := h.r.Replay(t.Context(), tt.id, tt.owner, 0, func(b []byte) error { got = append(got, string(b)); return nil })
			if tt.reason == "" {
				if err != nil || len(got) != 1 {
					t.Fatalf("Replay: %q, %v; want its one event", got, err)
				}
				return
			}
			if reasonOf(err) != tt.reason || len(got) != 0 {
				t.Fatalf("Replay: %q, %v; want %s", got, err, tt.reason)
			}
		})
	}
	for _, tt := range []struct {
		owner resume.Owner
		want  error
	}{
		{resume.Owner{ID: "id-1", Name: "b"}, resume.ErrAttach},
	} {
		if _, err := h.r.Start(t.Context(), "call", tt.owner, "fp", func(error) {}); !errors.Is(err, tt.want) {
			t.Fatalf("Start by %v: %v, want %v", tt.owner, err, tt.want)
		}
	}
	if _, err := h.r.Start(t.Context(), "call", resume.Owner{ID: "id-2", Name: "a"}, "fp", func(error) {}); reasonOf(err) != resume.ReasonRequestIDInUse {
		t.Fatalf("Start by another key given the name: %v, want %s", err, resume.ReasonRequestIDInUse)
	}
}
