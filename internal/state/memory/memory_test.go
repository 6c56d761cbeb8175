package memory_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

func TestConformance(t *testing.T) {
	statetest.RunAll(t, func(*testing.T) state.Store { return memory.New() })
}

func TestTargetHealthConformance(t *testing.T) {
	statetest.RunTargetHealth(t, func(*testing.T) state.TargetHealth { return memory.New() })
}

// TestRateOnInjectedClock checks the GCRA's arithmetic exactly, on a
// settable clock: a burst, then one call per interval, and RetryAfter to
// the nanosecond.
func TestRateOnInjectedClock(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := memory.New(memory.WithClock(func() time.Time { return now }))
	q := state.Quota{Rate: 0.5, Burst: 2} // a token every 2s
	tests := []struct {
		name      string
		advance   time.Duration
		allowed   bool
		wantAfter time.Duration
	}{
		{"burst 1", 0, true, 0},
		{"burst 2", 0, true, 0},
		{"past the burst", 0, false, 2 * time.Second},
		{"half an interval later", time.Second, false, time.Second},
		{"one interval later", time.Second, true, 0},
		{"at once again", 0, false, 2 * time.Second},
		{"after a long pause the burst is back, not more", time.Hour, true, 0},
		{"second of the burst", 0, true, 0},
		{"third", 0, false, 2 * time.Second},
	}
	for _, tc := range tests {
		now = now.Add(tc.advance)
		adm, err := s.Admit(t.Context(), "k", q)
		if err != nil {
			t.Fatal(err)
		}
		if adm.Allowed != tc.allowed || adm.RetryAfter != tc.wantAfter {
			t.Fatalf("%s: allowed %v retry after %v, want %v, %v", tc.name, adm.Allowed, adm.RetryAfter, tc.allowed, tc.wantAfter)
		}
	}
}
