package retry

import (
	"container/list"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// MaxHedges is the most hedges any call may start: the one bound of
// hedging, which the contract's HedgePolicy.max_hedges rule, the server's
// retry.hedging.max_hedges and a route's defaults.hedging.max_hedges
// follow (TestMaxHedgesIsTheContracts checks the proto's rule).
const MaxHedges = 2

// Hedging (gRFC A6's hedging, adapted to streams): when the attempt in
// progress has shown the client nothing for a while, the plan starts
// another attempt beside it, a hedge; the first attempt of the two to
// commit (to show the client something, see Attempt.Commit) wins, and the
// others are cancelled at once. Nothing of a loser was ever shown, so the
// client has nothing to discard. Run executes the races; Limits.Hedging
// reads a request's policy; Latencies keeps the times to first delta that
// an adaptive delay is derived from.

// HedgeTarget says where a call's hedges go. The values mirror the proto
// enum llmrelay.v1.HedgeTarget.
type HedgeTarget int32

// Hedge targets.
const (
	// HedgeSameTarget (and the zero value): every hedge goes to the target
	// of the attempt it races.
	HedgeSameTarget HedgeTarget = 1
	// HedgeNextTarget: the k-th hedge of an attempt goes to the k-th target
	// after that attempt's in the call's targets (its route's, then its
	// fallback_models), and to the attempt's own target when there is no
	// such target.
	HedgeNextTarget HedgeTarget = 2
)

// HedgeRequest is the hedging a request (or its route's default) asked
// for. The zero HedgeRequest asks for none.
type HedgeRequest struct {
	// Set says the request has a hedging policy at all.
	Set bool
	// After is the fixed hedging delay; 0 when unset.
	After time.Duration
	// Adaptive asks for the delay to follow the target's observed p95 time
	// to first delta (see Hedging.Delay).
	Adaptive bool
	// MaxHedges is how many hedges the call may start; nil takes 1, 0
	// turns hedging off (even a route's default).
	MaxHedges *int
	// Target says where hedges go.
	Target HedgeTarget
}

// Hedging is a call's hedging policy, as Limits.Hedging read it from the
// request: the plan starts a hedge when the attempt it races has committed
// nothing for Delay, and another one Delay later, up to Max hedges for the
// whole call. The zero Hedging hedges nothing.
type Hedging struct {
	// Max is how many hedges the plan may start in all (hedges of its
	// retries and re-asks included; each server-tools turn has a plan of
	// its own); 0 turns hedging off.
	Max int
	// After is the fixed hedging delay; 0 when the request set none (then
	// only an adaptive delay hedges).
	After time.Duration
	// Adaptive raises the delay to the target's observed p95 time to first
	// delta, once Latencies knows it.
	Adaptive bool
	// Floor is the server's shortest hedging delay (Limits.MinHedgeAfter);
	// an adaptive delay never goes below it.
	Floor time.Duration
	// Target says where hedges go.
	Target HedgeTarget
}

// HedgeQuantile is the quantile of the observed times to first delta an
// adaptive hedging delay follows: the p95, so that about one attempt in
// twenty is hedged.
const HedgeQuantile = 0.95

// Delay returns the hedging delay of an attempt to t: After; with
// Adaptive, the larger of After and t's p95 time to first delta (at least
// Floor) once lat knows it. 0 means no hedge: hedging is off, or it is
// adaptive only and lat knows too little of t yet.
func (h Hedging) Delay(lat *Latencies, t provider.Target) time.Duration {
	if h.Max <= 0 {
		return 0
	}
	d := h.After
	if h.Adaptive {
		if q, ok := lat.Quantile(t, HedgeQuantile); ok {
			d = max(d, q, h.Floor)
		}
	}
	return d
}

// Hedging returns a call's hedging policy: the request's, with max_hedges
// defaulted (unset: 1) and lowered to MaxHedges (0 turns hedging off on
// the server: requests then run without hedges). A request that asks for
// hedges without a delay (neither hedge_after nor adaptive), or with a
// hedge_after below MinHedgeAfter, gets a *provider.FieldError naming
// the field.
func (l Limits) Hedging(r HedgeRequest) (Hedging, error) {
	if !r.Set {
		return Hedging{}, nil
	}
	n := 1
	if r.MaxHedges != nil {
		n = *r.MaxHedges
	}
	if n <= 0 {
		return Hedging{}, nil
	}
	switch {
	case r.After == 0 && !r.Adaptive:
		return Hedging{}, &provider.FieldError{Field: "hedging.hedge_after", Description: "is required unless adaptive is set: it is how long an attempt may show nothing before a hedge starts"}
	case r.After < 0, r.After > 0 && r.After < l.MinHedgeAfter:
		return Hedging{}, &provider.FieldError{Field: "hedging.hedge_after", Description: fmt.Sprintf("%v is shorter than the server's floor of %v", r.After, l.MinHedgeAfter)}
	}
	h := Hedging{Max: min(n, l.MaxHedges), After: r.After, Adaptive: r.Adaptive, Floor: l.MinHedgeAfter, Target: r.Target}
	if h.Max <= 0 {
		return Hedging{}, nil
	}
	if h.Target != HedgeNextTarget {
		h.Target = HedgeSameTarget
	}
	return h, nil
}

// Latencies keeps, per target, the times to first delta of its recent
// attempts on this replica (the last LatencyWindow of them), for adaptive
// hedging delays. Run records every attempt that committed, from its start
// to its first delta, and every attempt cancelled because another attempt
// of its race committed first, with the time it had waited (a lower bound
// of its time to first delta, so that hedging does not hide the slow tail
// it cuts off); failed attempts are not recorded.
//
// It keeps the windows of MaxLatencyTargets targets at most, dropping the
// one observed least recently: at a provider that lists no models the
// model is the caller's string, so callers could otherwise grow it
// without bound (and a server keeps it across reloads).
//
// A nil *Latencies records nothing and knows nothing. Latencies is safe
// for concurrent use.
type Latencies struct {
	mu  sync.Mutex
	m   map[targetKey]*list.Element // of *window
	lru list.List                   // most recently observed first
}

// LatencyWindow is how many recent times to first delta Latencies keeps
// per target, and LatencyMinSamples how many it needs before it reports a
// quantile.
const (
	LatencyWindow     = 200
	LatencyMinSamples = 20
)

// MaxLatencyTargets bounds the targets whose windows Latencies keeps
// (about 1.7 KB each).
const MaxLatencyTargets = 512

// targetKey identifies a target without building its "<provider>/<model>"
// string.
type targetKey struct{ provider, model string }

func keyOf(t provider.Target) targetKey {
	k := targetKey{model: t.Model}
	if t.Entry != nil {
		k.provider = t.Entry.Config.Name
	}
	return k
}

// window is a ring of a target's recent samples.
type window struct {
	key     targetKey
	samples [LatencyWindow]time.Duration
	n, next int
}

// NewLatencies returns an empty record.
func NewLatencies() *Latencies { return &Latencies{m: map[targetKey]*list.Element{}} }

// Observe records one attempt to t that took d to its first delta.
func (l *Latencies) Observe(t provider.Target, d time.Duration) {
	if l == nil {
		return
	}
	k := keyOf(t)
	l.mu.Lock()
	defer l.mu.Unlock()
	el := l.m[k]
	if el == nil {
		el = l.lru.PushFront(&window{key: k})
		l.m[k] = el
		if l.lru.Len() > MaxLatencyTargets {
			delete(l.m, l.lru.Remove(l.lru.Back()).(*window).key)
		}
	} else {
		l.lru.MoveToFront(el)
	}
	w := el.Value.(*window)
	w.samples[w.next] = d
	w.next = (w.next + 1) % LatencyWindow
	w.n = min(w.n+1, LatencyWindow)
}

// Quantile returns the q-quantile (0 < q ≤ 1; nearest rank) of t's
// recorded times to first delta, and false while fewer than
// LatencyMinSamples are recorded.
func (l *Latencies) Quantile(t provider.Target, q float64) (time.Duration, bool) {
	if l == nil {
		return 0, false
	}
	var buf [LatencyWindow]time.Duration
	l.mu.Lock()
	var w *window
	if el := l.m[keyOf(t)]; el != nil {
		w = el.Value.(*window)
	}
	if w == nil || w.n < LatencyMinSamples {
		l.mu.Unlock()
		return 0, false
	}
	s := buf[:w.n]
	copy(s, w.samples[:w.n])
	l.mu.Unlock()
	slices.Sort(s)
	// Nearest rank: the smallest sample with at least q of the samples at
	// or below it.
	rank := int(math.Ceil(q*float64(len(s))-1e-9)) - 1
	return s[min(max(rank, 0), len(s)-1)], true
}
