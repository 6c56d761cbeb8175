package auth

import (
	"context"
	"errors"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/spend"
)

const (
	checkoutKey = "test-key-checkout"
	batchKey    = "test-key-batch"
)

func testKeyring(t *testing.T) *Keyring {
	t.Helper()
	k, err := NewKeyring([]KeyConfig{
		{
			Name: "checkout", SHA256: HashKey(checkoutKey),
			Scopes:            []string{"generate", "models.list"},
			Models:            []string{"openai/gpt-4o*", "mock/*"},
			RequestsPerSecond: 20, Burst: 40, MaxConcurrentStreams: 8,
		},
		{
			Name: "batch", SHA256: strings.ToUpper(HashKey(batchKey)),
			Scopes:            []string{"models.list"},
			Models:            []string{"*"},
			RequestsPerSecond: 2.5,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestHashKey(t *testing.T) {
	// The example hash is SHA-256("test").
	const want = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	if got := HashKey("test"); got != want {
		t.Fatalf("HashKey(test) = %s, want %s", got, want)
	}
}

func TestAuthenticate(t *testing.T) {
	k := testKeyring(t)
	tests := []struct {
		name    string
		header  []string
		want    string
		wantErr error
	}{
		{"known key", []string{"Bearer " + checkoutKey}, "checkout", nil},
		{"scheme is case-insensitive", []string{"bearer " + checkoutKey}, "checkout", nil},
		{"upper-case hash in config", []string{"Bearer " + batchKey}, "batch", nil},
		{"no header", nil, "", ErrNoCredentials},
		{"unknown key", []string{"Bearer nope"}, "", ErrUnknownKey},
		{"basic scheme", []string{"Basic dXNlcjpwYXNz"}, "", ErrMalformedCredentials},
		{"scheme only", []string{"Bearer"}, "", ErrMalformedCredentials},
		{"empty key", []string{"Bearer "}, "", ErrMalformedCredentials},
		{"key with space", []string{"Bearer a b"}, "", ErrMalformedCredentials},
		{"two headers", []string{"Bearer " + checkoutKey, "Bearer " + batchKey}, "", ErrMalformedCredentials},
		{"oversized key", []string{"Bearer " + strings.Repeat("k", MaxKeyLen+1)}, "", ErrMalformedCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := k.Authenticate(tt.header)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), checkoutKey) {
					t.Errorf("error %q leaks the key", err)
				}
				return
			}
			if id.Name != tt.want {
				t.Errorf("identity = %q, want %q", id.Name, tt.want)
			}
		})
	}
}

func TestIdentityScopesModelsLimits(t *testing.T) {
	ids := testKeyring(t).Identities()
	checkout, batch := ids[0], ids[1]
	if !checkout.HasScope(ScopeGenerate) || batch.HasScope(ScopeGenerate) {
		t.Error("generate scope: want checkout yes, batch no")
	}
	for model, want := range map[string]bool{
		"openai/gpt-4o":      true,
		"openai/gpt-4o-mini": true,
		"openai/gpt-4.1":     false,
		"openai/gpt-4o/x":    false,
		"mock/echo":          true,
		"mock/deep/er":       false,
		"mockx/echo":         false,
		"anthropic/claude":   false,
	} {
		p, m, _ := strings.Cut(model, "/")
		if got := checkout.AllowsModel(p, m); got != want {
			t.Errorf("checkout.AllowsModel(%q) = %v, want %v", model, got, want)
		}
	}
	if !batch.AllowsModel("anything", "at/all") {
		t.Error(`"*" must allow every model`)
	}
	// Routes are matched by their name: a provider's pattern does not
	// allow a route, "*" allows them all.
	if checkout.AllowsRoute("smart") || checkout.AllowsRoute("mock") || !batch.AllowsRoute("smart") {
		t.Error("AllowsRoute: want checkout no route, batch every route")
	}
	routes := &Identity{models: []string{"smart", "fast-*"}}
	for name, want := range map[string]bool{"smart": true, "fast-eu": true, "fast": false, "smarter": false} {
		if got := routes.AllowsRoute(name); got != want {
			t.Errorf("AllowsRoute(%q) = %v, want %v", name, got, want)
		}
	}
	// A provider that accepts any model name: the patterns that may
	// match one of its models, whether or not its models are known.
	mixed := &Identity{models: []string{"smart", "openai/gpt-4o*", "mock/echo", "openrouter/**", "*/mini"}}
	for providerName, want := range map[string][]string{
		"openai":     {"openai/gpt-4o*", "*/mini"},
		"openrouter": {"openrouter/**", "*/mini"},
		"anthropic":  {"*/mini"},
		"smart":      {"*/mini"},
	} {
		if got := mixed.ModelPatternsUnder(providerName); !slices.Equal(got, want) {
			t.Errorf("ModelPatternsUnder(%q) = %q, want %q", providerName, got, want)
		}
	}
	if got := checkout.ModelPatternsUnder("anthropic"); got != nil {
		t.Errorf("checkout.ModelPatternsUnder(anthropic) = %q, want none", got)
	}
	if got := batch.ModelPatternsUnder("anthropic"); !slices.Equal(got, []string{"*"}) {
		t.Errorf(`batch.ModelPatternsUnder(anthropic) = %q, want ["*"]`, got)
	}
	if got := checkout.Limits; got != (Limits{20, 40, 8}) {
		t.Errorf("checkout limits = %+v", got)
	}
	if got := batch.Limits.Burst; got != 3 {
		t.Errorf("default burst for 2.5 rps = %d, want 3", got)
	}
}

func TestNewKeyringRejects(t *testing.T) {
	good := KeyConfig{Name: "a", SHA256: HashKey("a"), Scopes: []string{"generate"}, Models: []string{"*"}}
	tests := []struct {
		name   string
		mutate func(*KeyConfig)
		second bool
		want   string
	}{
		{"no name", func(c *KeyConfig) { c.Name = "" }, false, "name is required"},
		{"plain key instead of hash", func(c *KeyConfig) { c.SHA256 = "a" }, false, "64 hex digits"},
		{"unknown scope", func(c *KeyConfig) { c.Scopes = []string{"root"} }, false, `unknown scope "root"`},
		{"misspelled scope", func(c *KeyConfig) { c.Scopes = []string{"genrate"} }, false, `; did you mean generate?`},
		{"no scopes", func(c *KeyConfig) { c.Scopes = nil }, false, "scopes is empty"},
		{"no models", func(c *KeyConfig) { c.Models = nil }, false, "models is empty"},
		{"blank pattern", func(c *KeyConfig) { c.Models = []string{"mock/ x"} }, false, "spaces"},
		{"a scope twice", func(c *KeyConfig) { c.Scopes = []string{"generate", "models.list", "generate"} }, false, `scopes[2] "generate" is listed twice (also scopes[0])`},
		{"a model pattern twice", func(c *KeyConfig) { c.Models = []string{"mock/*", "mock/*"} }, false, `models[1] "mock/*" is listed twice (also models[0])`},
		{"a tool pattern twice", func(c *KeyConfig) { c.Tools = []string{"everything/*", "x/y", "everything/*"} }, false, `tools[2] "everything/*" is listed twice (also tools[0])`},
		{"negative limit", func(c *KeyConfig) { c.Burst = -1 }, false, "burst must not be negative"},
		{"a burst without a rate", func(c *KeyConfig) { c.Burst = 5 }, false, "burst is set without requests_per_second"},
		{"a NaN rate", func(c *KeyConfig) { c.RequestsPerSecond = math.NaN() }, false, "requests_per_second must not be negative"},
		{"a limit past the admin API's", func(c *KeyConfig) { c.MaxConcurrentStreams = 5_000_000_000 }, false, "max_concurrent_streams must be at most 1000000"},
		{"budget without a cap", func(c *KeyConfig) { c.Budgets = []spend.Budget{{Window: spend.Day}} }, false, "budgets[0].max_cost_usd or max_tokens is required"},
		{"budget of an unknown window", func(c *KeyConfig) { c.Budgets = []spend.Budget{{Window: "week", MaxTokens: 1}} }, false, `budgets[0].window is "week"`},
		{"duplicate name", func(c *KeyConfig) { c.SHA256 = HashKey("b") }, true, `"a" is already used by auth.keys[0]`},
		{"duplicate hash", func(c *KeyConfig) { c.Name = "b" }, true, `sha256 is the same as key "a"'s`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.mutate(&c)
			cfgs := []KeyConfig{c}
			if tt.second {
				cfgs = []KeyConfig{good, c}
			}
			_, err := NewKeyring(cfgs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if k, err := NewKeyring(nil); err != nil || k.Len() != 0 {
		t.Fatalf("empty config: %v, %v", k, err)
	}
	var ke *KeyError
	if _, err := NewKeyring([]KeyConfig{good, {Name: "b"}}); !errors.As(err, &ke) || ke.Index != 1 || ke.Field != "sha256" {
		t.Fatalf("err = %#v, want a *KeyError on auth.keys[1]'s sha256", err)
	}
}

// TestAdminKeyAndBudgets: a key without the generate scope needs no
// models; a key's team and budgets are its identity's.
func TestAdminKeyAndBudgets(t *testing.T) {
	budgets := []spend.Budget{{Window: spend.Day, MaxCostUSD: 5}, {Window: spend.Month, MaxTokens: 2_000_000}}
	k, err := NewKeyring([]KeyConfig{
		{Name: "ops", SHA256: HashKey("ops"), Scopes: []string{"admin", "usage.read"}},
		{Name: "app", SHA256: HashKey("app"), Scopes: []string{"generate"}, Models: []string{"*"}, Team: "research", Budgets: budgets},
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := k.Identities()
	if !ids[0].HasScope(ScopeAdmin) || !ids[0].HasScope(ScopeUsageRead) || ids[0].HasScope(ScopeGenerate) {
		t.Fatalf("admin key scopes %v", ids[0].Scopes())
	}
	if ids[1].Team != "research" || !reflect.DeepEqual(ids[1].Budgets, budgets) {
		t.Fatalf("identity team %q budgets %+v", ids[1].Team, ids[1].Budgets)
	}
	var ke *KeyError
	if _, err := NewKeyring([]KeyConfig{{Name: "b", SHA256: HashKey("b"), Scopes: []string{"generate"}, Budgets: budgets[:1], Models: []string{"*"}}, {Name: "c", SHA256: HashKey("c"), Scopes: []string{"admin"}, Budgets: []spend.Budget{{Window: spend.Day}}}}); !errors.As(err, &ke) || ke.Index != 1 || ke.Field != "budgets[0].max_cost_usd" {
		t.Fatalf("err = %#v, want a *KeyError on auth.keys[1]'s budgets[0].max_cost_usd", err)
	}
	if _, err := NewIdentity(KeyConfig{Name: "d", SHA256: HashKey("d"), Scopes: []string{"generate"}}); !errors.As(err, &ke) || ke.Field != "models" {
		t.Fatalf("NewIdentity of a generate key without models: %v", err)
	}
}

// TestHashKeyLinePastedWhole: the whole line `llmrelay hash-key` prints is
// accepted as a key's sha256, whatever the case of the digits.
func TestHashKeyLinePastedWhole(t *testing.T) {
	for _, hash := range []string{
		"sha256: " + HashKey("a"),
		"sha256:" + HashKey("a"),
		"  SHA256: " + strings.ToUpper(HashKey("a")) + "\n",
	} {
		k, err := NewKeyring([]KeyConfig{{Name: "a", SHA256: hash, Scopes: []string{"generate"}, Models: []string{"*"}}})
		if err != nil {
			t.Fatalf("sha256 %q: %v", hash, err)
		}
		if id, err := k.Authenticate([]string{"Bearer a"}); err != nil || id.Name != "a" {
			t.Errorf("sha256 %q: the key does not authenticate: %v", hash, err)
		}
	}
}

func TestMatchPattern(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "openrouter/meta-llama/llama-3-70b", true}, // "*" alone: every model
		{"**", "openrouter/meta-llama/llama-3-70b", true},
		{"openrouter/**", "openrouter/meta-llama/llama-3-70b", true},
		{"openrouter/*", "openrouter/meta-llama/llama-3-70b", false}, // "*" stays in its segment
		{"openrouter/*/*", "openrouter/meta-llama/llama-3-70b", true},
		{"openrouter/meta-llama/*", "openrouter/meta-llama/llama-3-70b", true},
		{"g/gemini-2.5-flash*", "g/gemini-2.5-flash-lite", true},
		{"g/gemini-2.5-flash*", "g/gemini-2.5-flash/x", false},
		{"g/gemini-2.5-flash*", "g/gemini-2.5-flash/../../v1beta/models/gemini-2.5-pro", false},
		{"mock/*", "mock/", true},
		{"mock/*", "mock", false},
		{"mock/echo", "mock/echo", true},
		{"mock/echo", "mock/echoes", false},
		{"ollama/llama3.?:8b", "ollama/llama3.1:8b", true},
		{"ollama/llama3.?:8b", "ollama/llama3.10:8b", false},
		{"mock/ech?", "mock/ech/", false},
		{"*/gpt-4o", "openai/gpt-4o", true},
		{"*/gpt-4o", "openai/gpt-4o-mini", false},
		{"a*b*c", "aXXbYYbZZc", true},
		{"a*b*c", "aXXbYYbZZ", false},
		{"a**c", "a/b/c", true},
		{"a***c", "a/b/c", true},
		{"**", "x", true},
		{"", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := MatchPattern(tt.pattern, tt.s); got != tt.want {
			t.Errorf("MatchPattern(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

// TestMatchPatternUnder: whether a key's pattern may cover a tool of a
// server whose tools are not known yet.
func TestMatchPatternUnder(t *testing.T) {
	tests := []struct {
		pattern, prefix string
		want            bool
	}{
		{"*", "everything/", true},
		{"**", "everything/", true},
		{"everything/*", "everything/", true},
		{"everything/echo", "everything/", true},
		{"everything/**", "everything/", true},
		{"*/echo", "everything/", true},
		{"ev*/*", "everything/", true},
		{"e**", "everything/", true},
		{"every?hing/e?ho", "everything/", true},
		{"everything/", "everything/", false}, // no tool name after it
		{"everything", "everything/", false},
		{"ev*", "everything/", false}, // "*" stays in its segment
		{"other/*", "everything/", false},
		{"everything2/*", "everything/", false},
		{"?/*", "everything/", false},
		{"", "everything/", false},
		{"a", "", true},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := MatchPatternUnder(tt.pattern, tt.prefix); got != tt.want {
			t.Errorf("MatchPatternUnder(%q, %q) = %v, want %v", tt.pattern, tt.prefix, got, tt.want)
		}
	}
}

// FuzzMatchPatternUnder: a pattern that matches a name longer than a
// prefix of it is under that prefix.
func FuzzMatchPatternUnder(f *testing.F) {
	f.Add("a*/b?", "ax/", "by")
	f.Add("**", "a/", "b")
	f.Fuzz(func(t *testing.T, pattern, prefix, rest string) {
		if rest == "" || len(pattern) > 64 {
			t.Skip()
		}
		if MatchPattern(pattern, prefix+rest) && !MatchPatternUnder(pattern, prefix) {
			t.Fatalf("MatchPattern(%q, %q) but not MatchPatternUnder(%q, %q)", pattern, prefix+rest, pattern, prefix)
		}
	})
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if _, ok := FromContext(ctx); ok {
		t.Fatal("identity in an empty context")
	}
	id := testKeyring(t).Identities()[0]
	got, ok := FromContext(NewContext(ctx, id))
	if !ok || got != id {
		t.Fatalf("FromContext = %v, %v", got, ok)
	}
}

func FuzzMatchPattern(f *testing.F) {
	f.Add("a*b?c", "axxbyc")
	f.Add("**?*", "ab")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if !isASCII(pattern) || !isASCII(s) || len(pattern) > 64 {
			t.Skip()
		}
		// Reference: the same pattern as a regular expression.
		var re strings.Builder
		re.WriteString(`(?s)^`)
		for i := 0; i < len(pattern); i++ {
			switch c := pattern[i]; {
			case c == '*' && strings.HasPrefix(pattern[i:], "**"):
				re.WriteString(`.*`)
				for i+1 < len(pattern) && pattern[i+1] == '*' {
					i++
				}
			case c == '*':
				re.WriteString(`[^/]*`)
			case c == '?':
				re.WriteString(`[^/]`)
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString(`$`)
		want := pattern == "*" || regexp.MustCompile(re.String()).MatchString(s)
		if got := MatchPattern(pattern, s); got != want {
			t.Fatalf("MatchPattern(%q, %q) = %v, regexp says %v", pattern, s, got, want)
		}
	})
}

func FuzzParseBearer(f *testing.F) {
	f.Add("Bearer abc")
	f.Fuzz(func(t *testing.T, h string) {
		key, err := ParseBearer([]string{h})
		if err == nil && (key == "" || len(key) > MaxKeyLen || strings.ContainsAny(key, " \t\n")) {
			t.Fatalf("accepted bad key %q from %q", key, h)
		}
	})
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
