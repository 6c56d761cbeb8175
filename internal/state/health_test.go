package state_test

import (
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
)

func TestEjectionGrowsToItsMax(t *testing.T) {
	p := state.OutlierPolicy{Failures: 5, BaseEjection: 30 * time.Second, MaxEjection: 100 * time.Second}
	for n, want := range map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 90 * time.Second, 4: 100 * time.Second, 50: 100 * time.Second} {
		if got := p.Ejection(n); got != want {
			t.Errorf("Ejection(%d) = %v, want %v", n, got, want)
		}
	}
}
