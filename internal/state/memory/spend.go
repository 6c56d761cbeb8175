package memory

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
)

var _ state.Spending = (*Store)(nil)

// spendBook is the store's budget counters and usage records
// (state.Spending), under one lock: a reservation is one step. The zero
// value is ready.
type spendBook struct {
	mu       sync.Mutex
	counters map[string]*counter
	days     map[string]map[string]*usageRecord // day → subject → record
	// swept is when expired counters and records were last dropped.
	swept time.Time
}

// counter is one budget window.
type counter struct {
	used, reserved state.Amount
	resv           map[string]reservation // by reservation ID
	expires        time.Time
}

type reservation struct {
	amount state.Amount
	lapse  time.Time
}

type usageRecord struct {
	counts  map[string]int64
	expires time.Time
}

// sweepEvery is how often expired counters and usage records are dropped.
const sweepEvery = time.Hour

// counter returns the counter id, made on first use; lapsed reservations
// are given back first. b.mu is held.
func (b *spendBook) counter(c state.Counter, now time.Time) *counter {
	k := b.counters[c.ID]
	if k == nil {
		if b.counters == nil {
			b.counters = make(map[string]*counter)
		}
		k = &counter{resv: make(map[string]reservation)}
		b.counters[c.ID] = k
	}
	if !c.Expires.IsZero() {
		k.expires = c.Expires
	}
	for id, r := range k.resv {
		if !now.Before(r.lapse) {
			k.reserved = k.reserved.Add(neg(r.amount))
			delete(k.resv, id)
		}
	}
	return k
}

func neg(a state.Amount) state.Amount { return state.Amount{Cost: -a.Cost, Tokens: -a.Tokens} }

// room reports whether k has room for a under max.
func (k *counter) room(a, max state.Amount) bool {
	after := k.used.Add(k.reserved).Add(a)
	return (max.Cost <= 0 || after.Cost <= max.Cost) && (max.Tokens <= 0 || after.Tokens <= max.Tokens)
}

// Reserve implements state.Spending.
func (s *Store) Reserve(ctx context.Context, r state.Reservation) (state.Reserved, error) {
	if err := ctx.Err(); err != nil {
		return state.Reserved{}, err
	}
	b := &s.spend
	b.mu.Lock()
	defer b.mu.Unlock()
	cs := make([]*counter, len(r.Counters))
	for i, c := range r.Counters {
		cs[i] = b.counter(c, r.Now)
		if !cs[i].room(r.Amount, c.Max) {
			return state.Reserved{Refused: i, Balance: state.Balance{Used: cs[i].used, Reserved: cs[i].reserved}}, nil
		}
	}
	for _, k := range cs {
		k.reserved = k.reserved.Add(r.Amount)
		k.resv[r.ID] = reservation{amount: r.Amount, lapse: r.Lapse}
	}
	return state.Reserved{Allowed: true}, nil
}

// Settle implements state.Spending.
func (s *Store) Settle(ctx context.Context, st state.Settlement) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := &s.spend
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range st.Counters {
		k := b.counter(c, st.Now)
		if r, ok := k.resv[st.ID]; ok {
			k.reserved = k.reserved.Add(neg(r.amount))
			delete(k.resv, st.ID)
		}
		k.used = k.used.Add(st.Spent)
	}
	for _, d := range st.Usage {
		if b.days == nil {
			b.days = make(map[string]map[string]*usageRecord)
		}
		day := b.days[d.Day]
		if day == nil {
			day = make(map[string]*usageRecord)
			b.days[d.Day] = day
		}
		rec := day[d.Subject]
		if rec == nil {
			rec = &usageRecord{counts: make(map[string]int64)}
			day[d.Subject] = rec
		}
		for name, n := range d.Counts {
			rec.counts[name] += n
		}
		if !st.UsageExpires.IsZero() {
			rec.expires = st.UsageExpires
		}
	}
	if st.Now.Sub(b.swept) >= sweepEvery {
		b.sweep(st.Now)
	}
	return nil
}

// sweep drops the counters and usage records that expired by now; b.mu is
// held.
func (b *spendBook) sweep(now time.Time) {
	b.swept = now
	for id, k := range b.counters {
		if !k.expires.IsZero() && now.After(k.expires) {
			delete(b.counters, id)
		}
	}
	for day, subjects := range b.days {
		for sub, rec := range subjects {
			if !rec.expires.IsZero() && now.After(rec.expires) {
				delete(subjects, sub)
			}
		}
		if len(subjects) == 0 {
			delete(b.days, day)
		}
	}
}

// Balances implements state.Spending.
func (s *Store) Balances(ctx context.Context, counters []string, now time.Time) ([]state.Balance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b := &s.spend
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]state.Balance, len(counters))
	for i, id := range counters {
		if b.counters[id] == nil {
			continue
		}
		k := b.counter(state.Counter{ID: id}, now)
		out[i] = state.Balance{Used: k.used, Reserved: k.reserved}
	}
	return out, nil
}

// Usage implements state.Spending.
func (s *Store) Usage(ctx context.Context, q state.UsageQuery) ([]state.UsageRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b := &s.spend
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []state.UsageRecord
	for _, day := range slices.Sorted(maps.Keys(b.days)) {
		if day < q.From || day > q.To {
			continue
		}
		for _, sub := range slices.Sorted(maps.Keys(b.days[day])) {
			if len(q.Subjects) > 0 && !slices.Contains(q.Subjects, sub) {
				continue
			}
			if q.Limit > 0 && len(out) == q.Limit {
				return out, nil
			}
			out = append(out, state.UsageRecord{Day: day, Subject: sub, Counts: maps.Clone(b.days[day][sub].counts)})
		}
	}
	return out, nil
}
