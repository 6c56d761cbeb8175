package spend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// Subject is whose budgets a call falls under: its API key's own, and its
// team's (the Budgeter knows the teams' budgets).
type Subject struct {
	// Key is the API key's name; "" on a server without keys, whose
	// calls fall under no budget and are recorded nowhere.
	Key string
	// Team is the key's team, "" for none.
	Team string
	// Budgets are the key's own.
	Budgets []Budget
}

// Request is what a call's reservation is estimated from.
type Request struct {
	// InputBytes is the request's encoded size (with its images counted
	// by RequestBytes): its input is reserved as a token per
	// InputBytesPerToken bytes.
	InputBytes int
	// MaxOutputTokens is the request's max_output_tokens; 0 reserves
	// Config.DefaultOutputTokens.
	MaxOutputTokens int64
	// NoOutput says the call produces no output tokens (an embedding):
	// none are reserved, MaxOutputTokens and the default aside.
	NoOutput bool
	// Targets are the models the call may reach (its model and
	// fallbacks); it reserves at the dearest one's prices.
	Targets []Target
}

// Target is a model a call may reach: the configured provider's name and
// the model at that provider.
type Target struct{ Provider, Model string }

// InputBytesPerToken is how many bytes of an encoded request a reservation
// counts as one input token: a guess on the side of more tokens for
// English text, which settlement replaces with the provider's count.
const InputBytesPerToken = 3

// ImageTokens is what an estimate counts for one image of a request,
// whatever its size or source: about what Anthropic bills for an image of
// 1.15 megapixels, the largest it takes unscaled (OpenAI bills a
// high-detail 1024×1024 image 765 tokens, Gemini 258 to 1,548 tokens by
// size). An image's bytes say little about its tokens (a 5 MB photo and a
// 50 KB screenshot may cost the same), and counted as text they would
// reserve hundreds of thousands of tokens.
const ImageTokens = 1600

// RequestBytes returns the bytes an estimate counts for an encoded request
// of size bytes that carries images: sources bytes of the images' data
// and URLs together, which are counted as ImageTokens tokens for each
// image instead.
func RequestBytes(size, images, sources int64) int64 {
	return max(size-sources, 0) + images*ImageTokens*InputBytesPerToken
}

// tokensOf counts n bytes as tokens, a token per InputBytesPerToken bytes,
// rounded up.
func tokensOf(n int64) int64 {
	return (max(n, 0) + InputBytesPerToken - 1) / InputBytesPerToken
}

// Attempt is one attempt of a call as settlement counts it.
type Attempt struct {
	// Usage is what its provider reported, when Reported.
	Usage    provider.Usage
	Reported bool
	// Finished says its provider ended the reply (a finish reason came):
	// usage it reported since is the reply's whole. Usage reported before
	// (Anthropic's at message_start: the input and one output token) is
	// only what the provider had counted so far.
	Finished bool
	// Opened says its provider took the request: the reply's stream
	// opened (an attempt refused with an error status, or never answered,
	// generated nothing).
	Opened bool
	// InputBytes is the size of the request the attempt sent, as a
	// reservation counts it (the encoded GenerateRequest, its images
	// counted by RequestBytes, and with server tools the transcript of the
	// turns before).
	InputBytes int64
	// OutputBytes is what the attempt produced: the bytes of its text,
	// refusal, reasoning and tool-call arguments.
	OutputBytes int64
}

// Estimated reports whether settlement may count anything on top of what
// attempt a's provider reported (Charge): its stream opened, and no report
// came with or after the reply's end. It reads neither InputBytes nor
// OutputBytes, so that a caller measures them only for such an attempt.
func (a Attempt) Estimated() bool { return a.Opened && !(a.Reported && a.Finished) }

// Charge returns what settlement counts for attempt a on top of what its
// provider reported (a.Usage, counted as it is): an estimate, by the
// reservation's rule of a token per InputBytesPerToken bytes, of what the
// report leaves out.
//
//   - An attempt whose provider reported its usage with or after the
//     reply's end (Finished) counts exactly that: nothing on top.
//   - One whose stream opened and ended before any report (the client
//     went, the connection dropped, a hedge lost its race, a provider that
//     never reports) counts its request's size as input and what it
//     produced (OutputBytes) as output.
//   - One whose provider reported before the reply's end only (Anthropic
//     counts the input and one output token at message_start) counts the
//     reported input, or the estimate when it reported none, and the
//     larger of the reported output and the estimate.
//   - One that never opened counts nothing.
//
// It is the one place this is decided: the engine asks it for every
// attempt as the attempt ends.
func Charge(a Attempt) provider.Usage {
	if !a.Estimated() {
		return provider.Usage{}
	}
	est := provider.Usage{InputTokens: tokensOf(a.InputBytes), OutputTokens: tokensOf(a.OutputBytes)}
	if !a.Reported {
		return est
	}
	if a.Usage.InputTokens > 0 {
		est.InputTokens = 0
	}
	est.OutputTokens = max(est.OutputTokens-a.Usage.OutputTokens, 0)
	return est
}

// lapseMargin is how long past the call's deadline an unsettled
// reservation holds, for a replica that crashed before settling.
const lapseMargin = 5 * time.Minute

// releaseTimeout bounds giving back a reservation whose call ended while
// it was being made.
const releaseTimeout = 5 * time.Second

// Budgeter admits calls against the budgets of their key and team, and
// settles them. It is safe for concurrent use.
type Budgeter struct {
	store  state.Spending
	now    func() time.Time
	teams  map[string][]Budget
	prices *usage.Prices
	cfg    Config
}

// New returns a Budgeter counting in store, with the configured teams,
// the price table (nil: nothing is priced) and the governance section;
// now is its clock (nil: time.Now).
func New(store state.Spending, teams []Team, prices *usage.Prices, cfg Config, now func() time.Time) *Budgeter {
	if now == nil {
		now = time.Now
	}
	b := &Budgeter{store: store, now: now, teams: make(map[string][]Budget, len(teams)), prices: prices, cfg: cfg}
	for _, t := range teams {
		b.teams[t.Name] = t.Budgets
	}
	return b
}

// Estimate returns what a call of r reserves: its input (InputBytes /
// InputBytesPerToken tokens) and its output (MaxOutputTokens, or the
// default) in tokens, and their cost at the dearest of its targets'
// prices (nothing for unpriced targets).
func (b *Budgeter) Estimate(r Request) state.Amount {
	out := r.MaxOutputTokens
	switch {
	case r.NoOutput:
		out = 0
	case out <= 0:
		out = b.cfg.DefaultOutputTokens
	}
	u := provider.Usage{InputTokens: tokensOf(int64(r.InputBytes)), OutputTokens: out}
	var cost float64
	for _, t := range r.Targets {
		if c, ok := b.prices.Cost(t.Provider, t.Model, u); ok {
			cost = max(cost, c)
		}
	}
	return state.Amount{Cost: Nanos(cost), Tokens: u.InputTokens + u.OutputTokens}
}

// budgetOf is one budget a call falls under.
type budgetOf struct {
	team   bool // the team's, not the key's
	budget Budget
	resets time.Time
}

// Budgeted reports whether a call of sub falls under any budget (its
// key's or its team's), so that a caller may skip estimating it.
func (b *Budgeter) Budgeted(sub Subject) bool {
	return b != nil && sub.Key != "" && (len(sub.Budgets) > 0 || sub.Team != "" && len(b.teams[sub.Team]) > 0)
}

// Reserve admits one call of sub: it reserves r's estimate on every
// budget of the key and its team, atomically, and returns the Hold that
// settles the call. A budget without room for it refuses the call with an
// *ExhaustedError (and nothing is reserved). A key without budgets still
// gets a Hold, which records its usage and what it spends in each window
// (for a budget set later); a call without a key gets nil.
// deadline is the call's (zero: none): an unsettled reservation is dropped
// lapseMargin after it (a day after the call started without one).
func (b *Budgeter) Reserve(ctx context.Context, sub Subject, r Request, deadline time.Time) (*Hold, error) {
	if b == nil || sub.Key == "" {
		return nil, nil
	}
	now := b.now()
	h := &Hold{b: b, sub: sub, id: holdID(), day: now.UTC().Format(time.DateOnly)}
	for _, bu := range sub.Budgets {
		h.add(false, bu, now)
	}
	if sub.Team != "" {
		for _, bu := range b.teams[sub.Team] {
			h.add(true, bu, now)
		}
	}
	h.track(now)
	if len(h.budgets) == 0 {
		return h, nil
	}
	h.amount = b.Estimate(r)
	lapse := now.Add(24 * time.Hour)
	if !deadline.IsZero() {
		lapse = deadline.Add(lapseMargin)
	}
	res, err := b.store.Reserve(ctx, state.Reservation{ID: h.id, Counters: h.capped(), Amount: h.amount, Now: now, Lapse: lapse})
	if err != nil {
		if ctx.Err() != nil {
			// The call ended (its client went) while the store decided: the
			// store may have reserved all the same, to be held until it
			// lapsed. Give it back; nothing happens if it was not taken.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
			_ = b.store.Settle(rctx, state.Settlement{ID: h.id, Counters: h.capped(), Reserved: h.amount, Now: now})
			cancel()
		}
		return nil, err
	}
	if !res.Allowed {
		of := h.budgets[res.Refused]
		return nil, &ExhaustedError{
			Key: sub.Key, Team: sub.Team, TeamBudget: of.team, Budget: of.budget,
			Balance: res.Balance, Reservation: h.amount, Resets: of.resets, Now: now,
		}
	}
	h.reserved = true
	return h, nil
}

// counter returns the counter of owner's ("k:alice", "t:research") window
// w that holds now, uncapped, and when the window resets (zero for Total).
func counter(owner string, w Window, now time.Time) (state.Counter, time.Time) {
	period, resets := w.Period(now)
	c := state.Counter{ID: owner + "/" + string(w) + "/" + period}
	if !resets.IsZero() {
		// Kept a day past the window's end: a late settlement still finds it.
		c.Expires = resets.Add(24 * time.Hour)
	}
	return c, resets
}

// owner returns the counters' owner of h's key, or of its team.
func (h *Hold) owner(team bool) string {
	if team {
		return "t:" + h.sub.Team
	}
	return "k:" + h.sub.Key
}

// add adds one budget's counter to h, capped by the budget: the call
// reserves on it.
func (h *Hold) add(team bool, bu Budget, now time.Time) {
	c, resets := counter(h.owner(team), bu.Window, now)
	c.Max = state.Amount{Cost: Nanos(bu.MaxCostUSD), Tokens: bu.MaxTokens}
	h.counters = append(h.counters, c)
	h.budgets = append(h.budgets, budgetOf{team: team, budget: bu, resets: resets})
}

// track adds to h, after the budgets' counters, the counter of every
// window of the key and of its team that no budget caps: a call spends on
// each of them whether a budget is set on it or not, so that a budget set
// mid-window (keys update --budget, a reload) counts what the window's
// calls spent before it, and one removed and set again counts the calls
// between. The call reserves nothing on them.
func (h *Hold) track(now time.Time) {
	capped := h.capped()
	for _, team := range []bool{false, true} {
		if team && h.sub.Team == "" {
			break
		}
		for _, w := range Windows {
			c, _ := counter(h.owner(team), w, now)
			if !slices.ContainsFunc(capped, func(b state.Counter) bool { return b.ID == c.ID }) {
				h.counters = append(h.counters, c)
			}
		}
	}
}

// capped returns the counters of h's budgets, which its reservation is
// made on: the first of h.counters, one per budget.
func (h *Hold) capped() []state.Counter { return h.counters[:len(h.budgets)] }

func holdID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Hold is one admitted call's reservation, until it is settled.
type Hold struct {
	b   *Budgeter
	sub Subject
	id  string
	day string // the usage records' day: the call's admission's
	// counters are the budgets' (capped, in the order of budgets), then
	// the other windows' of the key and its team (track).
	counters []state.Counter
	budgets  []budgetOf
	amount   state.Amount
	reserved bool
	ended    atomic.Bool
}

// Spent is what a call used, as its Hold settles it: what every attempt of
// every turn counts (Charge), summed.
type Spent struct {
	// Usage sums the attempts' tokens, estimates included (the call's
	// Final.usage plus Estimated); Cost is their cost in USD at the prices
	// of the models each attempt went to.
	Usage provider.Usage
	Cost  float64
	// Estimated is the part of Usage that was estimated, for attempts
	// whose provider reported no usage; EstimatedCost its cost.
	Estimated     provider.Usage
	EstimatedCost float64
}

// Settle ends h with what the call used, s. It gives back the reservation,
// adds the spend to every window of its key and team (the budgets' and
// the others, which a budget set later starts from), and adds the call to
// the usage records of its key and team (with how much of it was
// estimated). Only the first Settle or Release of a Hold counts; a nil Hold
// does nothing.
func (h *Hold) Settle(ctx context.Context, s Spent) error {
	if h == nil || !h.ended.CompareAndSwap(false, true) {
		return nil
	}
	u := s.Usage
	cost := Nanos(s.Cost)
	counts := map[string]int64{CountCalls: 1, CountCost: cost}
	for _, k := range usage.Kinds {
		if n := k.Tokens(u); n != 0 {
			counts[k.Name] = n
		}
	}
	if n := s.Estimated.InputTokens; n != 0 {
		counts[CountEstimatedInput] = n
	}
	if n := s.Estimated.OutputTokens; n != 0 {
		counts[CountEstimatedOutput] = n
	}
	if n := Nanos(s.EstimatedCost); n != 0 {
		counts[CountEstimatedCost] = n
	}
	deltas := []state.UsageDelta{{Day: h.day, Subject: "k:" + h.sub.Key, Counts: counts}}
	if h.sub.Team != "" {
		deltas = append(deltas, state.UsageDelta{Day: h.day, Subject: "t:" + h.sub.Team, Counts: counts})
	}
	now := h.b.now()
	return h.b.store.Settle(ctx, state.Settlement{
		ID: h.id, Counters: h.counters, Reserved: h.reservedAmount(),
		Spent: state.Amount{Cost: cost, Tokens: u.InputTokens + u.OutputTokens},
		Usage: deltas, Now: now, UsageExpires: now.AddDate(0, 0, h.b.cfg.UsageRetentionDays),
	})
}

// Release gives h's reservation back for a call that never ran (a later
// step of admission refused it): it spends nothing and is not a call of
// the usage records. Only the first Settle or Release counts.
func (h *Hold) Release(ctx context.Context) error {
	if h == nil || !h.ended.CompareAndSwap(false, true) || !h.reserved {
		return nil
	}
	return h.b.store.Settle(ctx, state.Settlement{ID: h.id, Counters: h.capped(), Reserved: h.amount, Now: h.b.now()})
}

func (h *Hold) reservedAmount() state.Amount {
	if !h.reserved {
		return state.Amount{}
	}
	return h.amount
}

// Reserved returns what h reserved (zero when the call fell under no
// budget).
func (h *Hold) Reserved() state.Amount {
	if h == nil {
		return state.Amount{}
	}
	return h.reservedAmount()
}

// The usage records' counts besides the kinds of token (usage.Kinds).
const (
	// CountCalls counts the calls.
	CountCalls = "calls"
	// CountCost sums their cost in nano-dollars.
	CountCost = "cost_nanos"
	// CountEstimatedInput and CountEstimatedOutput count the input and
	// output tokens (of those counted by kind) that were estimated
	// (Charge), CountEstimatedCost their cost in nano-dollars (of
	// CountCost).
	CountEstimatedInput  = "estimated_input"
	CountEstimatedOutput = "estimated_output"
	CountEstimatedCost   = "estimated_cost_nanos"
)

// ExhaustedError is the refusal of a call by a budget without room for its
// reservation.
type ExhaustedError struct {
	// Key is the call's API key, Team its team; TeamBudget says the
	// refusing budget is the team's.
	Key, Team  string
	TeamBudget bool
	// Budget is the refusing budget; Balance its window's balance;
	// Reservation what the call would have reserved.
	Budget      Budget
	Balance     state.Balance
	Reservation state.Amount
	// Resets is when the window ends (zero for total); Now the time of
	// the decision.
	Resets, Now time.Time
}

// Error implements error: which budget, what it holds, when it resets.
func (e *ExhaustedError) Error() string {
	var b strings.Builder
	if e.TeamBudget {
		fmt.Fprintf(&b, "team %s's %s budget", e.Team, e.Budget.Window.Adjective())
	} else {
		fmt.Fprintf(&b, "API key %s's %s budget", e.Key, e.Budget.Window.Adjective())
	}
	var caps []string
	if e.Budget.MaxCostUSD > 0 {
		caps = append(caps, fmt.Sprintf("%s spent of %s (%s held by calls running)",
			FormatUSD(e.Balance.Used.Cost), FormatUSD(Nanos(e.Budget.MaxCostUSD)), FormatUSD(e.Balance.Reserved.Cost)))
	}
	if e.Budget.MaxTokens > 0 {
		caps = append(caps, fmt.Sprintf("%d tokens used of %d (%d held by calls running)",
			e.Balance.Used.Tokens, e.Budget.MaxTokens, e.Balance.Reserved.Tokens))
	}
	fmt.Fprintf(&b, " has no room for this call's reservation (%s, %d tokens): %s", FormatUSD(e.Reservation.Cost), e.Reservation.Tokens, strings.Join(caps, "; "))
	if e.OverCap() {
		b.WriteString("; the reservation alone is more than the budget allows, so no window has room for it: " +
			"ask for fewer output tokens (max_output_tokens), or send a shorter request")
		return b.String()
	}
	if e.Resets.IsZero() {
		b.WriteString("; a total budget never resets")
	} else {
		fmt.Fprintf(&b, "; it resets at %s", e.Resets.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// OverCap reports whether the reservation alone is more than a cap of
// the budget: the same call is refused in every window, an empty one
// too, so waiting for the reset does not help (a small budget and a
// call that reserves governance.default_output_tokens, say).
func (e *ExhaustedError) OverCap() bool {
	return e.Budget.MaxCostUSD > 0 && e.Reservation.Cost > Nanos(e.Budget.MaxCostUSD) ||
		e.Budget.MaxTokens > 0 && e.Reservation.Tokens > e.Budget.MaxTokens
}

// RetryAfter returns how long until the window resets; 0 for a total
// budget, which never does, and for a reservation over the budget's cap
// (OverCap), which no reset makes room for.
func (e *ExhaustedError) RetryAfter() time.Duration {
	if e.Resets.IsZero() || e.OverCap() {
		return 0
	}
	return max(e.Resets.Sub(e.Now), time.Second)
}
