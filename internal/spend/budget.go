// Package spend owns llmrelay's budgets: what a key's and a team's calls
// may spend per window (a calendar day or month in UTC, or ever), the
// reservation a call makes as it is admitted, its settlement from the
// usage the providers reported once it ended, and the usage records per
// key and team per day that GetUsage reads. The counting itself is the
// state store's (state.Spending: this process's memory, or Redis shared by
// every replica), one round trip per decision.
//
// The budgets are configured in one shape, on a key (auth.keys[].budgets,
// or through the admin API) or on a team (teams[].budgets):
//
//	budgets:
//	  - {window: day, max_cost_usd: 5}
//	  - {window: month, max_tokens: 2000000}
package spend

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"
)

// NamePattern is what a team's name (and a stored key's) looks like: it
// names metrics, logs and store keys.
var NamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Window is a budget's window.
type Window string

// The windows.
const (
	// Day is the calendar day in UTC.
	Day Window = "day"
	// Month is the calendar month in UTC.
	Month Window = "month"
	// Total is every call ever: it never resets.
	Total Window = "total"
)

// Windows lists the windows, for messages.
var Windows = []Window{Day, Month, Total}

// Budget caps what the calls of a key or a team spend in one window. At
// least one cap is set; a budget with both holds both.
type Budget struct {
	// Window is day, month or total.
	Window Window `yaml:"window" json:"window"`
	// MaxCostUSD caps the cost in US dollars, at the pricing table's
	// prices; 0: no cap on cost.
	MaxCostUSD float64 `yaml:"max_cost_usd,omitempty" json:"max_cost_usd,omitempty"`
	// MaxTokens caps the tokens, input plus output; 0: no cap on tokens.
	MaxTokens int64 `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
}

// The largest caps: amounts are counted in nano-dollars and tokens as
// integers that a Lua number (a double) holds exactly.
const (
	MaxCostUSD = 1_000_000
	MaxTokens  = 1_000_000_000_000_000
)

// MinCostUSD is the smallest cost cap: one nano-dollar.
const MinCostUSD = 1e-9

// BudgetError says what is wrong with one budget of a list.
type BudgetError struct {
	// Index is the budget's position in its list; Field the setting at
	// fault ("window", "max_cost_usd", "max_tokens").
	Index   int
	Field   string
	Problem string
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("budgets[%d].%s %s", e.Index, e.Field, e.Problem)
}

// CheckBudgets returns the first problem of a list of budgets, a
// *BudgetError, or nil: an unknown window, a window listed twice, no cap,
// a negative, too small or too large cap.
func CheckBudgets(budgets []Budget) error {
	seen := map[Window]int{}
	for i, b := range budgets {
		bad := func(field, format string, args ...any) error {
			return &BudgetError{Index: i, Field: field, Problem: fmt.Sprintf(format, args...)}
		}
		switch b.Window {
		case Day, Month, Total:
		case "":
			return bad("window", "is required: day, month or total")
		default:
			return bad("window", "is %q; the windows are day, month and total", b.Window)
		}
		if j, dup := seen[b.Window]; dup {
			return bad("window", "%s is already the window of budgets[%d]: one budget per window, with both caps if need be", b.Window, j)
		}
		seen[b.Window] = i
		switch {
		case b.MaxCostUSD < 0 || math.IsNaN(b.MaxCostUSD):
			return bad("max_cost_usd", "must not be negative")
		case b.MaxCostUSD > MaxCostUSD:
			return bad("max_cost_usd", "must be at most %d", MaxCostUSD)
		case b.MaxCostUSD > 0 && b.MaxCostUSD < MinCostUSD:
			// Counted in nano-dollars, it would round to 0: no cap at all.
			return bad("max_cost_usd", "must be at least 0.000000001 (a nano-dollar, the unit costs are counted in)")
		case b.MaxTokens < 0:
			return bad("max_tokens", "must not be negative")
		case b.MaxTokens > MaxTokens:
			return bad("max_tokens", "must be at most %d", int64(MaxTokens))
		case b.MaxCostUSD == 0 && b.MaxTokens == 0:
			return bad("max_cost_usd", "or max_tokens is required: a budget caps cost, tokens or both")
		}
	}
	return nil
}

// Period returns the window's period that holds now: its name ("2025-06-01"
// for a day, "2025-06" for a month, "total") and when it ends, when the
// budget resets (zero for Total).
func (w Window) Period(now time.Time) (name string, resets time.Time) {
	now = now.UTC()
	y, m, d := now.Date()
	switch w {
	case Day:
		return now.Format(time.DateOnly), time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	case Month:
		return now.Format("2006-01"), time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
	}
	return string(Total), time.Time{}
}

// Adjective names the window in messages: "daily", "monthly", "total".
func (w Window) Adjective() string {
	switch w {
	case Day:
		return "daily"
	case Month:
		return "monthly"
	}
	return "total"
}

// NanosPerUSD converts dollars to the nano-dollars amounts are counted in.
const NanosPerUSD = 1e9

// MaxNanos is the most an amount of nano-dollars may be: below 2^53, so
// that the redis store's scripts (Lua numbers) hold it exactly; about 9
// million dollars.
const MaxNanos = 1<<53 - 1

// Nanos returns usd in nano-dollars, rounded to the nearest (so that
// 0.01 is exactly 10,000,000), at most MaxNanos: a cost past it (a huge
// reply at a high price) counts as MaxNanos rather than wrapping around
// to a negative amount that would credit the budgets.
func Nanos(usd float64) int64 {
	n := math.Round(usd * NanosPerUSD)
	if n >= MaxNanos {
		return MaxNanos
	}
	return int64(n)
}

// USD returns nano-dollars in dollars.
func USD(nanos int64) float64 { return float64(nanos) / NanosPerUSD }

// FormatUSD writes nano-dollars as dollars for messages: "$0.0123".
func FormatUSD(nanos int64) string {
	return "$" + strconv.FormatFloat(USD(nanos), 'f', -1, 64)
}

// Team is one team of keys and its budgets, as configured under teams.
type Team struct {
	// Name identifies the team in its keys' team, metrics and GetUsage.
	Name string `yaml:"name"`
	// Budgets hold for all the team's keys together.
	Budgets []Budget `yaml:"budgets"`
}

// Config is the governance section: how calls reserve, and how long their
// usage is kept.
type Config struct {
	// DefaultOutputTokens is the output a call reserves when its request
	// sets no generation.max_output_tokens.
	DefaultOutputTokens int64 `yaml:"default_output_tokens"`
	// UsageRetentionDays is how many days of usage records (GetUsage)
	// the store keeps.
	UsageRetentionDays int `yaml:"usage_retention_days"`
}

// DefaultConfig returns the governance section's defaults: 4096 output
// tokens reserved by default, usage kept 400 days.
func DefaultConfig() Config { return Config{DefaultOutputTokens: 4096, UsageRetentionDays: 400} }
