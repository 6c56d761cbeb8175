package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestStreamStartDeadlineLetsGoOfTheCall: a streamed reply's start bound
// (an SDK's X-Stainless-Timeout) is an entry on the call contexts' shared
// timer, taken off as the call ends, so an ended call's exchange (its
// response writer, and the context chain behind it) can be freed. A
// runtime timer of its own, stopped, stays in its processor's timer heap
// until the runtime clears it out, and holds what it would have run: 3 or
// 4 of 2,000 such calls stayed held in each run with one.
func TestStreamStartDeadlineLetsGoOfTheCall(t *testing.T) {
	const calls = 2000
	var freed atomic.Int64
	for range calls {
		// Live timers beside them, as a server's other calls keep, so
		// that the runtime does not clear the stopped ones out at once.
		live := time.AfterFunc(time.Hour, func() {})
		defer live.Stop()
		x := newExchange(httptest.NewRecorder(), anthropic{}, replyInfo{}, true)
		runtime.AddCleanup(x, func(n *atomic.Int64) { n.Add(1) }, &freed)
		ctx, stop := x.clientDeadline(context.Background(), http.Header{HeaderTimeout: {"3600"}}, time.Now())
		if _, ok := ctx.Deadline(); !ok {
			t.Fatal("a streamed call's context has no deadline")
		}
		stop()
	}
	deadline := time.Now().Add(10 * time.Second)
	for freed.Load() < calls {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d ended calls' exchanges still held", calls-freed.Load(), calls)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
