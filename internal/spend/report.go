package spend

import (
	"context"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// Record is what one key, or one team, used in one UTC day.
type Record struct {
	// Day is "YYYY-MM-DD".
	Day string
	// Key or Team names whose usage it is (the other is "").
	Key, Team string
	// Calls counts the admitted calls, failed ones included.
	Calls int64
	// Usage sums their tokens, as each call's Final.usage sums its
	// attempts'.
	Usage provider.Usage
	// Cost sums their cost, in nano-dollars.
	Cost int64
}

// UsageQuery selects usage records: the days from From to To (both
// "YYYY-MM-DD", included); with Key or Team set, only their records.
type UsageQuery struct {
	From, To  string
	Key, Team string
}

// Usage returns the usage records q selects, by day, then keys before
// teams, each by name.
func (b *Budgeter) Usage(ctx context.Context, q UsageQuery) ([]Record, error) {
	sq := state.UsageQuery{From: q.From, To: q.To}
	if q.Key != "" {
		sq.Subjects = append(sq.Subjects, "k:"+q.Key)
	}
	if q.Team != "" {
		sq.Subjects = append(sq.Subjects, "t:"+q.Team)
	}
	recs, err := b.store.Usage(ctx, sq)
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(recs))
	for _, r := range recs {
		rec := Record{Day: r.Day, Calls: r.Counts[CountCalls], Cost: r.Counts[CountCost]}
		if name, ok := strings.CutPrefix(r.Subject, "k:"); ok {
			rec.Key = name
		} else {
			rec.Team = strings.TrimPrefix(r.Subject, "t:")
		}
		for _, k := range usage.Kinds {
			k.Add(&rec.Usage, r.Counts[k.Name])
		}
		out = append(out, rec)
	}
	return out, nil
}

// Status is one budget and its window now.
type Status struct {
	Budget Budget
	// Used is what the window's settled calls spent; Reserved what its
	// running calls hold.
	Used, Reserved state.Amount
	// Resets is when the window ends (zero for total).
	Resets time.Time
}

// KeyStatus returns the state of a key's own budgets in their current
// windows, in order.
func (b *Budgeter) KeyStatus(ctx context.Context, key string, budgets []Budget) ([]Status, error) {
	if len(budgets) == 0 {
		return nil, nil
	}
	now := b.now()
	h := &Hold{sub: Subject{Key: key}}
	for _, bu := range budgets {
		h.add(false, bu, now)
	}
	ids := make([]string, len(h.counters))
	for i, c := range h.counters {
		ids[i] = c.ID
	}
	bal, err := b.store.Balances(ctx, ids, now)
	if err != nil {
		return nil, err
	}
	out := make([]Status, len(budgets))
	for i := range budgets {
		out[i] = Status{Budget: budgets[i], Used: bal[i].Used, Reserved: bal[i].Reserved, Resets: h.budgets[i].resets}
	}
	return out, nil
}

// Today returns the day the Budgeter's clock is in, "YYYY-MM-DD" (UTC).
func (b *Budgeter) Today() string { return b.now().UTC().Format(time.DateOnly) }
