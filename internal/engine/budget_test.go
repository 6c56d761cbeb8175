package engine_test

import (
	"errors"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/state/memory"
)

// TestBudgetReservesTheRoutesOutputCap: a route whose defaults cap its
// calls' output (generation.max_output_tokens: 10) is called by a key with
// a 100-token budget, with requests that set no max_output_tokens. Each
// call may produce at most 10 tokens, so each reserves about 10 plus its
// input and is admitted; reserving the server's default_output_tokens
// (4096) instead would refuse every call to the route on such a budget.
// A request's own max_output_tokens still wins over the route's.
func TestBudgetReservesTheRoutesOutputCap(t *testing.T) {
	providers, err := provider.NewSet([]provider.Config{{Name: "primary", Kind: "mock"}})
	if err != nil {
		t.Fatal(err)
	}
	capped := 10
	routes, err := route.NewTable([]route.Config{{
		Name:     "capped",
		Targets:  []route.TargetConfig{{Model: "primary/echo"}},
		Defaults: route.Defaults{Generation: route.GenerationDefaults{MaxOutputTokens: &capped}},
	}}, providers, route.Options{Policy: config.Default().OutlierDetection})
	if err != nil {
		t.Fatal(err)
	}
	step := &engine.Budget{Budgets: spend.New(memory.New(), nil, nil, spend.DefaultConfig(), nil)}
	key := &auth.Identity{Name: "ci", Budgets: []spend.Budget{{Window: spend.Total, MaxTokens: 100}}}

	reserve := func(req *llmrelayv1.GenerateRequest) (tokens int64, err error) {
		t.Helper()
		ctx, info := callinfo.NewContext(auth.NewContext(t.Context(), key))
		if err := (engine.Resolver{Routes: routes}).Resolve(ctx, req); err != nil {
			t.Fatal(err)
		}
		if _, err := step.Reserve(ctx, req); err != nil {
			return 0, err
		}
		// Reserved, not settled: the next call finds it held.
		return info.Hold().Reserved().Tokens, nil
	}
	hi := &llmrelayv1.GenerateRequest{Model: "capped", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}}}
	got, err := reserve(hi)
	if err != nil {
		t.Fatalf("a call to the route capped at 10 output tokens, on a 100-token budget: %v, want it admitted", err)
	}
	input := got - int64(capped)
	if input <= 0 || input > 20 {
		t.Fatalf("the call reserved %d tokens, want its input (a few tokens) and the route's 10 output tokens", got)
	}

	own := uint32(50)
	asked := &llmrelayv1.GenerateRequest{Model: "capped", Messages: hi.Messages, Generation: &llmrelayv1.GenerationConfig{MaxOutputTokens: &own}}
	got, err = reserve(asked)
	if err != nil {
		t.Fatalf("a call asking for 50 output tokens: %v, want it admitted", err)
	}
	if got <= int64(own) || got > int64(own)+20 {
		t.Fatalf("a call asking for 50 output tokens reserved %d tokens, want its input and its own 50", got)
	}

	// What is held now leaves no room for another call of 50.
	_, err = reserve(asked)
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Reason != apierr.ReasonBudgetExhausted {
		t.Fatalf("a third call of 50 with some 65 tokens held of 100: %v, want BUDGET_EXHAUSTED", err)
	}
}
