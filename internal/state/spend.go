package state

import (
	"context"
	"time"
)

// Spending counts what calls spend against budgets, and what each key and
// team used per day, across every replica that shares the store
// (internal/spend decides which counters a call falls under, what it
// reserves, and windows; the store only counts).
//
// A budget's window is one Counter: what the calls it covers spent (Used)
// and what the calls running now reserved (Reserved), against its caps
// (Max). A call reserves an estimate on every counter it falls under, in
// one atomic decision, and settles at its end: its reservation is given
// back and what it really spent is added. A reservation a replica never
// settles (it crashed) lapses at its Lapse time. Times are the caller's
// (its clock decides windows and lapses), so that tests move them.
//
// It is an optional capability of a Store, found by type assertion (both
// stores implement it). Each method is one store round trip at most; a
// settlement that gives no reservation back (a call under no budget, which
// still spends on its windows' counters) may be written after Settle
// returns, off the call's path (the redis store does, within
// milliseconds), and Usage, Balances and Reserve on the same store read it.
// Implementations are safe for concurrent use; an error means the store
// could not decide (it matches ErrUnavailable when the redis store is
// unreachable with fail_closed) or ctx ended. With fail_open, the redis
// store decides on this replica's own counts while Redis is unreachable and
// adds what was settled meanwhile to Redis once it is back.
//
// statetest.RunSpending is its conformance suite.
type Spending interface {
	// Reserve reserves r.Amount on every counter of r, atomically, if each
	// has room for it: for each cap set, Used + Reserved + Amount ≤ Max.
	// A refused reservation takes nothing and reports the first counter
	// without room, with its balance.
	Reserve(ctx context.Context, r Reservation) (Reserved, error)
	// Settle ends the reservation s.ID: on each counter it gives back
	// s.Reserved (unless the reservation lapsed) and adds s.Spent to
	// Used; and it adds s.Usage to the usage records. A call that
	// reserved nothing settles with a zero Reserved.
	Settle(ctx context.Context, s Settlement) error
	// Balances returns the balance of each counter, in order (a counter
	// never used has a zero balance).
	Balances(ctx context.Context, counters []string, now time.Time) ([]Balance, error)
	// Usage returns the usage records of the days from q.From to q.To
	// (both included, "YYYY-MM-DD"), of q's subjects (all when empty), by
	// day, then subject.
	Usage(ctx context.Context, q UsageQuery) ([]UsageRecord, error)
}

// Amount is spend in a budget's two measures.
type Amount struct {
	// Cost in nano-dollars (1e-9 USD), so that sums are exact.
	Cost int64
	// Tokens, input and output.
	Tokens int64
}

// Add returns a + b.
func (a Amount) Add(b Amount) Amount {
	return Amount{Cost: a.Cost + b.Cost, Tokens: a.Tokens + b.Tokens}
}

// Counter is one budget's window, as a reservation or a settlement uses it.
type Counter struct {
	// ID names the counter: its subject, window and period
	// ("k:alice/day/2025-06-01"). The caller chooses it; a store only
	// keeps it.
	ID string
	// Max caps the counter: Cost and Tokens each, when positive (0: no
	// cap in that measure).
	Max Amount
	// Expires is when the counter may be forgotten (its window's end and
	// a margin); zero: never.
	Expires time.Time
}

// Reservation is what Reserve is asked to take.
type Reservation struct {
	// ID identifies the reservation, for Settle; unique.
	ID string
	// Counters are the budgets' windows the call falls under.
	Counters []Counter
	// Amount is reserved on each.
	Amount Amount
	// Now is the time of the decision; reservations whose Lapse passed
	// are dropped before counting.
	Now time.Time
	// Lapse is when the reservation is dropped if it was not settled.
	Lapse time.Time
}

// Reserved is Reserve's decision.
type Reserved struct {
	// Allowed says the amount was reserved on every counter.
	Allowed bool
	// Refused is the index in Counters of the first counter without
	// room, when not Allowed; Balance is its balance.
	Refused int
	Balance Balance
}

// Balance is a counter's state.
type Balance struct {
	// Used is what settled calls spent.
	Used Amount
	// Reserved is what running calls reserved.
	Reserved Amount
}

// Settlement ends a reservation.
type Settlement struct {
	// ID is the reservation's: unique, a call's one settlement (the redis
	// store runs a settlement sent again, after an answer that came too
	// late, only once).
	ID string
	// Counters are the reservation's (the same IDs, caps and expiries),
	// or, for a call that reserved nothing, those it spent against.
	Counters []Counter
	// Reserved is the reservation's Amount (zero when nothing was
	// reserved); Spent what the call spent.
	Reserved, Spent Amount
	// Usage is added to the usage records.
	Usage []UsageDelta
	// Now is the time of the settlement.
	Now time.Time
	// UsageExpires is when the usage records written may be forgotten;
	// zero: never.
	UsageExpires time.Time
}

// UsageDelta is what one call adds to one subject's record of one day.
type UsageDelta struct {
	// Day is "YYYY-MM-DD" (UTC); Subject names the key or team
	// ("k:alice", "t:research").
	Day, Subject string
	// Counts are added by name ("calls", "input", "cost_nanos", ...).
	Counts map[string]int64
}

// UsageQuery selects usage records.
type UsageQuery struct {
	// From and To are the first and last day, "YYYY-MM-DD".
	From, To string
	// Subjects, when not empty, keeps only these subjects' records.
	Subjects []string
	// Limit, when positive, is the most records read: the first Limit in
	// order. A caller asks for one more than it takes to learn that there
	// are more.
	Limit int
}

// UsageRecord is one subject's usage in one day.
type UsageRecord struct {
	Day, Subject string
	// Counts are the sums of the deltas' counts, by name.
	Counts map[string]int64
}
