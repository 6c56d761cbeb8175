// Package route owns routes: names that the server's config defines and
// requests write as their model, each standing for one or more provider
// targets (a configured provider and a model), with defaults for the
// request's unset fields.
//
// The Table is the one place a request's model and fallback_models are
// resolved into the call's targets, in the order the call tries them: a
// route's targets in configuration order (ordered) or drawn by weight
// (weighted), skipping targets that are ejected for failing (outlier
// detection, recorded in a state.TargetHealth), then the fallback_models'
// targets.
// "<provider>/<model>" names are parsed by provider.Set.Resolve. What
// happens to a call's attempts over those targets is the attempt plan's
// (internal/retry); the plan tells the Table how each attempt went, which
// is how a target is ejected and restored. The defaults are applied by the
// route-defaults hook (internal/hook).
package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/setting"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
)

// Route is one configured route, resolved against the configured
// providers. It is immutable.
type Route struct {
	// Name is what requests write as their model.
	Name string
	// Weighted says the route balances its calls by weight; otherwise it
	// tries its targets in order.
	Weighted bool
	// Targets are the route's targets, in configuration order.
	Targets []Target
	// Defaults apply to the request's unset fields (see internal/hook).
	Defaults Defaults
	// Timeout bounds a call to the route; zero: no bound of its own.
	Timeout time.Duration
}

// Target is one target of a route.
type Target struct {
	provider.Target
	// Key names the target in health records, metrics and ListModels:
	// "<provider>/<model>".
	Key string
	// Weight is the target's weight in a weighted route, at least 1.
	Weight int
}

// Resolved is what a request's model and fallback_models resolve to.
type Resolved struct {
	// Name is the model the request named: a route's name or
	// "<provider>/<model>".
	Name string
	// Route is the route Name names; nil for "<provider>/<model>".
	Route *Route
	// Targets are where the call's attempts go, in order: the first, then
	// its fallbacks. Never empty.
	Targets []provider.Target
}

// ResolveError says which request field failed to resolve: Err wraps
// provider.ErrUnknownProvider or provider.ErrUnknownModel.
type ResolveError struct {
	// Field is "model" or "fallback_models[i]".
	Field string
	Err   error
}

// Error implements error.
func (e *ResolveError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the resolution error.
func (e *ResolveError) Unwrap() error { return e.Err }

// Options are a Table's collaborators; every one but Policy is optional.
type Options struct {
	// Health records the targets' health; nil: an in-process
	// memory.Store's.
	Health state.TargetHealth
	// Policy is the outlier detection policy (the outlier_detection
	// section, whose default is state.DefaultOutlierPolicy); required.
	Policy state.OutlierPolicy
	// Now is the clock target health is read and recorded on; nil:
	// time.Now. Tests pass one they move.
	Now func() time.Time
	// Rand returns a uniformly random integer in [0, n); it must be safe
	// for concurrent use. nil: math/rand/v2. Tests pass a seeded one.
	Rand func(n int64) int64
	// Logger logs ejections and health that cannot be read; nil discards.
	Logger *slog.Logger
	// Metrics counts ejections; nil counts nothing.
	Metrics *metrics.Metrics
}

// Table is the configured routes, resolved against the providers. It is
// immutable once built, apart from the targets' health, and safe for
// concurrent use.
type Table struct {
	providers *provider.Set
	routes    map[string]*Route
	names     []string
	tracked   map[string]bool // every route target's key
	o         Options
}

// errNoPolicy is the error of a table built without an outlier policy:
// the caller makes up no default of its own (config.Default composes
// state.DefaultOutlierPolicy).
var errNoPolicy = errors.New("route: a table needs an outlier detection policy (outlier_detection)")

// NewTable builds the routes from their (checked: Check) configuration.
// It fails when a target does not resolve: an unknown provider, or a model
// the provider does not serve; every route's problems at once, as a
// setting.List with each problem's path from the config's root
// ("routes[0].targets[1].model").
func NewTable(cfgs []Config, providers *provider.Set, o Options) (*Table, error) {
	if o.Health == nil {
		o.Health = memory.New()
	}
	if o.Policy.Failures < 1 {
		return nil, errNoPolicy
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Int64N
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	t := &Table{providers: providers, routes: make(map[string]*Route, len(cfgs)), tracked: map[string]bool{}, o: o}
	var problems setting.List
	for i, c := range cfgs {
		if _, dup := t.routes[c.Name]; dup {
			problems.Bad(fmt.Sprintf("routes[%d].name", i), "%q is listed twice", c.Name)
			continue
		}
		r := &Route{Name: c.Name, Weighted: c.Balance == BalanceWeighted, Defaults: c.Defaults, Timeout: c.Timeout}
		for j, tc := range c.Targets {
			e, m, err := providers.Resolve(tc.Model)
			if err != nil {
				problems.Add(fmt.Sprintf("routes[%d].targets[%d].model", i, j), err)
				continue
			}
			pt := provider.Target{Entry: e, Model: m}
			r.Targets = append(r.Targets, Target{Target: pt, Key: pt.String(), Weight: max(1, tc.Weight)})
			t.tracked[pt.String()] = true
		}
		t.routes[c.Name] = r
		t.names = append(t.names, c.Name)
	}
	if err := problems.Err(); err != nil {
		return nil, err
	}
	slices.Sort(t.names)
	return t, nil
}

// Routes returns the routes, sorted by name.
func (t *Table) Routes() []*Route {
	out := make([]*Route, len(t.names))
	for i, n := range t.names {
		out[i] = t.routes[n]
	}
	return out
}

// Tracks reports whether the target named key is a route's target, whose
// health is recorded.
func (t *Table) Tracks(key string) bool { return t.tracked[key] }

// Health returns the health of the targets named keys; a health that
// cannot be read is logged and reported healthy.
func (t *Table) Health(ctx context.Context, keys []string) []state.TargetStatus {
	st, err := t.o.Health.TargetStatus(ctx, keys, t.o.Now())
	if err != nil || len(st) != len(keys) {
		t.o.Logger.Warn("route target health unavailable: treating targets as healthy", "error", err)
		return make([]state.TargetStatus, len(keys))
	}
	return st
}

// Resolve resolves a request's model (a route's name or
// "<provider>/<model>") and fallback_models into the call's targets: the
// model's, in the order the route picks for this call (see order), then
// each fallback's, a target already listed not repeated. An entry that
// does not resolve is a *ResolveError naming its field, wrapping
// provider.ErrUnknownProvider or provider.ErrUnknownModel; its message
// names only what was asked for.
func (t *Table) Resolve(ctx context.Context, model string, fallbacks []string) (*Resolved, error) {
	ts, r, err := t.resolve(ctx, model)
	if err != nil {
		return nil, &ResolveError{Field: "model", Err: err}
	}
	res := &Resolved{Name: model, Route: r, Targets: ts}
	if len(fallbacks) == 0 {
		return res, nil // a route's targets are distinct already
	}
	seen := make(map[provider.Target]bool, len(ts)+len(fallbacks))
	for _, pt := range ts {
		seen[pt] = true
	}
	add := func(ts []provider.Target) {
		for _, pt := range ts {
			if !seen[pt] {
				seen[pt] = true
				res.Targets = append(res.Targets, pt)
			}
		}
	}
	for i, f := range fallbacks {
		ts, _, err := t.resolve(ctx, f)
		if err != nil {
			return nil, &ResolveError{Field: fmt.Sprintf("fallback_models[%d]", i), Err: err}
		}
		add(ts)
	}
	return res, nil
}

// resolve resolves one name: a route's targets in this call's order, or
// the one target of "<provider>/<model>".
func (t *Table) resolve(ctx context.Context, name string) ([]provider.Target, *Route, error) {
	if !strings.Contains(name, "/") {
		r, ok := t.routes[name]
		if !ok {
			return nil, nil, fmt.Errorf("%w: %q is not a route; a provider's model is named <provider>/<model>", provider.ErrUnknownModel, name)
		}
		return t.order(ctx, r), r, nil
	}
	e, m, err := t.providers.Resolve(name)
	if err != nil {
		return nil, nil, err
	}
	return []provider.Target{{Entry: e, Model: m}}, nil, nil
}

// order returns the targets one call to r tries, first to last: the
// healthy ones, in configuration order or, for a weighted route, drawn one
// after another by weight; ejected targets are skipped, unless every
// target is ejected: then all of them, the least recently ejected first.
func (t *Table) order(ctx context.Context, r *Route) []provider.Target {
	keys := make([]string, len(r.Targets))
	for i, tg := range r.Targets {
		keys[i] = tg.Key
	}
	st := t.Health(ctx, keys)
	var healthy, ejected []int
	for i := range r.Targets {
		if st[i].Ejected {
			ejected = append(ejected, i)
		} else {
			healthy = append(healthy, i)
		}
	}
	pick := healthy
	switch {
	case len(healthy) == 0:
		pick = ejected
		slices.SortStableFunc(pick, func(a, b int) int { return st[a].EjectedAt.Compare(st[b].EjectedAt) })
	case r.Weighted:
		pick = t.drawByWeight(r, healthy)
	}
	out := make([]provider.Target, len(pick))
	for i, j := range pick {
		out[i] = r.Targets[j].Target
	}
	return out
}

// drawByWeight orders the targets idx of r by drawing them one after
// another, each with a chance proportional to its weight among those left.
func (t *Table) drawByWeight(r *Route, idx []int) []int {
	left := slices.Clone(idx)
	out := make([]int, 0, len(idx))
	for len(left) > 1 {
		total := 0
		for _, j := range left {
			total += r.Targets[j].Weight
		}
		x := int(t.o.Rand(int64(total)))
		k := 0
		for ; k < len(left)-1; k++ {
			if x -= r.Targets[left[k]].Weight; x < 0 {
				break
			}
		}
		out = append(out, left[k])
		left = slices.Delete(left, k, k+1)
	}
	return append(out, left...)
}

// Succeeded implements retry.Health: an attempt to the target succeeded,
// which restores it.
func (t *Table) Succeeded(pt provider.Target) { t.record(pt, true) }

// Failed implements retry.Health: an attempt to the target failed for a
// reason that is the target's.
func (t *Table) Failed(pt provider.Target) { t.record(pt, false) }

// recordTimeout bounds how long recording an attempt's outcome may take
// (a shared Health's round trip).
const recordTimeout = time.Second

func (t *Table) record(pt provider.Target, ok bool) {
	key := pt.String()
	if !t.tracked[key] {
		return // not a route's target: its health is not kept
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	st, err := t.o.Health.RecordTarget(ctx, key, ok, t.o.Now(), t.o.Policy)
	if err != nil {
		t.o.Logger.Warn("route target health not recorded", "target", key, "error", err)
		return
	}
	if st.JustEjected {
		t.o.Metrics.Ejection(key)
		t.o.Logger.Warn("route target ejected after failing in a row", "target", key,
			"ejections", st.Ejections, "for", st.Until.Sub(st.EjectedAt), "until", st.Until)
	}
}

// Label names a target in metric labels: "<provider>/<model>" for a
// route's target or a model of a provider whose models are listed, else
// "<provider>/*", so that callers' made-up model names cannot grow the
// label set.
func (t *Table) Label(pt provider.Target) string {
	if pt.Entry == nil {
		return ""
	}
	key := pt.String()
	if t.tracked[key] || slices.Contains(pt.Entry.Models, pt.Model) {
		return key
	}
	return pt.Entry.Config.Name + "/*"
}

// Ejected returns, for the metrics' gauge, whether each route target is
// ejected now, by key.
func (t *Table) Ejected() map[string]bool {
	keys := make([]string, 0, len(t.tracked))
	for k := range t.tracked {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	st := t.Health(context.Background(), keys)
	out := make(map[string]bool, len(keys))
	for i, k := range keys {
		out[k] = st[i].Ejected
	}
	return out
}

// IsResolveError reports whether err is a resolution error, and returns
// the request field it names.
func IsResolveError(err error) (field string, ok bool) {
	var re *ResolveError
	if errors.As(err, &re) {
		return re.Field, true
	}
	return "", false
}
