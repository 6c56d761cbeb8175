package resume_test

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/resume"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
)

// fakeClock is a resume.Clock that moves only when told: Advance runs the
// timers that fall due, in order, each at its own time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at   time.Time
	f    func()
	done bool // fired or stopped
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.done
		t.done = true
		return was
	}
}

// Advance moves the clock d forward, running each timer that falls due
// (synchronously, at its time, timers it sets included).
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	to := c.now.Add(d)
	for {
		sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		var next *fakeTimer
		for _, t := range c.timers {
			if !t.done && !t.at.After(to) {
				next = t
				break
			}
		}
		if next == nil {
			c.now = to
			c.mu.Unlock()
			return
		}
		next.done = true
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
		c.mu.Lock()
	}
}

// endCall starts call id, logs three events and its successful end, and
// detaches it, as a call whose client read it to its end does.
func endCall(t *testing.T, r *resume.Registry, id string) {
	t.Helper()
	c, err := r.Start(t.Context(), id, resume.Owner{ID: "id", Name: "key"}, "fp", func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	for s := uint64(1); s <= 3; s++ {
		c.Append(s, []byte("e"+strconv.FormatUint(s, 10)))
	}
	c.End(4, nil)
	c.Detach()
}

// TestEndedCallIsResumableForItsWholeGrace: on an injected clock, a call
// that ended is resumable at grace − 1s, and NOT_FOUND once grace passed
// (the memory store, sharing the clock).
func TestEndedCallIsResumableForItsWholeGrace(t *testing.T) {
	const grace = 60 * time.Second
	clock := newFakeClock()
	logs := memory.New(memory.WithClock(clock.Now))
	r := resume.New(resume.Config{Grace: grace, MaxCallBytes: 1 << 20, MaxBufferedBytes: 1 << 20}, logs, nil, nil, resume.WithClock(clock))
	t.Cleanup(r.Close)
	for _, id := range []string{"read", "unread"} {
		endCall(t, r, id)
		// The writer stores the end and keeps the log for the grace
		// period, from now on the clock.
		eventually(t, id+" kept for the grace period", func() bool {
			left, err := logs.KeepLog(t.Context(), id, 0)
			return err == nil && left == grace
		})
	}

	clock.Advance(grace - time.Second)
	if got, err := replay(t, r, "read", 0); err != nil || len(got) != 3 {
		t.Fatalf("Resume at grace − 1s: %v, %v; want the 3 events and the end", got, err)
	}
	clock.Advance(2 * time.Second)
	if _, err := replay(t, r, "unread", 0); reasonOf(err) != resume.ReasonNotFound {
		t.Fatalf("Resume of the call nobody read, at grace + 1s: %v, want %s", err, resume.ReasonNotFound)
	}
	// The reader gave its call the grace period again, from when it left
	// (plus the renewal period of its hold, at most a third of it).
	clock.Advance(grace + grace/3)
	if _, err := replay(t, r, "read", 0); reasonOf(err) != resume.ReasonNotFound {
		t.Fatalf("Resume a grace period after the last reader left: %v, want %s", err, resume.ReasonNotFound)
	}
	if n := r.Buffered(); n != 0 {
		t.Fatalf("buffered %d after both calls were dropped, want 0", n)
	}
}

// TestEndedCallIsResumableForItsWholeGraceOnRedis: the same on a real
// redis-server, where an ended log expires on Redis's clock: resumable at
// grace − 1s although the lease TTL (which a running log lives by) is far
// shorter, and NOT_FOUND after grace.
func TestEndedCallIsResumableForItsWholeGraceOnRedis(t *testing.T) {
	const grace = 6 * time.Second
	srv := redistest.Start(t)
	cfg := state.DefaultConfig().Redis
	cfg.Address, cfg.KeyPrefix = srv.Addr, "grace:"
	cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 5*time.Second
	cfg.LeaseTTL = time.Second
	store, err := redisstore.New(cfg, redisstore.Options{FailClosed: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	r := resume.New(resume.Config{Grace: grace, MaxCallBytes: 1 << 20, MaxBufferedBytes: 1 << 20}, store, nil, nil)
	t.Cleanup(r.Close)

	ended := time.Now() // the log's hold starts after this
	endCall(t, r, "read")
	endCall(t, r, "unread")
	time.Sleep(time.Until(ended.Add(grace - time.Second)))
	// Not found is wrong only if the Resume came back within the grace
	// period: a loaded machine may have slept, or read, past it.
	if got, err := replay(t, r, "read", 0); err != nil || len(got) != 3 {
		if took := time.Since(ended); took < grace {
			t.Fatalf("Resume at grace − 1s: %v, %v; want the 3 events and the end", got, err)
		} else {
			t.Logf("the Resume at grace − 1s came back %v after the call ended, past its grace period (%v): %v, not counted", took, grace, err)
		}
	}
	// Looked at without a hold: a Resume would keep the call wanted.
	eventually(t, "the unread call dropped after its grace period", func() bool {
		_, _, err := store.ReadLog(t.Context(), "unread", 0, 1, 0)
		return errors.Is(err, state.ErrLogNotFound)
	})
	if since := time.Since(ended); since < grace {
		t.Fatalf("the unread call was dropped %v after it ended, before its grace period (%v)", since, grace)
	}
	if _, err := replay(t, r, "unread", 0); reasonOf(err) != resume.ReasonNotFound {
		t.Fatalf("Resume after the grace period: %v, want %s", err, resume.ReasonNotFound)
	}
}

// flappingLogs reports the writer of every open log gone, while gone is
// set, to readers that find nothing new: a store whose writer's presence
// is missing (its replica reconnecting to Redis, or crashed).
type flappingLogs struct {
	*memory.Store
	gone      atomic.Bool
	goneReads atomic.Int64
}

func (f *flappingLogs) ReadLog(ctx context.Context, id string, after uint64, max int, wait time.Duration) (state.LogInfo, []state.LogRecord, error) {
	if !f.gone.Load() {
		return f.Store.ReadLog(ctx, id, after, max, wait)
	}
	in, recs, err := f.Store.ReadLog(ctx, id, after, max, 0)
	if err == nil && len(recs) == 0 && in.End == state.LogOpen {
		in.WriterGone = true
		f.goneReads.Add(1)
		time.Sleep(time.Millisecond) // as a blocking read would, briefly
	}
	return in, recs, err
}

func (f *flappingLogs) CreateLog(ctx context.Context, id string, info state.LogInfo) (state.LogInfo, error) {
	got, err := f.Store.CreateLog(ctx, id, info)
	if errors.Is(err, state.ErrLogExists) && got.End == state.LogOpen && f.gone.Load() {
		got.WriterGone = true
		f.goneReads.Add(1)
	}
	return got, err
}

// TestWriterGoneAMomentIsNotReplaced: the same request again (a client
// library's retry) finds the call's writer gone. Gone for a moment on the
// registry's clock, then back, the running call is not replaced: the
// request attaches to it. Gone for a second, it is replaced.
func TestWriterGoneAMomentIsNotReplaced(t *testing.T) {
	for _, tc := range []struct {
		name     string
		comeBack bool
	}{
		{name: "a moment", comeBack: true},
		{name: "a second"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			logs := &flappingLogs{Store: memory.New(memory.WithClock(clock.Now))}
			r := resume.New(resume.Config{Grace: time.Hour, MaxCallBytes: 1 << 20, MaxBufferedBytes: 1 << 20}, logs, nil, nil, resume.WithClock(clock))
			t.Cleanup(r.Close)
			if _, err := r.Start(t.Context(), "call", resume.Owner{ID: "id", Name: "key"}, "fp", func(error) {}); err != nil {
				t.Fatal(err)
			}
			logs.gone.Store(true)
			done := make(chan error, 1)
			go func() {
				_, err := r.Start(t.Context(), "call", resume.Owner{ID: "id", Name: "key"}, "fp", func(error) {})
				done <- err
			}()
			for logs.goneReads.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			if tc.comeBack {
				logs.gone.Store(false)
			}
			for len(done) == 0 { // until the wait's timer is set, and then past it
				clock.Advance(100 * time.Millisecond)
				time.Sleep(time.Millisecond)
			}
			err := <-done
			switch {
			case tc.comeBack && !errors.Is(err, resume.ErrAttach):
				t.Fatalf("the same request, its writer back: %v, want ErrAttach", err)
			case !tc.comeBack && err != nil:
				t.Fatalf("the same request, its writer gone a second: %v, want the call replaced", err)
			}
		})
	}
}

// TestWriterGoneAMomentIsNotLost: a reader tailing a quiet call sees its
// writer gone (its replica's subscription to Redis reconnecting), for less
// than a second on the registry's clock, then back: the reader does not
// take the call for lost and reads it to its end. Seen gone for a second,
// the call is lost.
func TestWriterGoneAMomentIsNotLost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gone    time.Duration
		wantErr string
	}{
		{name: "a moment", gone: 900 * time.Millisecond},
		{name: "a second", gone: time.Second, wantErr: resume.ReasonLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			logs := &flappingLogs{Store: memory.New(memory.WithClock(clock.Now))}
			// A short grace: the reader's waits for new records (a third
			// of it, on the wall clock) stay short. The call is never
			// detached: no grace timer runs.
			r := resume.New(resume.Config{Grace: 150 * time.Millisecond, MaxCallBytes: 1 << 20, MaxBufferedBytes: 1 << 20}, logs, nil, nil, resume.WithClock(clock))
			t.Cleanup(r.Close)
			c, err := r.Start(t.Context(), "call", resume.Owner{ID: "id", Name: "key"}, "fp", func(error) {})
			if err != nil {
				t.Fatal(err)
			}
			c.Append(1, []byte("e1"))
			sent := make(chan string, 10)
			done := make(chan error, 1)
			go func() {
				done <- r.Replay(t.Context(), "call", resume.Owner{ID: "id", Name: "key"}, 0, func(b []byte) error { sent <- string(b); return nil })
			}()
			if got := <-sent; got != "e1" {
				t.Fatalf("first event %q", got)
			}
			waitReads := func(n int64) {
				t.Helper()
				for want := logs.goneReads.Load() + n; logs.goneReads.Load() < want; {
					select {
					case err := <-done:
						t.Fatalf("the reader ended while the writer was gone: %v", err)
					default:
						time.Sleep(time.Millisecond)
					}
				}
			}
			logs.gone.Store(true)
			waitReads(3)
			clock.Advance(tc.gone)
			if tc.wantErr != "" {
				if err := <-done; reasonOf(err) != tc.wantErr {
					t.Fatalf("the reader ended with %v, want %s", err, tc.wantErr)
				}
				return
			}
			waitReads(3)
			logs.gone.Store(false)
			c.Append(2, []byte("e2"))
			c.End(3, nil)
			if err := <-done; err != nil {
				t.Fatalf("the reader ended with %v, want the call's success", err)
			}
			if got := <-sent; got != "e2" {
				t.Fatalf("then %q, want e2", got)
			}
		})
	}
}
