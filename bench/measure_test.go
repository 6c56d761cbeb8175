package main

import (
	"context"
	"testing"
)

// TestLatencyRoundsShuffleWhoGoesBefore: every round streams each kind once,
// and over many rounds each kind is streamed right after each other kind
// about equally often, so no kind always carries the same other kind's
// wind-down.
func TestLatencyRoundsShuffleWhoGoesBefore(t *testing.T) {
	const nKinds, rounds = 4, 600
	var seq []int
	kinds := make([]*kind, nKinds)
	for i := range kinds {
		kinds[i] = &kind{stream: func(context.Context) result {
			seq = append(seq, i)
			return result{}
		}}
	}
	latencies(context.Background(), kinds, rounds)

	if len(seq) != nKinds*rounds {
		t.Fatalf("%d streams, want %d", len(seq), nKinds*rounds)
	}
	for r := range rounds {
		seen := map[int]bool{}
		for _, k := range seq[r*nKinds : (r+1)*nKinds] {
			seen[k] = true
		}
		if len(seen) != nKinds {
			t.Fatalf("round %d streams %v, not each kind once", r, seq[r*nKinds:(r+1)*nKinds])
		}
	}
	for i, k := range kinds {
		if len(k.lat) != rounds {
			t.Errorf("kind %d has %d results, want %d", i, len(k.lat), rounds)
		}
	}

	// after[a][b]: how often kind b was streamed right after kind a.
	var after [nKinds][nKinds]int
	for i := 1; i < len(seq); i++ {
		after[seq[i-1]][seq[i]]++
	}
	// Within a round, each of the k(k-1) ordered pairs of two kinds is
	// equally likely at each of its k-1 adjacent places; between two rounds
	// any of the k² pairs is (a kind may follow itself there).
	const k = float64(nKinds)
	mean := rounds*(k-1)/(k*(k-1)) + (rounds-1)/(k*k)
	for a := range nKinds {
		for b := range nKinds {
			if a == b {
				continue
			}
			if n := float64(after[a][b]); n < mean*0.75 || n > mean*1.25 {
				t.Errorf("kind %d followed kind %d %d times, want about %.0f: %v", b, a, after[a][b], mean, after)
			}
		}
	}
}
