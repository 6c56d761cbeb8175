package server_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	adminv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/admin/v1"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/servertools"
	"github.com/llmrelay/llmrelay/internal/servertools/mcptest"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// adminSecret is the config's admin key.
const adminSecret = "admin-secret-for-the-tests"

// governanceConfig is a config with an admin key (ops) and the mock
// provider; redis, when set, is the store every replica shares.
func governanceConfig(redis *redistest.Server, prefix string) *config.Config {
	cfg := config.Default()
	if redis != nil {
		cfg = redisConfig(redis, "fail_closed")
		cfg.State.Redis.KeyPrefix = prefix
	}
	cfg.Providers = config.DefaultProviders()
	cfg.Auth.Keys = append(cfg.Auth.Keys, config.APIKey{Name: "ops", SHA256: auth.HashKey(adminSecret), Scopes: []string{"admin"}})
	return cfg
}

// redisFor returns a redis-server for the tests run with either state
// store, as their store is named ("memory" or "redis"): nil for memory,
// which governanceConfig takes as the memory store.
func redisFor(t *testing.T, store string) *redistest.Server {
	if store != "redis" {
		return nil
	}
	return redistest.Start(t)
}

// errorInfo returns a status error's code, ErrorInfo and RetryInfo delay.
func errorInfo(err error) (codes.Code, *errdetails.ErrorInfo, time.Duration) {
	st := status.Convert(err)
	var info *errdetails.ErrorInfo
	var wait time.Duration
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.RetryInfo:
			wait = d.GetRetryDelay().AsDuration()
		}
	}
	return st.Code(), info, wait
}

func createKey(t *testing.T, in *servertest.Instance, k *adminv1.Key) string {
	t.Helper()
	resp, err := adminv1.NewKeyServiceClient(in.Conn).CreateKey(bearer(t.Context(), adminSecret), &adminv1.CreateKeyRequest{Key: k})
	if err != nil {
		t.Fatalf("CreateKey(%s): %v", k.GetName(), err)
	}
	return resp.GetSecret()
}

// generate runs one call with key and returns its final, or its error.
func generate(ctx context.Context, in *servertest.Instance, key string, req *llmrelayv1.GenerateRequest) (*llmrelayv1.Final, error) {
	events, err := servertest.Collect(bearer(ctx, key), in.Client, req)
	if err != nil {
		return nil, err
	}
	return events[len(events)-1].GetFinal(), nil
}

// TestKeysAcrossReplicas is the first done-when: two replicas
// sharing a real redis-server; a key created through the API on replica A
// authenticates at once on replica B; revoked on B, it is refused there at
// once and on A within a second (A's clock moves the second: A read the
// key just before the revocation).
func TestKeysAcrossReplicas(t *testing.T) {
	redis := redistest.Start(t)
	prefix := "keys-" + t.Name() + ":"
	clockA, clockB := statetest.NewClock(), statetest.NewClock()
	a := servertest.Start(t, governanceConfig(redis, prefix), server.WithGovernanceClock(clockA.Now))
	b := servertest.Start(t, governanceConfig(redis, prefix), server.WithGovernanceClock(clockB.Now))

	secret := createKey(t, a, &adminv1.Key{Name: "ci", Scopes: []string{"generate"}, Models: []string{"mock/*"}})
	for name, in := range map[string]*servertest.Instance{"B": b, "A": a} {
		if _, err := generate(t.Context(), in, secret, echoRequest("hello")); err != nil {
			t.Fatalf("the new key on replica %s: %v", name, err)
		}
	}
	got, err := adminv1.NewKeyServiceClient(b.Conn).GetKey(bearer(t.Context(), adminSecret), &adminv1.GetKeyRequest{Name: "ci"})
	if err != nil || got.GetKey().GetSource() != adminv1.KeySource_KEY_SOURCE_STORE || got.GetKey().GetCreatedBy() != "ops" {
		t.Fatalf("GetKey on replica B: %v, %v", got, err)
	}

	if _, err := adminv1.NewKeyServiceClient(b.Conn).RevokeKey(bearer(t.Context(), adminSecret), &adminv1.RevokeKeyRequest{Name: "ci"}); err != nil {
		t.Fatal(err)
	}
	wantRevoked := func(name string, in *servertest.Instance) {
		t.Helper()
		_, err := generate(t.Context(), in, secret, echoRequest("hello"))
		if code, info, _ := errorInfo(err); code != codes.Unauthenticated || info.GetReason() != "API_KEY_REVOKED" {
			t.Fatalf("the revoked key on replica %s: %v, want UNAUTHENTICATED API_KEY_REVOKED", name, err)
		}
	}
	wantRevoked("B", b)
	clockA.Advance(time.Second)
	wantRevoked("A", a)
}

// pricedUpstream is an OpenAI-compatible upstream whose every reply is 10
// input and 5 output tokens, priced at $10 and $20 per million: $0.0002 a
// call.
func pricedUpstream(t *testing.T) (*openaitest.Server, func(*config.Config)) {
	up := openaitest.Start(t, openaitest.Options{Chunks: 5})
	return up, func(cfg *config.Config) {
		cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL(), Models: []string{"fake-model"}}}
		cfg.Pricing.Models = map[string]usage.Price{"up/fake-model": {"input": 10, "output": 20}}
	}
}

const callCost = 10*10e-6 + 5*20e-6

// budgetRequest asks for at most 5 output tokens, with a prompt whose size
// reserves more input tokens than the upstream counts: each call reserves
// more than it spends.
func budgetRequest() *llmrelayv1.GenerateRequest {
	max := uint32(5)
	return &llmrelayv1.GenerateRequest{
		Model:      "up/fake-model",
		Messages:   []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "please answer this question in five words or fewer"}},
		Generation: &llmrelayv1.GenerationConfig{MaxOutputTokens: &max},
	}
}

// TestBudgetAcrossReplicas is the second done-when: a key with
// {window: day, max_cost_usd: 0.01} and a priced model, 32 callers at once
// across two replicas sharing a real redis-server. Calls succeed until the
// budget is spent, then both replicas refuse with BUDGET_EXHAUSTED, with a
// RetryInfo until midnight UTC, before any provider request; the cost
// settled never exceeds the budget by more than one call's reservation;
// on the next day (both replicas' clocks moved) the key is admitted again.
func TestBudgetAcrossReplicas(t *testing.T) {
	redis := redistest.Start(t)
	up, priced := pricedUpstream(t)
	prefix := "budget-" + t.Name() + ":"
	clock := statetest.NewClock() // 2025-01-02T03:04:05Z, shared by both replicas
	var replicas []*servertest.Instance
	for range 2 {
		cfg := governanceConfig(redis, prefix)
		priced(cfg)
		replicas = append(replicas, servertest.Start(t, cfg, server.WithGovernanceClock(clock.Now)))
	}
	secret := createKey(t, replicas[0], &adminv1.Key{Name: "ci", Scopes: []string{"generate"}, Models: []string{"*"},
		Budgets: []*adminv1.Budget{{Window: "day", MaxCostUsd: 0.01}}})

	var succeeded, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range 32 {
		in := replicas[i%2]
		wg.Go(func() {
			for {
				_, err := generate(t.Context(), in, secret, budgetRequest())
				if err == nil {
					succeeded.Add(1)
					continue
				}
				code, info, wait := errorInfo(err)
				if code != codes.ResourceExhausted || info.GetReason() != "BUDGET_EXHAUSTED" || info.GetMetadata()["window"] != "day" {
					t.Errorf("a call: %v, want only successes, then BUDGET_EXHAUSTED", err)
					return
				}
				if midnight := time.Date(2025, 1, 3, 0, 0, 0, 0, time.UTC); wait != midnight.Sub(clock.Now()) {
					t.Errorf("RetryInfo %v, want the time until midnight UTC, %v", wait, midnight.Sub(clock.Now()))
				}
				refused.Add(1)
				return
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// A caller refused while others held reservations gave up; the calls
	// since settled for less than they reserved. Spend the rest, one call
	// at a time, until the budget has no room even for one reservation.
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("the budget never ran out")
		}
		if _, err := generate(t.Context(), replicas[i%2], secret, budgetRequest()); err != nil {
			break
		}
		succeeded.Add(1)
	}
	n := succeeded.Load()
	if got := up.Requests(); got != n {
		t.Fatalf("the upstream saw %d requests for %d successful calls: refused calls reached it", got, n)
	}
	// Refused on both replicas, with nothing sent upstream.
	for i, in := range replicas {
		if _, err := generate(t.Context(), in, secret, budgetRequest()); err == nil {
			t.Fatalf("replica %d admitted a call past the budget", i)
		}
	}
	if got := up.Requests(); got != n {
		t.Fatalf("the upstream saw %d requests after the refusals, want %d", got, n)
	}
	resp, err := adminv1.NewUsageServiceClient(replicas[1].Conn).GetUsage(bearer(t.Context(), adminSecret), &adminv1.GetUsageRequest{StartDay: "2025-01-02", Key: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	rec := resp.GetRecords()[0]
	spent := rec.GetCostUsd()
	reservation := spend.USD(spend.Nanos(float64((proto.Size(budgetRequest())+2)/3)*10e-6 + 5*20e-6))
	t.Logf("%d calls succeeded (%d refused by the budget), $%v settled of $0.01; one reservation is $%v", n, refused.Load(), spent, reservation)
	if rec.GetCalls() != uint64(n) || spent > 0.01+reservation || spent <= 0.01-reservation {
		t.Fatalf("usage %v: %d calls costing $%v, want %d calls, within one reservation ($%v) of the $0.01 budget", rec, rec.GetCalls(), spent, n, reservation)
	}
	if want := float64(n) * callCost; spent < want-1e-9 || spent > want+1e-9 {
		t.Fatalf("settled $%v for %d calls of $%v", spent, n, callCost)
	}

	clock.Advance(24 * time.Hour)
	for i, in := range replicas {
		if _, err := generate(t.Context(), in, secret, budgetRequest()); err != nil {
			t.Fatalf("replica %d on the next day: %v", i, err)
		}
	}
}

// TestBudgetSetAfterCallsCountsThem: a stored key made without a budget
// spends, then is given a day budget (keys update --budget): the budget
// starts from what the key spent today, as GetKey and UpdateKey show, and
// one without room left for a call refuses it; with either store.
func TestBudgetSetAfterCallsCountsThem(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			up, priced := pricedUpstream(t)
			cfg := governanceConfig(redisFor(t, store), "late:")
			priced(cfg)
			in := servertest.Start(t, cfg, server.WithGovernanceClock(statetest.NewClock().Now))
			secret := createKey(t, in, &adminv1.Key{Name: "late", Scopes: []string{"generate"}, Models: []string{"*"}})
			for range 3 { // 15 tokens each
				if _, err := generate(t.Context(), in, secret, budgetRequest()); err != nil {
					t.Fatal(err)
				}
			}
			keys := adminv1.NewKeyServiceClient(in.Conn)
			setBudget := func(maxTokens uint64) *adminv1.Budget {
				t.Helper()
				resp, err := keys.UpdateKey(bearer(t.Context(), adminSecret), &adminv1.UpdateKeyRequest{
					Key:        &adminv1.Key{Name: "late", Budgets: []*adminv1.Budget{{Window: "day", MaxTokens: maxTokens}}},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"budgets"}}})
				if err != nil {
					t.Fatal(err)
				}
				return resp.GetKey().GetBudgets()[0]
			}
			if got := setBudget(1_000_000).GetSpentTokens(); got != 45 {
				t.Fatalf("UpdateKey shows the new day budget with %d tokens spent, want the day's 45", got)
			}
			got, err := keys.GetKey(bearer(t.Context(), adminSecret), &adminv1.GetKeyRequest{Name: "late"})
			if err != nil {
				t.Fatal(err)
			}
			if b := got.GetKey().GetBudgets()[0]; b.GetSpentTokens() != 45 || math.Abs(b.GetSpentCostUsd()-3*callCost) > 1e-9 {
				t.Fatalf("GetKey: %v, want 45 tokens and $%v spent", b, 3*callCost)
			}
			// 45 spent and some 30 to reserve: no room in 65.
			setBudget(65)
			_, err = generate(t.Context(), in, secret, budgetRequest())
			if code, info, _ := errorInfo(err); code != codes.ResourceExhausted || info.GetReason() != "BUDGET_EXHAUSTED" {
				t.Fatalf("a call with 45 of 65 tokens spent: %v, want BUDGET_EXHAUSTED", err)
			}
			if got := up.Requests(); got != 3 {
				t.Fatalf("the upstream saw %d requests, want 3", got)
			}
		})
	}
}

// TestReservationOverTheBudgetIsNotToldToWait: a call whose reservation
// alone is more than its budget's cap (here the 4096 output tokens a call
// without max_output_tokens reserves, on a day budget of 1000 tokens) is
// refused in a window nothing spent, and would be in every window after:
// the refusal says so and carries no RetryInfo sending the client to wait
// for midnight. The same call asking for few output tokens is admitted.
func TestReservationOverTheBudgetIsNotToldToWait(t *testing.T) {
	in := servertest.Start(t, governanceConfig(nil, ""), server.WithGovernanceClock(statetest.NewClock().Now))
	secret := createKey(t, in, &adminv1.Key{Name: "small", Scopes: []string{"generate"}, Models: []string{"*"},
		Budgets: []*adminv1.Budget{{Window: "day", MaxTokens: 1000}}})

	_, err := generate(t.Context(), in, secret, echoRequest("hello"))
	code, info, wait := errorInfo(err)
	if code != codes.ResourceExhausted || info.GetReason() != "BUDGET_EXHAUSTED" {
		t.Fatalf("a call reserving 4096 output tokens on a 1000-token budget: %v, want BUDGET_EXHAUSTED", err)
	}
	if wait != 0 {
		t.Errorf("RetryInfo of %v: the call would be refused after the reset too, want none", wait)
	}
	if info.GetMetadata()["over_cap"] != "true" {
		t.Errorf("ErrorInfo metadata %v, want over_cap true: a client that reads resets_at must be told waiting does not help", info.GetMetadata())
	}
	if msg := status.Convert(err).Message(); !strings.Contains(msg, "more than the budget allows") || strings.Contains(msg, "resets at") {
		t.Errorf("message %q, want it to say the reservation is over the cap, not to wait for the reset", msg)
	}

	few := echoRequest("hello")
	max := uint32(5)
	few.Generation = &llmrelayv1.GenerationConfig{MaxOutputTokens: &max}
	if _, err := generate(t.Context(), in, secret, few); err != nil {
		t.Fatalf("the same call asking for 5 output tokens: %v, want admitted", err)
	}
}

// TestTeamBudgetStopsBothKeys: a team budget shared by two keys stops both
// once one of them has spent it, and a key of no team goes on.
func TestTeamBudgetStopsBothKeys(t *testing.T) {
	up, priced := pricedUpstream(t)
	cfg := governanceConfig(nil, "")
	priced(cfg)
	cfg.Teams = []spend.Team{{Name: "research", Budgets: []spend.Budget{{Window: spend.Month, MaxTokens: 100}}}}
	for _, name := range []string{"alice", "bob", "carol"} {
		k := config.APIKey{Name: name, SHA256: auth.HashKey(name + "-secret"), Scopes: []string{"generate"}, Models: []string{"*"}}
		if name != "carol" {
			k.Team = "research"
		}
		cfg.Auth.Keys = append(cfg.Auth.Keys, k)
	}
	in := servertest.Start(t, cfg)
	// 15 tokens a call, about 30 reserved: alice alone spends the team's
	// 100 tokens; bob, who has made no call, is stopped with her.
	calls := 0
	for ; calls < 20; calls++ {
		if _, err := generate(t.Context(), in, "alice-secret", budgetRequest()); err != nil {
			break
		}
	}
	if calls < 2 || calls >= 20 {
		t.Fatalf("%d calls before the team's budget refused one", calls)
	}
	for _, key := range []string{"alice-secret", "bob-secret"} {
		_, err := generate(t.Context(), in, key, budgetRequest())
		code, info, _ := errorInfo(err)
		if code != codes.ResourceExhausted || info.GetReason() != "BUDGET_EXHAUSTED" || info.GetMetadata()["budget"] != "team" || info.GetMetadata()["team"] != "research" {
			t.Fatalf("%s after the team's budget was spent: %v (%v), want BUDGET_EXHAUSTED by the team's budget", key, err, info.GetMetadata())
		}
	}
	if _, err := generate(t.Context(), in, "carol-secret", budgetRequest()); err != nil {
		t.Fatalf("a key of no team: %v", err)
	}
	if got := up.Requests(); got != int64(calls)+1 {
		t.Fatalf("the upstream saw %d requests, want %d", got, calls+1)
	}
	body := in.Server.Metrics().Text()
	if !strings.Contains(body, `llmrelay_budget_refusals_total{owner="team",window="month"} 3`) || !strings.Contains(body, `key="alice",model="fake-model",provider="up",route="",team="research"`) {
		t.Errorf("/metrics lacks the team's refusals or its label:\n%s", grepLines(body, "budget_refusals", "research"))
	}
}

// TestListTeamsShowsWhatTheirBudgetsSpent: ListTeams lists the configured
// teams by name, each budget with its window, its caps and what its
// current window spent: the calls of all the team's keys, config and
// stored, and none of a key of another team or of none; a team without a
// budget is listed without one; with either store. Before it, a team's
// spend was shown nowhere.
func TestListTeamsShowsWhatTheirBudgetsSpent(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			_, priced := pricedUpstream(t)
			cfg := governanceConfig(redisFor(t, store), "teams:")
			priced(cfg)
			cfg.Teams = []spend.Team{
				{Name: "research", Budgets: []spend.Budget{
					{Window: spend.Month, MaxCostUSD: 200}, {Window: spend.Day, MaxTokens: 1_000_000}, {Window: spend.Total, MaxCostUSD: 1, MaxTokens: 5000},
				}},
				{Name: "design", Budgets: []spend.Budget{{Window: spend.Day, MaxTokens: 500}}},
				{Name: "idle"},
			}
			for name, team := range map[string]string{"notebook": "research", "sketch": "design", "solo": ""} {
				cfg.Auth.Keys = append(cfg.Auth.Keys, config.APIKey{Name: name, SHA256: auth.HashKey(name + "-secret"),
					Scopes: []string{"generate"}, Models: []string{"*"}, Team: team})
			}
			clock := statetest.NewClock() // 2025-01-02T03:04:05Z
			in := servertest.Start(t, cfg, server.WithGovernanceClock(clock.Now))
			ci := createKey(t, in, &adminv1.Key{Name: "ci", Scopes: []string{"generate"}, Models: []string{"*"}, Team: "research"})

			// 15 tokens and $0.0002 a call: research's keys make one call
			// on the 2nd and two on the 3rd; design's and solo's one each.
			call := func(secret string) {
				t.Helper()
				if _, err := generate(t.Context(), in, secret, budgetRequest()); err != nil {
					t.Fatalf("a call of %s: %v", secret, err)
				}
			}
			call("notebook-secret")
			clock.Advance(24 * time.Hour)
			for _, secret := range []string{"notebook-secret", ci, "sketch-secret", "solo-secret"} {
				call(secret)
			}

			keys := adminv1.NewKeyServiceClient(in.Conn)
			list := func(name string) []string {
				t.Helper()
				resp, err := keys.ListTeams(bearer(t.Context(), adminSecret), &adminv1.ListTeamsRequest{Name: name})
				if err != nil {
					t.Fatalf("ListTeams(%q): %v", name, err)
				}
				var got []string
				for _, team := range resp.GetTeams() {
					got = append(got, team.GetName()+":")
					for _, b := range team.GetBudgets() {
						resets := "never"
						if b.GetResetsAt() != nil {
							resets = b.GetResetsAt().AsTime().Format(time.RFC3339)
						}
						got = append(got, fmt.Sprintf("  %s max $%v %d tokens, spent $%.7f %d tokens, resets %s",
							b.GetWindow(), b.GetMaxCostUsd(), b.GetMaxTokens(), b.GetSpentCostUsd(), b.GetSpentTokens(), resets))
					}
				}
				return got
			}
			want := []string{
				"design:",
				"  day max $0 500 tokens, spent $0.0002000 15 tokens, resets 2025-01-04T00:00:00Z",
				"idle:",
				"research:",
				"  month max $200 0 tokens, spent $0.0006000 45 tokens, resets 2025-02-01T00:00:00Z",
				"  day max $0 1000000 tokens, spent $0.0004000 30 tokens, resets 2025-01-04T00:00:00Z",
				"  total max $1 5000 tokens, spent $0.0006000 45 tokens, resets never",
			}
			if got := list(""); !slices.Equal(got, want) {
				t.Errorf("ListTeams:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if got := list("research"); !slices.Equal(got, want[3:]) {
				t.Errorf("ListTeams of research:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want[3:], "\n"))
			}
			if got := list("nope"); len(got) != 0 {
				t.Errorf("ListTeams of a team not configured: %v, want none", got)
			}
			// An admin read: a key that may generate, or read usage, may not.
			_, err := keys.ListTeams(bearer(t.Context(), "notebook-secret"), &adminv1.ListTeamsRequest{})
			if code, info, _ := errorInfo(err); code != codes.PermissionDenied || info.GetReason() != "SCOPE_MISSING" {
				t.Errorf("ListTeams with a generate key: %v, want PERMISSION_DENIED SCOPE_MISSING", err)
			}
		})
	}
}

// TestGetUsageEqualsTheFinals: GetUsage's totals for a key and its team,
// less what they say was estimated, equal the sum of the Finals' usage of
// its calls: calls that took a retry, a fallback to another target and a
// hedge among them, reasoning and cached input tokens included.
func TestGetUsageEqualsTheFinals(t *testing.T) {
	cfg := governanceConfig(nil, "")
	cfg.Providers = append(cfg.Providers, provider.Config{Name: "down", Kind: "mock", Options: map[string]any{"fault": map[string]any{"status": 404}}})
	cfg.Routes = []route.Config{{Name: "smart", Targets: []route.TargetConfig{{Model: "down/echo"}, {Model: "mock/echo"}}}}
	cfg.Retry.Hedging.MinHedgeAfter = time.Millisecond
	cfg.Teams = []spend.Team{{Name: "research"}}
	cfg.Auth.Keys = append(cfg.Auth.Keys, config.APIKey{Name: "app", SHA256: auth.HashKey("app-secret"), Scopes: []string{"generate"}, Models: []string{"*"}, Team: "research"})
	in := servertest.Start(t, cfg)

	retried := withOptions(t, echoRequest("one two three"), map[string]any{"faults": []any{map[string]any{"error_after": 1}, map[string]any{}}})
	retried.Retry = &llmrelayv1.RetryPolicy{MaxAttempts: 3, InitialBackoff: durationpb.New(time.Millisecond), MaxBackoff: durationpb.New(time.Millisecond)}
	fellBack := echoRequest("four five")
	fellBack.Model = "smart"
	hedged := withOptions(t, echoRequest("six seven"), map[string]any{"faults": []any{map[string]any{"first_delay_ms": 60000}, map[string]any{}}})
	hedged.Hedging = &llmrelayv1.HedgePolicy{HedgeAfter: durationpb.New(time.Millisecond)}
	thinking := echoRequest("eight")
	thinking.Model = "mock/think"
	cached := withOptions(t, echoRequest("nine"), map[string]any{"faults": []any{map[string]any{"usage": map[string]any{
		"input_tokens": 1000, "output_tokens": 20, "cached_input_tokens": 600}}}})

	var sum provider.Usage
	for name, req := range map[string]*llmrelayv1.GenerateRequest{"retried": retried, "fell back": fellBack, "hedged": hedged, "thinking": thinking, "cached": cached} {
		final, err := generate(t.Context(), in, "app-secret", req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch name {
		case "retried":
			if final.GetAttempts() != 2 {
				t.Fatalf("retried: %d attempts", final.GetAttempts())
			}
		case "fell back":
			if final.GetProvider() != "mock" || final.GetAttempts() != 2 {
				t.Fatalf("fell back: served by %s after %d attempts", final.GetProvider(), final.GetAttempts())
			}
		case "hedged":
			if final.GetHedges() != 1 {
				t.Fatalf("hedged: %d hedges", final.GetHedges())
			}
		}
		u := final.GetUsage()
		sum.InputTokens += int64(u.GetInputTokens())
		sum.OutputTokens += int64(u.GetOutputTokens())
		sum.ReasoningTokens += int64(u.GetReasoningTokens())
		sum.CachedInputTokens += int64(u.GetCachedInputTokens())
		sum.CacheCreationInputTokens += int64(u.GetCacheCreationInputTokens())
	}
	if sum.ReasoningTokens == 0 || sum.CachedInputTokens != 600 {
		t.Fatalf("the Finals' usage %+v lacks reasoning or cached tokens", sum)
	}
	resp, err := adminv1.NewUsageServiceClient(in.Conn).GetUsage(bearer(t.Context(), adminSecret), &adminv1.GetUsageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetRecords()) != 2 {
		t.Fatalf("usage records %v, want the key's and its team's", resp.GetRecords())
	}
	for _, rec := range resp.GetRecords() {
		u := rec.GetUsage()
		// Less what was estimated for the attempts cut before their usage
		// came (the retried call's first, which streamed a word; the
		// hedged call's loser, if its stream had opened).
		got := provider.Usage{InputTokens: int64(u.GetInputTokens() - rec.GetEstimatedInputTokens()), OutputTokens: int64(u.GetOutputTokens() - rec.GetEstimatedOutputTokens()),
			ReasoningTokens: int64(u.GetReasoningTokens()), CachedInputTokens: int64(u.GetCachedInputTokens()), CacheCreationInputTokens: int64(u.GetCacheCreationInputTokens())}
		if got != sum || rec.GetCalls() != 5 {
			t.Errorf("GetUsage record %v: %d calls, %+v; want 5 calls and the Finals' sum %+v", rec.GetSubject(), rec.GetCalls(), got, sum)
		}
		if rec.GetEstimatedOutputTokens() == 0 || rec.GetEstimatedInputTokens() < uint64(proto.Size(retried)+2)/3 {
			t.Errorf("GetUsage record %v estimated %d input and %d output tokens, want at least the retried call's cut attempt's", rec.GetSubject(),
				rec.GetEstimatedInputTokens(), rec.GetEstimatedOutputTokens())
		}
	}
}

// TestAdminScopes: the admin API needs the admin scope (GetUsage also opens
// to usage.read); config keys are read-only through it; stored keys come
// and go with their errors.
func TestAdminScopes(t *testing.T) {
	cfg := governanceConfig(nil, "")
	cfg.Auth.Keys = append(cfg.Auth.Keys,
		config.APIKey{Name: "app", SHA256: auth.HashKey("app-secret"), Scopes: []string{"generate"}, Models: []string{"*"}},
		config.APIKey{Name: "finance", SHA256: auth.HashKey("finance-secret"), Scopes: []string{"usage.read"}})
	in := servertest.Start(t, cfg)
	keys, use := adminv1.NewKeyServiceClient(in.Conn), adminv1.NewUsageServiceClient(in.Conn)
	ctx := t.Context()
	tests := []struct {
		name   string
		call   func() error
		code   codes.Code
		reason string
	}{
		{"no key", func() error { _, err := keys.ListKeys(ctx, &adminv1.ListKeysRequest{}); return err }, codes.Unauthenticated, "CREDENTIALS_MISSING"},
		{"a generate key", func() error {
			_, err := keys.CreateKey(bearer(ctx, "app-secret"), &adminv1.CreateKeyRequest{Key: &adminv1.Key{Name: "x", Scopes: []string{"admin"}}})
			return err
		}, codes.PermissionDenied, "SCOPE_MISSING"},
		{"usage.read lists no keys", func() error {
			_, err := keys.ListKeys(bearer(ctx, "finance-secret"), &adminv1.ListKeysRequest{})
			return err
		}, codes.PermissionDenied, "SCOPE_MISSING"},
		{"usage.read lists no teams", func() error {
			_, err := keys.ListTeams(bearer(ctx, "finance-secret"), &adminv1.ListTeamsRequest{})
			return err
		}, codes.PermissionDenied, "SCOPE_MISSING"},
		{"usage.read reads usage", func() error {
			_, err := use.GetUsage(bearer(ctx, "finance-secret"), &adminv1.GetUsageRequest{})
			return err
		}, codes.OK, ""},
		{"a config key is read-only", func() error {
			_, err := keys.RevokeKey(bearer(ctx, adminSecret), &adminv1.RevokeKeyRequest{Name: "app"})
			return err
		}, codes.FailedPrecondition, "KEY_READ_ONLY"},
		{"a config key's name is taken", func() error {
			_, err := keys.CreateKey(bearer(ctx, adminSecret), &adminv1.CreateKeyRequest{Key: &adminv1.Key{Name: "app", Scopes: []string{"admin"}}})
			return err
		}, codes.AlreadyExists, "KEY_EXISTS"},
		{"an unknown key", func() error {
			_, err := keys.GetKey(bearer(ctx, adminSecret), &adminv1.GetKeyRequest{Name: "nobody"})
			return err
		}, codes.NotFound, "KEY_NOT_FOUND"},
		{"a budget in no window", func() error {
			_, err := keys.CreateKey(bearer(ctx, adminSecret), &adminv1.CreateKeyRequest{Key: &adminv1.Key{Name: "x", Scopes: []string{"admin"},
				Budgets: []*adminv1.Budget{{Window: "week", MaxTokens: 5}}}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST"},
		{"an unknown team", func() error {
			_, err := keys.CreateKey(bearer(ctx, adminSecret), &adminv1.CreateKeyRequest{Key: &adminv1.Key{Name: "x", Scopes: []string{"admin"}, Team: "nobody"}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST"},
		// An expiry out of Timestamp's range failed to encode (INTERNAL,
		// a recovered panic); the first instant of year 1 is Go's zero
		// time and made a key that never expires.
		{"an expiry past year 9999", func() error {
			_, err := keys.CreateKey(bearer(ctx, adminSecret), &adminv1.CreateKeyRequest{Key: &adminv1.Key{Name: "x", Scopes: []string{"admin"},
				ExpiresAt: &timestamppb.Timestamp{Seconds: 1e15}}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST"},
		{"an expiry with negative nanos", func() error {
			_, err := keys.CreateKey(bearer(ctx, adminSecret), &adminv1.CreateKeyRequest{Key: &adminv1.Key{Name: "x", Scopes: []string{"admin"},
				ExpiresAt: &timestamppb.Timestamp{Seconds: 4e9, Nanos: -1}}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST"},
		{"an expiry at year 1", func() error {
			_, err := keys.CreateKey(bearer(ctx, adminSecret), &adminv1.CreateKeyRequest{Key: &adminv1.Key{Name: "x", Scopes: []string{"admin"},
				ExpiresAt: timestamppb.New(time.Time{})}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST"},
		{"an update without a mask", func() error {
			_, err := keys.UpdateKey(bearer(ctx, adminSecret), &adminv1.UpdateKeyRequest{Key: &adminv1.Key{Name: "app"}})
			return err
		}, codes.InvalidArgument, "INVALID_REQUEST"},
	}
	for _, tc := range tests {
		code, info, _ := errorInfo(tc.call())
		if code != tc.code || info.GetReason() != tc.reason {
			t.Errorf("%s: %v %s, want %v %s", tc.name, code, info.GetReason(), tc.code, tc.reason)
		}
	}
	list, err := keys.ListKeys(bearer(ctx, adminSecret), &adminv1.ListKeysRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range list.GetKeys() {
		names = append(names, k.GetName()+"/"+k.GetSource().String())
	}
	if want := "[app/KEY_SOURCE_CONFIG finance/KEY_SOURCE_CONFIG ops/KEY_SOURCE_CONFIG]"; fmt.Sprint(names) != want {
		t.Fatalf("ListKeys: %v, want %s", names, want)
	}
}

// TestAnExpiryAtYearOneIsRefused: an update that sets a stored key's expiry
// to 0001-01-01T00:00:00Z, Go's zero time, is refused and leaves the
// expiry it had; it used to clear it, so the key never expired.
func TestAnExpiryAtYearOneIsRefused(t *testing.T) {
	in := servertest.Start(t, governanceConfig(nil, ""))
	keys := adminv1.NewKeyServiceClient(in.Conn)
	ctx := bearer(t.Context(), adminSecret)
	expires := timestamppb.New(time.Now().Add(time.Hour).Truncate(time.Second))
	createKey(t, in, &adminv1.Key{Name: "ci", Scopes: []string{"generate"}, Models: []string{"*"}, ExpiresAt: expires})
	_, err := keys.UpdateKey(ctx, &adminv1.UpdateKeyRequest{
		Key: &adminv1.Key{Name: "ci", ExpiresAt: timestamppb.New(time.Time{})}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"expires_at"}}})
	if code, info, _ := errorInfo(err); code != codes.InvalidArgument || info.GetReason() != "INVALID_REQUEST" {
		t.Fatalf("UpdateKey(expires_at 0001-01-01): %v %s, want InvalidArgument INVALID_REQUEST", code, info.GetReason())
	}
	got, err := keys.GetKey(ctx, &adminv1.GetKeyRequest{Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got.GetKey().GetExpiresAt(), expires) {
		t.Fatalf("expires_at after the refused update: %v, want %v", got.GetKey().GetExpiresAt(), expires)
	}
}

// TestBudgetsWhenTheStoreFails: with Redis stopped, a call under a budget
// follows state.on_store_failure: fail_closed refuses it as unavailable
// (never as exhausted), fail_open admits it on the replica's own counters.
func TestBudgetsWhenTheStoreFails(t *testing.T) {
	for _, policy := range []string{"fail_closed", "fail_open"} {
		t.Run(policy, func(t *testing.T) {
			redis := redistest.Start(t)
			cfg := redisConfig(redis, policy)
			cfg.Providers = config.DefaultProviders()
			cfg.Auth.Keys = []config.APIKey{{Name: "ci", SHA256: auth.HashKey("ci-secret"), Scopes: []string{"generate"}, Models: []string{"*"},
				Budgets: []spend.Budget{{Window: spend.Day, MaxTokens: 1_000_000}}}}
			in := servertest.Start(t, cfg)
			if _, err := generate(t.Context(), in, "ci-secret", echoRequest("before")); err != nil {
				t.Fatal(err)
			}
			redis.Stop()
			_, err := generate(t.Context(), in, "ci-secret", echoRequest("during"))
			code, info, _ := errorInfo(err)
			switch policy {
			case "fail_closed":
				if code != codes.Unavailable || info.GetReason() != "STATE_STORE_UNAVAILABLE" {
					t.Fatalf("a call under a budget with the store down: %v, want UNAVAILABLE STATE_STORE_UNAVAILABLE", err)
				}
			default:
				if err != nil {
					t.Fatalf("a call under a budget with the store down, fail_open: %v", err)
				}
			}
		})
	}
}

// TestServerToolTurnsSettled: a stored key whose `tools` allow the go
// server's tools (made through the API, so servertools learns its patterns
// from the key's record) runs a call of two turns around a real MCP
// server's tool; GetUsage counts one call with both turns' tokens, as its
// Final does.
func TestServerToolTurnsSettled(t *testing.T) {
	g := mcptest.NewGoServer(t)
	cfg := governanceConfig(nil, "")
	cfg.Tools.MCPServers = []servertools.ServerConfig{goServer(g)}
	in := servertest.Start(t, cfg)
	secret := createKey(t, in, &adminv1.Key{Name: "agent", Scopes: []string{"generate"}, Models: []string{"*"}, Tools: []string{"go/*"}})
	req := scripted(t, []string{"go/echo"}, `{
		"script": [{"tool_calls": [{"name": "go__echo", "arguments": {"message": "hi"}}]}],
		"faults": [{"usage": {"input_tokens": 5, "output_tokens": 3}}, {"usage": {"input_tokens": 9, "output_tokens": 2}}]}`)
	f, err := generate(t.Context(), in, secret, req)
	if err != nil {
		t.Fatal(err)
	}
	if f.GetTurns() != 2 || f.GetUsage().GetInputTokens() != 14 || f.GetUsage().GetOutputTokens() != 5 {
		t.Fatalf("final: %d turns, usage %v; want 2 turns and both turns' usage", f.GetTurns(), f.GetUsage())
	}
	resp, err := adminv1.NewUsageServiceClient(in.Conn).GetUsage(bearer(t.Context(), adminSecret), &adminv1.GetUsageRequest{Key: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	if recs := resp.GetRecords(); len(recs) != 1 || recs[0].GetCalls() != 1 || recs[0].GetUsage().GetInputTokens() != 14 || recs[0].GetUsage().GetOutputTokens() != 5 {
		t.Fatalf("GetUsage %v, want one call of 14 input and 5 output tokens", recs)
	}
	// Without the tool in its patterns, the same key may not offer it.
	other := createKey(t, in, &adminv1.Key{Name: "plain", Scopes: []string{"generate"}, Models: []string{"*"}})
	if _, err := generate(t.Context(), in, other, scripted(t, []string{"go/echo"}, `{}`)); err == nil {
		t.Fatal("a stored key without tools offered a server tool")
	}
}

// TestUsageOutOfRangeIsBounded: an upstream that reports a negative token
// count, or more tokens than a uint32 holds, is counted within 0..2³²-1.
// The negative count went to the client as a uint64 of 18 quintillion
// tokens and credited the key's budget a negative cost.
func TestUsageOutOfRangeIsBounded(t *testing.T) {
	const stream = `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}

data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":-50,"completion_tokens":3,"total_tokens":-47,"completion_tokens_details":{"reasoning_tokens":90000000000}}}

data: [DONE]

`
	up := providertest.NewUpstream(t, func(int, *http.Request) providertest.Reply { return providertest.Reply{Body: []byte(stream)} })
	cfg := governanceConfig(nil, "")
	cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL + "/v1", Models: []string{"m"}}}
	cfg.Pricing.Models = map[string]usage.Price{"up/m": {"input": 10, "output": 20}}
	cfg.Auth.Keys = append(cfg.Auth.Keys, config.APIKey{Name: "app", SHA256: auth.HashKey("app-secret"), Scopes: []string{"generate"}, Models: []string{"*"},
		Budgets: []spend.Budget{{Window: spend.Day, MaxCostUSD: 1e6}}})
	in := servertest.Start(t, cfg)

	final, err := generate(t.Context(), in, "app-secret", &llmrelayv1.GenerateRequest{Model: "up/m", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if u := final.GetUsage(); u.GetInputTokens() != 0 || u.GetOutputTokens() != 3 || u.GetReasoningTokens() != math.MaxUint32 {
		t.Fatalf("final usage %v, want input 0, output 3, reasoning 4294967295", u)
	}
	key, err := adminv1.NewKeyServiceClient(in.Conn).GetKey(bearer(t.Context(), adminSecret), &adminv1.GetKeyRequest{Name: "app"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := key.GetKey().GetBudgets()[0].GetSpentCostUsd(), 3*20e-6; math.Abs(got-want) > 1e-12 {
		t.Fatalf("the budget spent $%g, want $%g (3 output tokens)", got, want)
	}
}
