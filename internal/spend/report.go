package spend

import (
	"context"
	"maps"
	"slices"
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
	// attempts', and the estimates of attempts whose provider reported
	// none (Estimated).
	Usage provider.Usage
	// Cost sums their cost, in nano-dollars.
	Cost int64
	// Estimated is the part of Usage (input and output tokens) that was
	// estimated, for attempts whose provider reported no usage (Charge);
	// EstimatedCost the part of Cost it came to.
	Estimated     provider.Usage
	EstimatedCost int64
}

// UsageQuery selects usage records: the days from From to To (both
// "YYYY-MM-DD", included); with Key or Team set, only their records; with
// Limit positive, the first Limit records at most.
type UsageQuery struct {
	From, To  string
	Key, Team string
	Limit     int
}

// Usage returns the usage records q selects, by day, then keys before
// teams, each by name.
func (b *Budgeter) Usage(ctx context.Context, q UsageQuery) ([]Record, error) {
	sq := state.UsageQuery{From: q.From, To: q.To, Limit: q.Limit}
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
		rec := Record{Day: r.Day, Calls: r.Counts[CountCalls], Cost: r.Counts[CountCost], EstimatedCost: r.Counts[CountEstimatedCost],
			Estimated: provider.Usage{InputTokens: r.Counts[CountEstimatedInput], OutputTokens: r.Counts[CountEstimatedOutput]}}
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

// KeyBudgets is a key and its own budgets.
type KeyBudgets struct {
	Key     string
	Budgets []Budget
}

// KeysStatus returns the state of each key's own budgets in their current
// windows, in order, in one store round trip.
func (b *Budgeter) KeysStatus(ctx context.Context, keys []KeyBudgets) ([][]Status, error) {
	now := b.now()
	holds := make([]*Hold, len(keys))
	for i, k := range keys {
		holds[i] = &Hold{sub: Subject{Key: k.Key}}
		for _, bu := range k.Budgets {
			holds[i].add(false, bu, now)
		}
	}
	return b.status(ctx, holds, now)
}

// TeamStatus is a configured team and the state of its budgets.
type TeamStatus struct {
	Team string
	// Budgets are the team's, in the config's order, in their current
	// windows.
	Budgets []Status
}

// TeamsStatus returns the configured teams by name, each with the state of
// its budgets in their current windows, in one store round trip: what the
// calls of all the team's keys spent. With name set, only that team (none
// when no configured team has that name). A team that only keys name (a
// reload dropped it) is not configured, and not returned.
func (b *Budgeter) TeamsStatus(ctx context.Context, name string) ([]TeamStatus, error) {
	now := b.now()
	var holds []*Hold
	for _, t := range slices.Sorted(maps.Keys(b.teams)) {
		if name != "" && t != name {
			continue
		}
		h := &Hold{sub: Subject{Team: t}}
		for _, bu := range b.teams[t] {
			h.add(true, bu, now)
		}
		holds = append(holds, h)
	}
	st, err := b.status(ctx, holds, now)
	if err != nil {
		return nil, err
	}
	out := make([]TeamStatus, len(holds))
	for i, h := range holds {
		out[i] = TeamStatus{Team: h.sub.Team, Budgets: st[i]}
	}
	return out, nil
}

// status reads the balances of the budgets' counters of holds (made with
// add, at now), in one store round trip, and returns each hold's budgets'
// state, in order.
func (b *Budgeter) status(ctx context.Context, holds []*Hold, now time.Time) ([][]Status, error) {
	var ids []string
	for _, h := range holds {
		for _, c := range h.counters {
			ids = append(ids, c.ID)
		}
	}
	var bal []state.Balance
	if len(ids) > 0 {
		var err error
		if bal, err = b.store.Balances(ctx, ids, now); err != nil {
			return nil, err
		}
	}
	out := make([][]Status, len(holds))
	for i, h := range holds {
		for _, of := range h.budgets {
			out[i] = append(out[i], Status{Budget: of.budget, Used: bal[0].Used, Reserved: bal[0].Reserved, Resets: of.resets})
			bal = bal[1:]
		}
	}
	return out, nil
}

// KeyStatus returns the state of a key's own budgets in their current
// windows, in order.
func (b *Budgeter) KeyStatus(ctx context.Context, key string, budgets []Budget) ([]Status, error) {
	st, err := b.KeysStatus(ctx, []KeyBudgets{{Key: key, Budgets: budgets}})
	if err != nil {
		return nil, err
	}
	return st[0], nil
}

// Today returns the day the Budgeter's clock is in, "YYYY-MM-DD" (UTC).
func (b *Budgeter) Today() string { return b.now().UTC().Format(time.DateOnly) }
