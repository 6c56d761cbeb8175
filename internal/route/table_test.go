package route_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	_ "github.com/llmrelay/llmrelay/internal/provider/mock"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

// seeded returns a deterministic Rand, safe for concurrent use.
func seeded() func(int64) int64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(13, 13))
	return func(n int64) int64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Int64N(n)
	}
}

func providers(t *testing.T, names ...string) *provider.Set {
	t.Helper()
	var cfgs []provider.Config
	for _, n := range names {
		cfgs = append(cfgs, provider.Config{Name: n, Kind: "mock"})
	}
	set, err := provider.NewSet(cfgs)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

var testRoutes = []route.Config{
	{Name: "smart", Targets: []route.TargetConfig{{Model: "a/echo"}, {Model: "b/echo"}, {Model: "c/echo"}}},
	{Name: "fast", Balance: route.BalanceWeighted, Targets: []route.TargetConfig{{Model: "a/lorem", Weight: 3}, {Model: "b/lorem", Weight: 1}}},
}

// newTable builds the test routes; with a clock, their targets' health
// runs on it under the policy p.
func newTable(t *testing.T, clock *statetest.Clock, p state.OutlierPolicy) *route.Table {
	t.Helper()
	o := route.Options{Rand: seeded(), Policy: p}
	if clock != nil {
		o.Now = clock.Now
	}
	tb, err := route.NewTable(testRoutes, providers(t, "a", "b", "c"), o)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// keys renders resolved targets as "a/echo b/echo ...".
func keys(ts []provider.Target) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, " ")
}

func TestResolve(t *testing.T) {
	tb := newTable(t, nil, state.DefaultOutlierPolicy)
	tests := []struct {
		name      string
		model     string
		fallbacks []string
		want      string
		wantRoute string
	}{
		{"an ordered route's targets in order", "smart", nil, "a/echo b/echo c/echo", "smart"},
		{"a provider's model", "b/lorem", nil, "b/lorem", ""},
		{"fallback models after the model's", "b/lorem", []string{"c/echo", "a/echo"}, "b/lorem c/echo a/echo", ""},
		{"a route as a fallback adds its targets", "c/lorem", []string{"smart"}, "c/lorem a/echo b/echo c/echo", ""},
		{"a target already listed is not repeated", "smart", []string{"b/echo", "c/lorem"}, "a/echo b/echo c/echo c/lorem", "smart"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tb.Resolve(t.Context(), tt.model, tt.fallbacks)
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(res.Targets); got != tt.want {
				t.Errorf("targets %s, want %s", got, tt.want)
			}
			if res.Name != tt.model || (res.Route == nil) != (tt.wantRoute == "") || res.Route != nil && res.Route.Name != tt.wantRoute {
				t.Errorf("resolved %q route %v, want %q route %q", res.Name, res.Route, tt.model, tt.wantRoute)
			}
		})
	}
}

func TestResolveErrorsNameTheirField(t *testing.T) {
	tb := newTable(t, nil, state.DefaultOutlierPolicy)
	tests := []struct {
		name      string
		model     string
		fallbacks []string
		field     string
		want      error
		message   string
	}{
		{"an unknown route", "clever", nil, "model", provider.ErrUnknownModel, `"clever" is not a route`},
		{"an unknown provider", "z/echo", nil, "model", provider.ErrUnknownProvider, `"z"`},
		{"a model the provider does not serve", "a/gpt", nil, "model", provider.ErrUnknownModel, `"gpt"`},
		{"an unknown fallback route", "smart", []string{"a/echo", "clever"}, "fallback_models[1]", provider.ErrUnknownModel, `"clever" is not a route`},
		{"an unknown fallback provider", "smart", []string{"z/echo"}, "fallback_models[0]", provider.ErrUnknownProvider, `"z"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tb.Resolve(t.Context(), tt.model, tt.fallbacks)
			field, ok := route.IsResolveError(err)
			if !ok || field != tt.field || !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("error %v (field %q), want %v on %s mentioning %s", err, field, tt.want, tt.field, tt.message)
			}
		})
	}
}

// TestNewTableRefusesATargetThatDoesNotResolve: every target that does
// not resolve, each at its setting.
func TestNewTableRefusesATargetThatDoesNotResolve(t *testing.T) {
	_, err := route.NewTable([]route.Config{
		{Name: "r", Targets: []route.TargetConfig{{Model: "a/echo"}, {Model: "a/gpt-4"}}},
		{Name: "s", Targets: []route.TargetConfig{{Model: "a/gpt-5"}}},
	}, providers(t, "a"), route.Options{Policy: state.DefaultOutlierPolicy})
	want := "routes[0].targets[1].model: unknown model \"gpt-4\" for provider \"a\"\n" +
		"routes[1].targets[0].model: unknown model \"gpt-5\" for provider \"a\""
	if !errors.Is(err, provider.ErrUnknownModel) || err.Error() != want {
		t.Fatalf("error %v, want the unknown models, each at its setting:\n%s", err, want)
	}
}

// TestWeightedBalancingSplitsByWeight: over 1,000 calls to a route
// weighted 3:1, the first target of each call is drawn within a few
// percent of 750:250, and the other target is always the fallback.
func TestWeightedBalancingSplitsByWeight(t *testing.T) {
	tb := newTable(t, nil, state.DefaultOutlierPolicy)
	first := map[string]int{}
	for range 1000 {
		res, err := tb.Resolve(t.Context(), "fast", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Targets) != 2 || res.Targets[0] == res.Targets[1] {
			t.Fatalf("targets %s, want both, once each", keys(res.Targets))
		}
		first[res.Targets[0].String()]++
	}
	if a := first["a/lorem"]; a < 720 || a > 780 || a+first["b/lorem"] != 1000 {
		t.Fatalf("first targets %v, want a/lorem within 750±30", first)
	}
}

// TestEjectedTargetGetsNoCallsDuringItsCooldown drives a target's health
// as the attempt plan does and moves the clock: no sleeps.
func TestEjectedTargetGetsNoCallsDuringItsCooldown(t *testing.T) {
	clock := statetest.NewClock()
	tb := newTable(t, clock, state.OutlierPolicy{Failures: 3, BaseEjection: 30 * time.Second, MaxEjection: time.Minute})
	resolve := func(model string) string {
		t.Helper()
		res, err := tb.Resolve(t.Context(), model, nil)
		if err != nil {
			t.Fatal(err)
		}
		return keys(res.Targets)
	}
	a := provider.Target{Entry: mustGet(t, tb, "a"), Model: "echo"}
	for range 3 {
		tb.Failed(a)
	}
	if got := resolve("smart"); got != "b/echo c/echo" {
		t.Fatalf("during the cooldown: %s, want a/echo skipped", got)
	}
	// A weighted route never draws an ejected target.
	al := provider.Target{Entry: a.Entry, Model: "lorem"}
	for range 3 {
		tb.Failed(al)
	}
	for range 100 {
		if got := resolve("fast"); got != "b/lorem" {
			t.Fatalf("weighted during the cooldown: %s, want b/lorem only", got)
		}
	}
	clock.Advance(30 * time.Second)
	if got := resolve("smart"); got != "a/echo b/echo c/echo" {
		t.Fatalf("after the cooldown: %s, want a/echo back first", got)
	}
	// Back on probation: one failure ejects it again, for longer.
	tb.Failed(a)
	clock.Advance(59 * time.Second)
	if got := resolve("smart"); got != "b/echo c/echo" {
		t.Fatalf("59s into the second, 60s ejection: %s, want a/echo skipped", got)
	}
	clock.Advance(time.Second)
	tb.Succeeded(a)
	tb.Failed(a)
	if got := resolve("smart"); got != "a/echo b/echo c/echo" {
		t.Fatalf("restored by a success, then one failure: %s, want a/echo in rotation", got)
	}
}

func TestAllEjectedTriesTheLeastRecentlyEjectedFirst(t *testing.T) {
	clock := statetest.NewClock()
	tb := newTable(t, clock, state.OutlierPolicy{Failures: 1, BaseEjection: time.Minute, MaxEjection: time.Minute})
	for _, p := range []string{"b", "c", "a"} { // ejected in this order
		tb.Failed(provider.Target{Entry: mustGet(t, tb, p), Model: "echo"})
		clock.Advance(time.Second)
	}
	res, err := tb.Resolve(t.Context(), "smart", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(res.Targets); got != "b/echo c/echo a/echo" {
		t.Fatalf("every target ejected: %s, want the least recently ejected first", got)
	}
}

func TestOnlyRouteTargetsAreTracked(t *testing.T) {
	h := memory.New()
	tb, err := route.NewTable(testRoutes, providers(t, "a", "b", "c"), route.Options{
		Health: h, Policy: state.OutlierPolicy{Failures: 1, BaseEjection: time.Minute, MaxEjection: time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	other := provider.Target{Entry: mustGet(t, tb, "c"), Model: "lorem"} // no route's target
	tb.Failed(other)
	if st, _ := h.TargetStatus(t.Context(), []string{"c/lorem"}, time.Now()); st[0] != (state.TargetStatus{}) {
		t.Fatalf("a target no route uses was recorded: %+v", st[0])
	}
	if !tb.Tracks("a/echo") || tb.Tracks("c/lorem") {
		t.Error("Tracks disagrees with the routes' targets")
	}
	if got := tb.Label(other); got != "c/lorem" {
		t.Errorf("Label of a listed model = %q", got)
	}
}

func mustGet(t *testing.T, tb *route.Table, name string) *provider.Entry {
	t.Helper()
	for _, r := range tb.Routes() {
		for _, tg := range r.Targets {
			if tg.Entry.Config.Name == name {
				return tg.Entry
			}
		}
	}
	t.Fatalf("no target of provider %s", name)
	return nil
}

// TestNewTableNeedsAPolicy: the outlier policy's default is the config's
// (outlier_detection); a table makes up none of its own.
func TestNewTableNeedsAPolicy(t *testing.T) {
	if _, err := route.NewTable(testRoutes, providers(t, "a", "b", "c"), route.Options{}); err == nil {
		t.Fatal("a table without an outlier policy was built")
	}
}
