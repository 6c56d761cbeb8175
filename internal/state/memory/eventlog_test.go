package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

func TestEventLogsConformance(t *testing.T) {
	statetest.RunEventLogs(t, func(*testing.T) state.EventLogs { return memory.New() })
}

// TestEventLogMaxRecordsDropsTheOldest: past its MaxRecords, a log keeps
// its newest records, so a reader sees the gap.
func TestEventLogMaxRecordsDropsTheOldest(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	if _, err := s.CreateLog(ctx, "id", state.LogInfo{Token: "t", MaxRecords: 3}); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 5; seq++ {
		if err := s.AppendLog(ctx, "id", "t", []state.LogRecord{{Seq: seq}}); err != nil {
			t.Fatal(err)
		}
	}
	in, recs, err := s.ReadLog(ctx, "id", 0, 10, 0)
	if err != nil || in.Last != 5 || len(recs) != 3 || recs[0].Seq != 3 {
		t.Fatalf("ReadLog: %+v, %+v, %v; want records 3 to 5", in, recs, err)
	}
}

// TestEventLogHoldOnInjectedClock: the hold runs on the store's clock.
func TestEventLogHoldOnInjectedClock(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	s := memory.New(memory.WithClock(func() time.Time { return now }))
	if _, err := s.CreateLog(ctx, "id", state.LogInfo{Token: "t"}); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.KeepLog(ctx, "id", 10*time.Second); left != 10*time.Second {
		t.Fatalf("hold %v, want 10s", left)
	}
	now = now.Add(7 * time.Second)
	if left, _ := s.KeepLog(ctx, "id", 0); left != 3*time.Second {
		t.Fatalf("hold after 7s: %v, want 3s", left)
	}
	now = now.Add(4 * time.Second)
	if left, _ := s.KeepLog(ctx, "id", 0); left != 0 {
		t.Fatalf("hold after 11s: %v, want 0", left)
	}
}
