package apikeys_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/apikeys"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

// configKeys are a server's auth.keys: an admin key and an app key.
var configKeys = []auth.KeyConfig{
	{Name: "ops", SHA256: auth.HashKey("ops-secret"), Scopes: []string{"admin"}},
	{Name: "app", SHA256: auth.HashKey("app-secret"), Scopes: []string{"generate"}, Models: []string{"*"}},
}

type harness struct {
	clock *statetest.Clock
	store *memory.Store
	keys  *apikeys.Keys // this replica's lookup
	admin *apikeys.Admin
	log   *bytes.Buffer
	m     *metrics.Metrics
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{clock: statetest.NewClock(), store: memory.New(), log: &bytes.Buffer{}, m: metrics.New()}
	ring, err := auth.NewKeyring(configKeys)
	if err != nil {
		t.Fatal(err)
	}
	h.keys = apikeys.NewKeys(ring, h.store, h.clock.Now)
	h.admin = apikeys.NewAdmin(apikeys.AdminDeps{
		Store: h.store, Config: configKeys, Teams: []string{"research"}, Keys: h.keys, Now: h.clock.Now,
		Logger: slog.New(slog.NewJSONHandler(h.log, nil)), Metrics: h.m,
	})
	return h
}

// replica returns another replica's lookup over the same store.
func (h *harness) replica(t *testing.T) *apikeys.Keys {
	ring, err := auth.NewKeyring(configKeys)
	if err != nil {
		t.Fatal(err)
	}
	return apikeys.NewKeys(ring, h.store, h.clock.Now)
}

var ops = apikeys.Actor{Key: "ops", RequestID: "req-1"}

func appKey(name string) apikeys.Key {
	return apikeys.Key{Name: name, Scopes: []string{"generate"}, Models: []string{"mock/*"}, Team: "research",
		Budgets: []spend.Budget{{Window: spend.Day, MaxCostUSD: 5}, {Window: spend.Month, MaxTokens: 2_000_000}}}
}

func (h *harness) create(t *testing.T, k apikeys.Key) string {
	t.Helper()
	_, secret, err := h.admin.Create(context.Background(), ops, k)
	if err != nil {
		t.Fatalf("Create(%s): %v", k.Name, err)
	}
	return secret
}

func TestCreateThenAuthenticate(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	k, secret, err := h.admin.Create(ctx, ops, appKey("ci"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "llmr_") || len(secret) != len("llmr_")+43 {
		t.Fatalf("secret %q, want llmr_ and 43 characters", secret)
	}
	if k.Source != apikeys.SourceStore || k.CreatedBy != "ops" || !k.CreatedAt.Equal(h.clock.Now()) || k.State(h.clock.Now()) != apikeys.Active {
		t.Fatalf("created key %+v", k)
	}
	// A replica that never saw the key authenticates it at once.
	for _, keys := range []*apikeys.Keys{h.keys, h.replica(t)} {
		id, err := keys.Lookup(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if id.Name != "ci" || !id.HasScope(auth.ScopeGenerate) || !id.AllowsModel("mock", "echo") || id.AllowsModel("openai", "gpt") || id.Team != "research" || len(id.Budgets) != 2 {
			t.Fatalf("identity %+v", id)
		}
	}
	// Only the hash is kept.
	sk, err := h.store.KeyByName(ctx, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if sk.Hash != auth.HashKey(secret) || bytes.Contains(sk.Record, []byte(secret)) {
		t.Fatalf("stored %+v: want the secret's hash only", sk)
	}
	// Config keys still authenticate; unknown keys do not.
	if id, err := h.keys.Lookup(ctx, "app-secret"); err != nil || id.Name != "app" {
		t.Fatalf("config key: %v, %v", id, err)
	}
	if _, err := h.keys.Lookup(ctx, "llmr_nothing"); !errors.Is(err, auth.ErrUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
}

// TestRevokedEverywhereWithinCacheTTL: a key revoked on one replica is
// refused there at once, and on a replica that authenticated it just before
// once CacheTTL (under the second) has passed on its clock.
func TestRevokedEverywhereWithinCacheTTL(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	secret := h.create(t, appKey("ci"))
	other := h.replica(t)
	if _, err := other.Lookup(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := h.keys.Lookup(ctx, secret); err != nil {
		t.Fatal(err)
	}
	k, err := h.admin.Revoke(ctx, ops, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if k.State(h.clock.Now()) != apikeys.Revoked {
		t.Fatalf("revoked key %+v", k)
	}
	if _, err := h.keys.Lookup(ctx, secret); !errors.Is(err, auth.ErrRevokedKey) {
		t.Fatalf("on the revoking replica: %v, want ErrRevokedKey at once", err)
	}
	h.clock.Advance(apikeys.CacheTTL)
	if _, err := other.Lookup(ctx, secret); !errors.Is(err, auth.ErrRevokedKey) {
		t.Fatalf("on another replica %v later: %v, want ErrRevokedKey", apikeys.CacheTTL, err)
	}
	if apikeys.CacheTTL >= time.Second {
		t.Fatalf("CacheTTL %v: a revocation must reach every replica within a second", apikeys.CacheTTL)
	}
	again, err := h.admin.Revoke(ctx, ops, "ci")
	if err != nil || !again.RevokedAt.Equal(k.RevokedAt) {
		t.Fatalf("revoking again: %+v, %v, want it unchanged", again, err)
	}
	if _, err := h.admin.Update(ctx, ops, appKey("ci"), []string{apikeys.FieldModels}); !errors.Is(err, apikeys.ErrRevoked) {
		t.Fatalf("updating a revoked key: %v, want ErrRevoked", err)
	}
}

func TestExpiry(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	k := appKey("temp")
	k.ExpiresAt = h.clock.Now().Add(time.Hour)
	secret := h.create(t, k)
	h.clock.Advance(time.Hour - time.Nanosecond)
	if _, err := h.keys.Lookup(ctx, secret); err != nil {
		t.Fatalf("before its expiry: %v", err)
	}
	h.clock.Advance(time.Nanosecond)
	if _, err := h.keys.Lookup(ctx, secret); !errors.Is(err, auth.ErrExpiredKey) {
		t.Fatalf("at its expiry: %v, want ErrExpiredKey", err)
	}
	got, _ := h.admin.Get(ctx, "temp")
	if got.State(h.clock.Now()) != apikeys.Expired {
		t.Fatalf("state %v", got.State(h.clock.Now()))
	}
	// Moving the expiry on brings it back.
	k.ExpiresAt = h.clock.Now().Add(time.Hour)
	if _, err := h.admin.Update(ctx, ops, k, []string{apikeys.FieldExpiresAt}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.keys.Lookup(ctx, secret); err != nil {
		t.Fatalf("after the expiry moved on: %v", err)
	}
}

func TestCreateRefuses(t *testing.T) {
	h := newHarness(t)
	h.create(t, appKey("taken"))
	past := appKey("x")
	past.ExpiresAt = h.clock.Now().Add(-time.Second)
	tests := []struct {
		name  string
		edit  func(*apikeys.Key)
		is    error
		field string
	}{
		{"a stored key's name", func(k *apikeys.Key) { k.Name = "taken" }, apikeys.ErrExists, ""},
		{"a config key's name", func(k *apikeys.Key) { k.Name = "ops" }, apikeys.ErrExists, ""},
		{"a bad name", func(k *apikeys.Key) { k.Name = "a b" }, apikeys.ErrInvalid, "key.name"},
		{"an unknown scope", func(k *apikeys.Key) { k.Scopes = []string{"root"} }, apikeys.ErrInvalid, "key.scopes"},
		{"no scopes", func(k *apikeys.Key) { k.Scopes = nil }, apikeys.ErrInvalid, "key.scopes"},
		{"generate without models", func(k *apikeys.Key) { k.Models = nil }, apikeys.ErrInvalid, "key.models"},
		{"a negative limit", func(k *apikeys.Key) { k.Limits.Burst = -1 }, apikeys.ErrInvalid, "key.limits.burst"},
		{"an unknown team", func(k *apikeys.Key) { k.Team = "nobody" }, apikeys.ErrInvalid, "key.team"},
		{"a budget of an unknown window", func(k *apikeys.Key) { k.Budgets = []spend.Budget{{Window: "week", MaxCostUSD: 1}} }, apikeys.ErrInvalid, "key.budgets[0].window"},
		{"a budget without a cap", func(k *apikeys.Key) { k.Budgets = []spend.Budget{{Window: spend.Day}} }, apikeys.ErrInvalid, "key.budgets[0].max_cost_usd"},
		{"an expiry in the past", func(k *apikeys.Key) { k.ExpiresAt = past.ExpiresAt }, apikeys.ErrInvalid, "key.expires_at"},
		{"a bad server tool pattern", func(k *apikeys.Key) { k.Tools = []string{"every thing/*"} }, apikeys.ErrInvalid, "key.tools"},
		{"a scope twice", func(k *apikeys.Key) { k.Scopes = []string{"generate", "generate"} }, apikeys.ErrInvalid, "key.scopes[1]"},
		{"a burst without a rate", func(k *apikeys.Key) { k.Limits = apikeys.Limits{Burst: 5, MaxConcurrentStreams: 2} }, apikeys.ErrInvalid, "key.limits.burst"},
		{"a model pattern twice", func(k *apikeys.Key) { k.Models = []string{"mock/*", "mock/*"} }, apikeys.ErrInvalid, "key.models[1]"},
		{"a server tool pattern twice", func(k *apikeys.Key) { k.Tools = []string{"everything/*", "everything/*"} }, apikeys.ErrInvalid, "key.tools[1]"},
	}
	for _, tc := range tests {
		k := appKey("new")
		tc.edit(&k)
		_, _, err := h.admin.Create(context.Background(), ops, k)
		if !errors.Is(err, tc.is) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.is)
			continue
		}
		var fe *apikeys.FieldError
		if tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field) {
			t.Errorf("%s: %v, want a problem with %s", tc.name, err, tc.field)
		}
	}
	if _, err := h.admin.Get(context.Background(), "new"); !errors.Is(err, apikeys.ErrNotFound) {
		t.Fatalf("a refused key was stored: %v", err)
	}
	// A revoked key's name stays taken, and the refusal says why: ListKeys
	// does not show the key without show_revoked, and "an API key of this
	// name exists" alone read as wrong.
	if _, err := h.admin.Revoke(context.Background(), ops, "taken"); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.admin.Create(context.Background(), ops, appKey("taken"))
	if !errors.Is(err, apikeys.ErrExists) || !strings.Contains(err.Error(), "taken, revoked at "+h.clock.Now().UTC().Format(time.RFC3339)) ||
		!strings.Contains(err.Error(), "show_revoked") {
		t.Fatalf("creating a revoked key's name: %v; want ErrExists saying it is revoked", err)
	}
}

func TestUpdate(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	secret := h.create(t, appKey("ci"))
	h.clock.Advance(time.Minute)
	change := apikeys.Key{Name: "ci", Models: []string{"openai/*"}, Limits: apikeys.Limits{RequestsPerSecond: 5}, Metadata: map[string]string{"owner": "qa"}}
	k, err := h.admin.Update(ctx, ops, change, []string{apikeys.FieldModels, apikeys.FieldLimits, apikeys.FieldBudgets, apikeys.FieldMetadata})
	if err != nil {
		t.Fatal(err)
	}
	if k.Models[0] != "openai/*" || k.Limits.RequestsPerSecond != 5 || len(k.Budgets) != 0 || k.Team != "research" || len(k.Scopes) != 1 || !k.UpdatedAt.Equal(h.clock.Now()) || k.Metadata["owner"] != "qa" {
		t.Fatalf("updated key %+v: want models, limits, budgets (cleared) and metadata changed, the rest kept", k)
	}
	id, err := h.keys.Lookup(ctx, secret)
	if err != nil || !id.AllowsModel("openai", "gpt") || id.Limits.RequestsPerSecond != 5 {
		t.Fatalf("this replica's identity after the update: %+v, %v, want it at once", id, err)
	}
	for _, tc := range []struct {
		name   string
		key    string
		fields []string
		is     error
	}{
		{"no fields", "ci", nil, apikeys.ErrInvalid},
		{"an unknown field", "ci", []string{"name"}, apikeys.ErrInvalid},
		{"a config key", "app", []string{apikeys.FieldModels}, apikeys.ErrReadOnly},
		{"an unknown key", "nobody", []string{apikeys.FieldModels}, apikeys.ErrNotFound},
	} {
		if _, err := h.admin.Update(ctx, ops, apikeys.Key{Name: tc.key, Models: []string{"*"}}, tc.fields); !errors.Is(err, tc.is) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.is)
		}
	}
	if _, err := h.admin.Revoke(ctx, ops, "ops"); !errors.Is(err, apikeys.ErrReadOnly) {
		t.Errorf("revoking a config key: %v, want ErrReadOnly", err)
	}
}

// TestUpdateAfterTheTeamIsGone: after a reload drops a team a stored key
// names, the key's other fields still change; setting the team it names
// is refused. Every update was refused ("is not a configured team").
func TestUpdateAfterTheTeamIsGone(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.create(t, appKey("ci"))
	reloaded := apikeys.NewAdmin(apikeys.AdminDeps{Store: h.store, Config: configKeys, Keys: h.keys, Now: h.clock.Now,
		Logger: slog.New(slog.NewJSONHandler(h.log, nil)), Metrics: h.m})
	k, err := reloaded.Update(ctx, ops, apikeys.Key{Name: "ci", Metadata: map[string]string{"owner": "qa"}}, []string{apikeys.FieldMetadata})
	if err != nil || k.Metadata["owner"] != "qa" || k.Team != "research" {
		t.Fatalf("updating the metadata: %+v, %v; want it changed and the team kept", k, err)
	}
	if _, err := reloaded.Update(ctx, ops, apikeys.Key{Name: "ci", Team: "research"}, []string{apikeys.FieldTeam}); !errors.Is(err, apikeys.ErrInvalid) {
		t.Fatalf("setting a team that is not configured: %v, want ErrInvalid", err)
	}
}

// TestConfigKeyTakesAStoredKeysName: once a reload gives a config key the
// name of a stored key, the stored key's secret no longer authenticates:
// GetKey shows the config's key of that name, and RevokeKey refuses it as
// read-only, so the stored one could neither be seen nor revoked.
func TestConfigKeyTakesAStoredKeysName(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	secret := h.create(t, appKey("ci"))
	if _, err := h.keys.Lookup(ctx, secret); err != nil {
		t.Fatal(err)
	}
	reloadedConfig := append(configKeys[:len(configKeys):len(configKeys)],
		auth.KeyConfig{Name: "ci", SHA256: auth.HashKey("ci-config-secret"), Scopes: []string{"models.list"}})
	ring, err := auth.NewKeyring(reloadedConfig)
	if err != nil {
		t.Fatal(err)
	}
	keys := apikeys.NewKeys(ring, h.store, h.clock.Now)
	reloaded := apikeys.NewAdmin(apikeys.AdminDeps{Store: h.store, Config: reloadedConfig, Teams: []string{"research"}, Keys: keys, Now: h.clock.Now})
	if k, err := reloaded.Get(ctx, "ci"); err != nil || k.Source != apikeys.SourceConfig {
		t.Fatalf("GetKey(ci) after the reload: %+v, %v; want the config's key", k, err)
	}
	if _, err := reloaded.Revoke(ctx, ops, "ci"); !errors.Is(err, apikeys.ErrReadOnly) {
		t.Fatalf("RevokeKey(ci) after the reload: %v, want ErrReadOnly", err)
	}
	if id, err := keys.Lookup(ctx, secret); !errors.Is(err, auth.ErrUnknownKey) {
		t.Fatalf("the stored key's secret after a config key took its name: %+v, %v; want ErrUnknownKey", id, err)
	}
	if id, err := keys.Lookup(ctx, "ci-config-secret"); err != nil || id.Name != "ci" || id.HasScope(auth.ScopeGenerate) {
		t.Fatalf("the config key ci: %+v, %v", id, err)
	}
}

// TestConcurrentUpdatesAllApply: updates of different fields at the same
// time each apply (a conflict reads the key again), none is lost.
func TestConcurrentUpdatesAllApply(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.create(t, appKey("ci"))
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := h.admin.Update(ctx, ops, apikeys.Key{Name: "ci", Models: []string{"openai/*"}}, []string{apikeys.FieldModels}); err != nil {
			t.Error(err)
		}
	})
	wg.Go(func() {
		if _, err := h.admin.Update(ctx, ops, apikeys.Key{Name: "ci", Metadata: map[string]string{"a": "b"}}, []string{apikeys.FieldMetadata}); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	k, err := h.admin.Get(ctx, "ci")
	if err != nil || k.Models[0] != "openai/*" || k.Metadata["a"] != "b" {
		t.Fatalf("after two concurrent updates: %+v, %v", k, err)
	}
}

func TestList(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for _, n := range []string{"zed", "bob", "carol", "alice"} {
		k := appKey(n)
		if n == "zed" {
			k.Team = ""
		}
		h.create(t, k)
	}
	if _, err := h.admin.Revoke(ctx, ops, "carol"); err != nil {
		t.Fatal(err)
	}
	list := func(q apikeys.ListQuery) string {
		t.Helper()
		var names []string
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("List does not end")
			}
			keys, next, err := h.admin.List(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) > q.PageSize {
				t.Fatalf("page of %d keys, size %d", len(keys), q.PageSize)
			}
			for _, k := range keys {
				names = append(names, k.Name)
			}
			if next == "" {
				return strings.Join(names, " ")
			}
			q.PageToken = next
		}
	}
	for _, tc := range []struct {
		q    apikeys.ListQuery
		want string
	}{
		{apikeys.ListQuery{PageSize: 2}, "alice app bob ops zed"},
		{apikeys.ListQuery{PageSize: 1, ShowRevoked: true}, "alice app bob carol ops zed"},
		{apikeys.ListQuery{PageSize: 100, Team: "research"}, "alice bob"},
		{apikeys.ListQuery{PageSize: 3, Team: "research", ShowRevoked: true}, "alice bob carol"},
	} {
		if got := list(tc.q); got != tc.want {
			t.Errorf("List(%+v): %s, want %s", tc.q, got, tc.want)
		}
	}
	if _, _, err := h.admin.List(ctx, apikeys.ListQuery{PageSize: 1, PageToken: "garbage!"}); !errors.Is(err, apikeys.ErrInvalid) {
		t.Fatalf("a bad page token: %v", err)
	}
}

// TestAudit: every change is one structured record (who, what, which key),
// never the secret nor its hash, and counted.
func TestAudit(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	secret := h.create(t, appKey("ci"))
	if _, err := h.admin.Update(ctx, ops, apikeys.Key{Name: "ci", Models: []string{"*"}}, []string{apikeys.FieldModels}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.admin.Revoke(ctx, ops, "ci"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(h.log.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d audit records, want 3:\n%s", len(lines), h.log)
	}
	for i, want := range []string{`"action":"create_key"`, `"action":"update_key"`, `"action":"revoke_key"`} {
		for _, part := range []string{`"msg":"admin change"`, want, `"actor":"ops"`, `"key":"ci"`, `"request_id":"req-1"`} {
			if !strings.Contains(lines[i], part) {
				t.Errorf("record %d %s lacks %s", i, lines[i], part)
			}
		}
	}
	if !strings.Contains(lines[1], `"fields":["models"]`) {
		t.Errorf("the update's record %s does not name its fields", lines[1])
	}
	if strings.Contains(h.log.String(), secret) || strings.Contains(h.log.String(), auth.HashKey(secret)) {
		t.Fatal("an audit record holds the secret or its hash")
	}
	text := h.m.Text()
	for _, action := range []string{"create_key", "update_key", "revoke_key"} {
		if !strings.Contains(text, metrics.NameAdminChanges+`{action="`+action+`"} 1`) {
			t.Errorf("%s{action=%q} is not 1:\n%s", metrics.NameAdminChanges, action, text)
		}
	}
}

// TestStoredTools: the server tools of a stored key are those of its last
// read, none once it is revoked.
func TestStoredTools(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	k := appKey("ci")
	k.Tools = []string{"everything/*"}
	secret := h.create(t, k)
	if got := h.keys.StoredTools("ci"); got != nil {
		t.Fatalf("tools of a key never read: %v", got)
	}
	if _, err := h.keys.Lookup(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if got := h.keys.StoredTools("ci"); len(got) != 1 || got[0] != "everything/*" {
		t.Fatalf("tools of the key read: %v", got)
	}
	if _, err := h.admin.Revoke(ctx, ops, "ci"); err != nil {
		t.Fatal(err)
	}
	_, _ = h.keys.Lookup(ctx, secret)
	if got := h.keys.StoredTools("ci"); got != nil {
		t.Fatalf("tools of a revoked key: %v", got)
	}
}

// TestStoreUnavailable: a key that cannot be read is not an unknown key.
func TestStoreUnavailable(t *testing.T) {
	ring, _ := auth.NewKeyring(configKeys)
	keys := apikeys.NewKeys(ring, failing{}, nil)
	_, err := keys.Lookup(context.Background(), "llmr_x")
	if !errors.Is(err, state.ErrUnavailable) || errors.Is(err, auth.ErrUnknownKey) {
		t.Fatalf("lookup with the store down: %v, want ErrUnavailable", err)
	}
}

type failing struct{ state.KeyStore }

func (failing) KeyByHash(context.Context, string) (state.StoredKey, error) {
	return state.StoredKey{}, &state.UnavailableError{}
}

func (failing) KeyByName(context.Context, string) (state.StoredKey, error) {
	return state.StoredKey{}, &state.UnavailableError{}
}

// TestRecheck: Recheck reads a stored key past the cache (another
// replica's revocation shows at once), says expired at the clock's
// expiry, passes config keys without a read and says a store that is
// down is down, not that the key stopped working.
func TestRecheck(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	k := appKey("ci")
	k.ExpiresAt = h.clock.Now().Add(time.Hour)
	secret := h.create(t, k)
	leakedSecret := h.create(t, appKey("leaked"))
	other := h.replica(t)
	ids := map[string]*auth.Identity{}
	for name, secret := range map[string]string{"ci": secret, "leaked": leakedSecret, "app": "app-secret", "ops": "ops-secret"} {
		id, err := other.Lookup(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = id
		if err := other.Recheck(ctx, id); err != nil {
			t.Errorf("Recheck(%s) of a working key: %v", name, err)
		}
	}
	if _, err := h.admin.Revoke(ctx, ops, "leaked"); err != nil {
		t.Fatal(err)
	}
	if err := other.Recheck(ctx, ids["leaked"]); !errors.Is(err, auth.ErrRevokedKey) {
		t.Fatalf("Recheck of a key revoked on another replica, within CacheTTL: %v, want ErrRevokedKey at once", err)
	}
	h.clock.Advance(time.Hour)
	if err := other.Recheck(ctx, ids["ci"]); !errors.Is(err, auth.ErrExpiredKey) {
		t.Fatalf("Recheck at the key's expiry: %v, want ErrExpiredKey", err)
	}
	if err := other.Recheck(ctx, identity(t, "nobody", "nobody-secret")); !errors.Is(err, auth.ErrUnknownKey) {
		t.Fatalf("Recheck of no key: %v, want ErrUnknownKey", err)
	}
	ring, _ := auth.NewKeyring(configKeys)
	down := apikeys.NewKeys(ring, failing{}, nil)
	if err := down.Recheck(ctx, ids["ci"]); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Recheck with the store down: %v, want ErrUnavailable", err)
	}
	if err := down.Recheck(ctx, ids["app"]); err != nil {
		t.Fatalf("Recheck of a config key with the store down: %v, want nil without a read", err)
	}
}

// identity returns the identity of a key named name with secret secret.
func identity(t *testing.T, name, secret string) *auth.Identity {
	t.Helper()
	id, err := auth.NewIdentity(auth.KeyConfig{Name: name, SHA256: auth.HashKey(secret), Scopes: []string{"generate"}, Models: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestRecheckFollowsTheSecret: Recheck answers for the key a call was
// authenticated as, its secret, as Lookup of that secret would after a
// reload: a config key renamed works on; a config key's old secret, once
// its name has a new one, is unknown, as is a config key removed whose
// name a stored key has, and a stored key whose name a config key took
// (it works again once the config key goes).
func TestRecheckFollowsTheSecret(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	secret := h.create(t, appKey("ci"))
	stored, err := h.keys.Lookup(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	app, oldOps := identity(t, "app", "app-secret"), identity(t, "ops", "ops-secret")
	ciConfig := identity(t, "ci", "ci-config-secret")
	reload := func(cfg ...auth.KeyConfig) *apikeys.Keys {
		t.Helper()
		ring, err := auth.NewKeyring(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return apikeys.NewKeys(ring, h.store, h.clock.Now)
	}
	renamed := configKeys[1]
	renamed.Name = "app2"
	rotated := configKeys[0]
	rotated.SHA256 = auth.HashKey("ops-new-secret")
	ci := auth.KeyConfig{Name: "ci", SHA256: auth.HashKey("ci-config-secret"), Scopes: []string{"generate"}, Models: []string{"*"}}

	keys := reload(rotated, renamed, ci)
	for _, c := range []struct {
		name string
		id   *auth.Identity
		want error
	}{
		{"a config key renamed", app, nil},
		{"a config key's old secret", oldOps, auth.ErrUnknownKey},
		{"a stored key whose name a config key took", stored, auth.ErrUnknownKey},
		{"the config key that took it", ciConfig, nil},
	} {
		if err := keys.Recheck(ctx, c.id); !errors.Is(err, c.want) {
			t.Errorf("%s: Recheck %v, want %v", c.name, err, c.want)
		}
	}

	keys = reload(rotated, renamed)
	if err := keys.Recheck(ctx, ciConfig); !errors.Is(err, auth.ErrUnknownKey) {
		t.Errorf("a config key removed, whose name a stored key has: Recheck %v, want ErrUnknownKey", err)
	}
	if err := keys.Recheck(ctx, stored); err != nil {
		t.Errorf("the stored key, its name given back: Recheck %v, want nil", err)
	}

	ring, err := auth.NewKeyring([]auth.KeyConfig{rotated, renamed})
	if err != nil {
		t.Fatal(err)
	}
	noStore := apikeys.NewKeys(ring, nil, nil)
	if err := noStore.Recheck(ctx, app); err != nil {
		t.Errorf("without a store, a config key renamed: Recheck %v, want nil", err)
	}
	if err := noStore.Recheck(ctx, oldOps); !errors.Is(err, auth.ErrUnknownKey) {
		t.Errorf("without a store, a config key's old secret: Recheck %v, want ErrUnknownKey", err)
	}
}

// TestKeyStoredBeforeTheChecks: a key stored before auth refused what it
// holds (a scope listed twice, a burst without a rate) still
// authenticates, is shown without them, and can be changed; its next
// update writes it back clean.
func TestKeyStoredBeforeTheChecks(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	record := `{"scopes":["generate","generate"],"models":["mock/*","mock/*"],"tools":["everything/*","everything/*"],"limits":{"burst":5,"max_concurrent_streams":2}}`
	if _, err := h.store.CreateKey(ctx, state.StoredKey{Name: "old", Hash: auth.HashKey("old-secret"), Record: []byte(record)}); err != nil {
		t.Fatal(err)
	}
	id, err := h.keys.Lookup(ctx, "old-secret")
	if err != nil || id.Name != "old" || !id.HasScope(auth.ScopeGenerate) || !id.AllowsModel("mock", "echo") {
		t.Fatalf("Lookup: %+v, %v; want the key as it was stored", id, err)
	}
	clean := func(k *apikeys.Key) bool {
		return strings.Join(k.Scopes, ",") == "generate" && strings.Join(k.Models, ",") == "mock/*" && strings.Join(k.Tools, ",") == "everything/*" &&
			k.Limits == apikeys.Limits{MaxConcurrentStreams: 2}
	}
	if k, err := h.admin.Get(ctx, "old"); err != nil || !clean(k) {
		t.Fatalf("Get: %+v, %v; want each entry once", k, err)
	}
	if k, err := h.admin.Update(ctx, ops, apikeys.Key{Name: "old", Metadata: map[string]string{"owner": "me"}}, []string{apikeys.FieldMetadata}); err != nil || !clean(k) {
		t.Fatalf("Update: %+v, %v; want the change, each entry once", k, err)
	}
	if sk, err := h.store.KeyByName(ctx, "old"); err != nil || bytes.Contains(sk.Record, []byte(`"generate","generate"`)) {
		t.Fatalf("stored after the update: %s, %v; want each entry once", sk.Record, err)
	}
}
