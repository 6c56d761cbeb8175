// Package auth owns llmrelay's API keys: the key table built from the
// configuration (key names and SHA-256 hashes, never the keys themselves),
// parsing of `authorization: Bearer <key>` credentials, constant-time lookup,
// each key's scopes, model patterns and limits, and the caller's Identity in
// a context.
//
// The package knows nothing of gRPC: internal/interceptors turns its errors
// into statuses.
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmrelay/llmrelay/internal/setting"
	"github.com/llmrelay/llmrelay/internal/spend"
)

// Scope names an operation a key may perform.
type Scope string

// Scopes.
const (
	// ScopeGenerate allows LLMService/Generate.
	ScopeGenerate Scope = "generate"
	// ScopeEmbed allows LLMService/Embed only: a key for an indexing job
	// that may embed but not generate. ScopeGenerate allows Embed too.
	ScopeEmbed Scope = "embed"
	// ScopeModelsList allows LLMService/ListModels.
	ScopeModelsList Scope = "models.list"
	// ScopeAdmin allows every method of llmrelay.admin.v1 (keys, teams
	// and usage).
	ScopeAdmin Scope = "admin"
	// ScopeUsageRead allows llmrelay.admin.v1.UsageService only.
	ScopeUsageRead Scope = "usage.read"
)

// knownScopes lists every Scope, for configuration checks and messages.
var knownScopes = []Scope{ScopeGenerate, ScopeEmbed, ScopeModelsList, ScopeAdmin, ScopeUsageRead}

// MaxKeyLen bounds the length of a presented key; longer credentials are
// malformed and are not hashed.
const MaxKeyLen = 512

// Sentinel errors of Authenticate, wrapped with detail.
var (
	// ErrNoCredentials: the call carries no authorization header.
	ErrNoCredentials = errors.New("no credentials")
	// ErrMalformedCredentials: the authorization header is not one
	// "Bearer <key>" value.
	ErrMalformedCredentials = errors.New("malformed credentials")
	// ErrUnknownKey: the key matches no configured key.
	ErrUnknownKey = errors.New("unknown API key")
	// ErrRevokedKey: the key was revoked (a stored key, through the admin
	// API).
	ErrRevokedKey = errors.New("revoked API key")
	// ErrExpiredKey: the key's expiry passed.
	ErrExpiredKey = errors.New("expired API key")
)

// KeyConfig configures one API key, as listed under `auth.keys` in the
// server's config file.
type KeyConfig struct {
	// Name identifies the key in logs, metrics and errors. Required, unique.
	Name string `yaml:"name"`
	// SHA256 is the hex SHA-256 of the key: what `llmrelay hash-key`
	// prints, with or without its "sha256: " prefix (NormalizeHash). The
	// key itself is never configured.
	SHA256 string `yaml:"sha256"`
	// Scopes lists what the key may do: "generate", "models.list".
	Scopes []string `yaml:"scopes"`
	// Models lists the models the key may use, as patterns on
	// "<provider>/<model>" or on a route's name: "*" matches any run of
	// characters within a "/"-separated segment, "**" any run ("/"
	// included), "?" any one character but "/". ["*"] allows every model
	// and route; "smart" allows the route smart (whatever its targets). See
	// MatchPattern.
	Models []string `yaml:"models"`
	// Tools lists the server tools the key may offer a model
	// (GenerateRequest.server_tools), as patterns on "<server>/<tool>",
	// matched as Models are: ["everything/*"] allows every tool of the MCP
	// server everything, ["*"] every tool; empty allows none. The decision
	// is internal/servertools' (Scopes), made again before every turn.
	Tools []string `yaml:"tools"`
	// RequestsPerSecond is the key's sustained call rate; 0 means unlimited.
	RequestsPerSecond float64 `yaml:"requests_per_second"`
	// Burst is how many calls may arrive at once above the rate; 0 means
	// max(1, ceil(RequestsPerSecond)). It needs a RequestsPerSecond.
	Burst int `yaml:"burst"`
	// MaxConcurrentStreams bounds the key's Generate calls in flight; 0
	// means unlimited.
	MaxConcurrentStreams int `yaml:"max_concurrent_streams"`
	// Team names the team the key belongs to (one of the config's teams):
	// the team's budgets hold for its keys together. "" for none.
	Team string `yaml:"team"`
	// Budgets are the key's own budgets (see internal/spend).
	Budgets []spend.Budget `yaml:"budgets"`
}

// Limits are an identity's call limits. Zero values mean unlimited.
type Limits struct {
	RequestsPerSecond    float64
	Burst                int
	MaxConcurrentStreams int
}

// Identity is an authenticated caller: one configured key. It is immutable
// and safe for concurrent use.
type Identity struct {
	// Name is the key's configured name.
	Name string
	// ID identifies the key itself, not its name: a digest of the key's
	// SHA-256, so a key keeps it when it is renamed, and another key given
	// its name does not get it. It is what owns the key's resumable calls
	// (docs/resume.md). "" for an identity not built from a key's hash.
	ID string
	// Limits are the key's rate and concurrency limits.
	Limits Limits
	// Team is the key's team, "" for none; Budgets its own budgets.
	Team    string
	Budgets []spend.Budget

	scopes []Scope
	models []string
}

// HasScope reports whether the key may perform s.
func (id *Identity) HasScope(s Scope) bool { return slices.Contains(id.scopes, s) }

// AllowsModel reports whether the key may use the model a request resolved
// to: the configured provider's name and the model name at that provider
// (see provider.SplitModel). Patterns match "<provider>/<model>" (see
// MatchPattern).
func (id *Identity) AllowsModel(providerName, model string) bool {
	s := providerName + "/" + model
	for _, p := range id.models {
		if MatchPattern(p, s) {
			return true
		}
	}
	return false
}

// ModelPatternsUnder returns the key's model patterns that may match a
// model of the provider named providerName whose models are not known
// (one that accepts any model name): those MatchPatternUnder finds under
// "<providerName>/". None: the key may use no model of it.
func (id *Identity) ModelPatternsUnder(providerName string) []string {
	var out []string
	for _, p := range id.models {
		if MatchPatternUnder(p, providerName+"/") {
			out = append(out, p)
		}
	}
	return out
}

// AllowsRoute reports whether the key may use the route named name (which
// has no "/"): the key's patterns are matched against the name, so a key
// allowed "smart" may use that route without being allowed each of its
// targets, and ["*"] allows every route.
func (id *Identity) AllowsRoute(name string) bool {
	for _, p := range id.models {
		if MatchPattern(p, name) {
			return true
		}
	}
	return false
}

// Keyring is the configured keys. It is immutable once built and safe for
// concurrent use.
type Keyring struct {
	hashes [][sha256.Size]byte
	ids    []*Identity
}

// KeyError says what is wrong with one configured key; NewKeyring returns
// it, so that the configuration can point at the setting.
type KeyError struct {
	// Index is the key's position in auth.keys, Name its name ("" if it has
	// none).
	Index int
	Name  string
	// Field is the key's setting at fault: "name", "sha256", "scopes", ...
	Field string
	// Problem says what is wrong with the setting, e.g. "is required".
	Problem string
}

// Error implements error: "auth.keys[1] (batch): scopes is empty; ...".
func (e *KeyError) Error() string {
	where := fmt.Sprintf("auth.keys[%d]", e.Index)
	if e.Name != "" {
		where += " (" + e.Name + ")"
	}
	return where + ": " + e.Field + " " + e.Problem
}

// HashPrefix is what `llmrelay hash-key` prints before a key's hash. A
// configured sha256 may keep it: pasting the whole line is not an error.
const HashPrefix = "sha256:"

// NormalizeHash returns a configured sha256 as plain lower-case hex: without
// surrounding space and without a leading HashPrefix (as `llmrelay
// hash-key` prints it). It does not check that the result is a hash.
func NormalizeHash(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= len(HashPrefix) && strings.EqualFold(s[:len(HashPrefix)], HashPrefix) {
		s = strings.TrimSpace(s[len(HashPrefix):])
	}
	return strings.ToLower(s)
}

// NewKeyring checks the configured keys and builds the table. It fails with
// a *KeyError on a missing or duplicate name, a hash that is not 64 hex
// digits (after NormalizeHash), a duplicate hash, an unknown or missing
// scope, an empty model list or pattern, an entry listed twice in scopes,
// models or tools, a negative limit or a burst without a rate: one for
// each key with a problem, joined (errors.Join) when there are several.
// An empty list gives an empty Keyring.
func NewKeyring(cfgs []KeyConfig) (*Keyring, error) {
	k := &Keyring{}
	names := make(map[string]int, len(cfgs))
	var errs []error
	for i, c := range cfgs {
		fail := func(field, format string, args ...any) {
			errs = append(errs, &KeyError{Index: i, Name: c.Name, Field: field, Problem: fmt.Sprintf(format, args...)})
		}
		id, sum, field, problem := buildIdentity(c)
		if problem != "" {
			fail(field, "%s", problem)
			continue
		}
		if j, dup := names[c.Name]; dup {
			fail("name", "%q is already used by auth.keys[%d]", c.Name, j)
			continue
		}
		if j := slices.Index(k.hashes, sum); j >= 0 {
			fail("sha256", "is the same as key %q's: each key needs its own", k.ids[j].Name)
			continue
		}
		names[c.Name] = i
		k.hashes = append(k.hashes, sum)
		k.ids = append(k.ids, id)
	}
	switch len(errs) {
	case 0:
		return k, nil
	case 1:
		return nil, errs[0]
	}
	return nil, errors.Join(errs...)
}

// identityID is Identity.ID for the key of SHA-256 sum: the first 128
// bits of a SHA-256 of it, in hex, so that what the resumable calls' store
// keeps of a key is not the hash the key store finds it by.
func identityID(sum [sha256.Size]byte) string {
	d := sha256.Sum256(append([]byte("llmrelay key id\x00"), sum[:]...))
	return hex.EncodeToString(d[:16])
}

// buildIdentity checks one key; on a problem it returns the field at fault
// and what is wrong with it.
func buildIdentity(c KeyConfig) (id *Identity, sum [sha256.Size]byte, field, problem string) {
	if c.Name == "" {
		return nil, sum, "name", "is required"
	}
	raw, err := hex.DecodeString(NormalizeHash(c.SHA256))
	if err != nil || len(raw) != sha256.Size {
		return nil, sum, "sha256", "must be 64 hex digits (what `llmrelay hash-key` prints after \"sha256: \"), not the key itself"
	}
	copy(sum[:], raw)
	if len(c.Scopes) == 0 {
		return nil, sum, "scopes", "is empty; known scopes: " + scopeList()
	}
	for _, l := range []struct {
		field string
		list  []string
	}{{"scopes", c.Scopes}, {"models", c.Models}, {"tools", c.Tools}} {
		if i, j := repeat(l.list); i >= 0 {
			return nil, sum, fmt.Sprintf("%s[%d]", l.field, j), fmt.Sprintf("%q is listed twice (also %s[%d]): list each once", l.list[j], l.field, i)
		}
	}
	id = &Identity{Name: c.Name, ID: identityID(sum)}
	for _, s := range c.Scopes {
		if !slices.Contains(knownScopes, Scope(s)) {
			problem := fmt.Sprintf("has an unknown scope %q; known scopes: %s", s, scopeList())
			if c := setting.Closest(s, ScopeNames()); c != "" {
				problem += "; did you mean " + c + "?"
			}
			return nil, sum, "scopes", problem
		}
		id.scopes = append(id.scopes, Scope(s))
	}
	if len(c.Models) == 0 && (id.HasScope(ScopeGenerate) || id.HasScope(ScopeEmbed)) {
		return nil, sum, "models", `is empty; list model patterns such as "mock/*", or ["*"] for every model`
	}
	for _, m := range c.Models {
		if UnusablePattern(m) {
			return nil, sum, "models", fmt.Sprintf("has a pattern %q that is empty or contains spaces or control characters", m)
		}
	}
	id.models = slices.Clone(c.Models)
	for _, m := range c.Tools {
		if UnusablePattern(m) {
			return nil, sum, "tools", fmt.Sprintf("has a pattern %q that is empty or contains spaces or control characters", m)
		}
	}
	for _, l := range []struct {
		field string
		v     float64
	}{
		{"requests_per_second", c.RequestsPerSecond},
		{"burst", float64(c.Burst)},
		{"max_concurrent_streams", float64(c.MaxConcurrentStreams)},
	} {
		switch {
		case l.v < 0 || math.IsNaN(l.v):
			return nil, sum, l.field, "must not be negative"
		case l.v > MaxKeyLimit:
			return nil, sum, l.field, fmt.Sprintf("must be at most %d, as through the admin API", MaxKeyLimit)
		}
	}
	if c.Burst > 0 && c.RequestsPerSecond == 0 {
		return nil, sum, "burst", "is set without requests_per_second: a burst is how many calls may arrive at once above a rate, and without one calls are not limited; set requests_per_second too, or leave burst 0"
	}
	var be *spend.BudgetError
	if err := spend.CheckBudgets(c.Budgets); errors.As(err, &be) {
		return nil, sum, fmt.Sprintf("budgets[%d].%s", be.Index, be.Field), be.Problem
	}
	id.Team, id.Budgets = c.Team, slices.Clone(c.Budgets)
	id.Limits = Limits{
		RequestsPerSecond:    c.RequestsPerSecond,
		Burst:                c.Burst,
		MaxConcurrentStreams: c.MaxConcurrentStreams,
	}
	if id.Limits.RequestsPerSecond > 0 && id.Limits.Burst == 0 {
		id.Limits.Burst = max(1, int(id.Limits.RequestsPerSecond+0.999999))
	}
	return id, sum, "", ""
}

// repeat returns the positions of the first entry of list that repeats an
// earlier one (i < j), or -1, -1.
func repeat(list []string) (i, j int) {
	seen := make(map[string]int, len(list))
	for j, v := range list {
		if i, ok := seen[v]; ok {
			return i, j
		}
		seen[v] = j
	}
	return -1, -1
}

// NewIdentity checks one key, as NewKeyring checks each configured key,
// and returns its identity: for keys kept elsewhere (a state store). Its
// error is a *KeyError with Index 0.
func NewIdentity(c KeyConfig) (*Identity, error) {
	id, _, field, problem := buildIdentity(c)
	if problem != "" {
		return nil, &KeyError{Name: c.Name, Field: field, Problem: problem}
	}
	return id, nil
}

// Scopes returns the key's scopes.
func (id *Identity) Scopes() []Scope { return slices.Clone(id.scopes) }

// Models returns the key's model patterns.
func (id *Identity) Models() []string { return slices.Clone(id.models) }

func scopeList() string { return strings.Join(ScopeNames(), ", ") }

// ScopeNames returns the name of every scope a key may hold, for messages
// and help.
func ScopeNames() []string {
	s := make([]string, len(knownScopes))
	for i, sc := range knownScopes {
		s[i] = string(sc)
	}
	return s
}

// Len returns the number of configured keys. Zero means the server runs
// without authentication.
func (k *Keyring) Len() int { return len(k.ids) }

// Identities returns the configured identities, in configuration order.
func (k *Keyring) Identities() []*Identity { return slices.Clone(k.ids) }

// Authenticate finds the identity for the values of a call's authorization
// header. It returns an error wrapping ErrNoCredentials,
// ErrMalformedCredentials or ErrUnknownKey. The error text never contains
// the key.
func (k *Keyring) Authenticate(header []string) (*Identity, error) {
	key, err := ParseBearer(header)
	if err != nil {
		return nil, err
	}
	if id := k.lookup(key); id != nil {
		return id, nil
	}
	return nil, ErrUnknownKey
}

// lookup compares the key's hash with every configured hash in constant
// time, without stopping at a match, so the time taken does not tell which
// key (if any) matched.
func (k *Keyring) lookup(key string) *Identity {
	sum := sha256.Sum256([]byte(key))
	found := -1
	for i := range k.hashes {
		if subtle.ConstantTimeCompare(sum[:], k.hashes[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return nil
	}
	return k.ids[found]
}

// ParseBearer returns the key of a "Bearer <key>" authorization header, given
// all of the header's values. The scheme is case-insensitive. It returns
// ErrNoCredentials when there is no value, and an error wrapping
// ErrMalformedCredentials when there are several, the scheme is not Bearer,
// or the key is empty, longer than MaxKeyLen or contains spaces or control
// characters.
func ParseBearer(header []string) (string, error) {
	switch len(header) {
	case 0:
		return "", ErrNoCredentials
	case 1:
	default:
		return "", fmt.Errorf("%w: more than one authorization header", ErrMalformedCredentials)
	}
	scheme, key, ok := strings.Cut(header[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", fmt.Errorf(`%w: want "Bearer <key>"`, ErrMalformedCredentials)
	}
	key = strings.TrimLeft(key, " ")
	if err := checkKey(key); err != nil {
		return "", err
	}
	return key, nil
}

// HashKey returns the lower-case hex SHA-256 of key: the value for a key's
// `sha256` in the configuration.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// MaxKeyLimit bounds each of a key's requests_per_second, burst and
// max_concurrent_streams, in the config as in the admin API's KeyLimits.
const MaxKeyLimit = 1_000_000

// UnusablePattern reports whether pattern (of models or of tools) could
// never match a name: it is empty, or has a space or a control character.
func UnusablePattern(pattern string) bool {
	return pattern == "" || strings.ContainsFunc(pattern, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// MatchPattern reports whether s ("<provider>/<model>") matches pattern,
// where "*" matches any run of characters within one "/"-separated segment,
// "**" any run of characters, "/" included, "?" any one character but "/",
// and every other character matches itself. The pattern "*" on its own
// matches everything. So "openai/gpt-4o*" covers "openai/gpt-4o-mini" but
// not "openai/gpt-4o/x", and "openrouter/**" covers
// "openrouter/meta-llama/llama-3-70b".
func MatchPattern(pattern, s string) bool {
	whole, _ := match(pattern, s)
	return whole
}

// MatchPatternUnder reports whether pattern matches some name longer than
// prefix that starts with it (as MatchPattern matches): whether a key's
// pattern may cover a tool of a server ("everything/") whose tools are not
// known. So "everything/*", "*/echo" and "**" are under "everything/",
// "other/*" and "everything/" are not.
func MatchPatternUnder(pattern, prefix string) bool {
	_, under := match(pattern, prefix)
	return under
}

// match is MatchPattern (whole) and MatchPatternUnder (under).
func match(pattern, s string) (whole, under bool) {
	if pattern == "*" {
		return true, true
	}
	// One row of the match table per pattern token: ok[j] says whether the
	// tokens so far match s[:j]. Linear in len(pattern)·len(s), never
	// exponential. Where the tokens so far match all of s, a longer string
	// matches too if a token follows, or the last one is a star that can
	// take one more character.
	ok := make([]bool, len(s)+1)
	ok[0] = true
	under = len(s) == 0 && len(pattern) > 0
	for p := 0; p < len(pattern); p++ {
		star := pattern[p] == '*'
		switch c := pattern[p]; {
		case c == '*' && p+1 < len(pattern) && pattern[p+1] == '*':
			for p+1 < len(pattern) && pattern[p+1] == '*' {
				p++
			}
			for j := 1; j <= len(s); j++ {
				ok[j] = ok[j] || ok[j-1]
			}
		case c == '*':
			for j := 1; j <= len(s); j++ {
				ok[j] = ok[j] || ok[j-1] && s[j-1] != '/'
			}
		default:
			for j := len(s); j >= 1; j-- {
				ok[j] = ok[j-1] && (s[j-1] == c || c == '?' && s[j-1] != '/')
			}
			ok[0] = false
		}
		under = under || ok[len(s)] && (star || p+1 < len(pattern))
	}
	return ok[len(s)], under
}

type identityKey struct{}

// NewContext returns a context that carries id.
func NewContext(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the caller's identity. ok is false when the call was
// not authenticated: the server runs without keys, or the method (health,
// reflection) needs none.
func FromContext(ctx context.Context) (id *Identity, ok bool) {
	id, ok = ctx.Value(identityKey{}).(*Identity)
	return id, ok && id != nil
}
