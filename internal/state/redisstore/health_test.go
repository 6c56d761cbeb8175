package redisstore_test

import (
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

func TestTargetHealthConformance(t *testing.T) {
	srv := redistest.Start(t)
	statetest.RunTargetHealth(t, func(t *testing.T) state.TargetHealth {
		s := open(t, config(srv), redisstore.Options{FailClosed: true})
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func status(t *testing.T, h state.TargetHealth, key string, now time.Time) state.TargetStatus {
	t.Helper()
	st, err := h.TargetStatus(t.Context(), []string{key}, now)
	if err != nil || len(st) != 1 {
		t.Fatalf("TargetStatus(%s) = %v, %v", key, st, err)
	}
	return st[0]
}

func recordTarget(t *testing.T, h state.TargetHealth, key string, ok bool, now time.Time) state.TargetStatus {
	t.Helper()
	st, err := h.RecordTarget(t.Context(), key, ok, now, statetest.Policy)
	if err != nil {
		t.Fatalf("RecordTarget(%s, %v): %v", key, ok, err)
	}
	return st
}

// TestTargetHealthSharedByReplicas: an ejection one replica makes reaches
// the other within the refresh interval, failures on both count as one
// row, and a success on either restores the target for both.
func TestTargetHealthSharedByReplicas(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	a, b := open(t, cfg, redisstore.Options{}), open(t, cfg, redisstore.Options{})
	defer a.Close()
	defer b.Close()
	c := statetest.NewClock()
	const key = "openai/gpt"
	if st := status(t, b, key, c.Now()); st.Ejected {
		t.Fatalf("b: %+v before any failure", st)
	}
	// Failures on both replicas count as one row: the third ejects.
	recordTarget(t, a, key, false, c.Now())
	recordTarget(t, b, key, false, c.Now())
	if st := recordTarget(t, a, key, false, c.Now()); !st.JustEjected {
		t.Fatalf("third failure in a row across the replicas: %+v, want ejected", st)
	}
	poll(t, "replica b sees the ejection", 30*time.Second, func() bool { return status(t, b, key, c.Now()).Ejected })
	st := status(t, b, key, c.Now())
	if st.Ejections != 1 || !st.Until.Equal(c.Now().Add(statetest.Policy.BaseEjection)) {
		t.Errorf("b's view %+v, want a's ejection (1, until %v)", st, c.Now().Add(statetest.Policy.BaseEjection))
	}
	// More failures on b while it is ejected change nothing, and eject
	// nothing again.
	if st := recordTarget(t, b, key, false, c.Now()); st.JustEjected || st.Ejections != 1 {
		t.Errorf("a failure on b during a's ejection: %+v", st)
	}
	// A success on b restores it for both.
	if st := recordTarget(t, b, key, true, c.Now()); st != (state.TargetStatus{}) {
		t.Fatalf("success: %+v", st)
	}
	if st := status(t, b, key, c.Now()); st != (state.TargetStatus{}) {
		t.Fatalf("b after its own success: %+v, want healthy at once", st)
	}
	poll(t, "replica a sees the restoration", 30*time.Second, func() bool { return !status(t, a, key, c.Now()).Ejected })
	if st := status(t, a, key, c.Now()); st != (state.TargetStatus{}) {
		t.Errorf("a after b's success: %+v, want healthy", st)
	}
}

// TestTargetHealthAReplicaStartedLater: a replica that starts during an
// ejection sees it on its first read.
func TestTargetHealthAReplicaStartedLater(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	a := open(t, cfg, redisstore.Options{})
	defer a.Close()
	c := statetest.NewClock()
	for range statetest.Policy.Failures {
		recordTarget(t, a, "p/m", false, c.Now())
	}
	b := open(t, cfg, redisstore.Options{})
	defer b.Close()
	if st := status(t, b, "p/m", c.Now()); !st.Ejected || st.Ejections != 1 {
		t.Fatalf("a replica started during an ejection reads %+v, want it ejected", st)
	}
}

// TestTargetHealthWhileRedisIsDown: each replica goes on with its own
// outlier detection, in both failure modes, and shares again once Redis
// answers.
func TestTargetHealthWhileRedisIsDown(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	for _, failClosed := range []bool{false, true} {
		s := open(t, cfg, redisstore.Options{FailClosed: failClosed})
		defer s.Close()
		c := statetest.NewClock()
		key := "down/" + map[bool]string{false: "open", true: "closed"}[failClosed]
		recordTarget(t, s, key, false, c.Now())
		srv.Stop()
		waitDown(t, s)
		recordTarget(t, s, key, false, c.Now())
		if st := recordTarget(t, s, key, false, c.Now()); !st.JustEjected {
			t.Errorf("fail_closed=%v: the third failure in a row during the outage: %+v, want ejected locally", failClosed, st)
		}
		if st := status(t, s, key, c.Now()); !st.Ejected {
			t.Errorf("fail_closed=%v: status during the outage %+v, want ejected", failClosed, st)
		}
		srv.Restart(t)
		waitUp(t, s)
		// Redis had only the first failure, and lost it: the shared
		// health (healthy) replaces the local view.
		poll(t, "the shared health back", 30*time.Second, func() bool { return !status(t, s, key, c.Now()).Ejected })
	}
}
