package apikeys

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/state"
)

// Admin runs the admin API's operations on keys: the one owner of what a
// stored key may be, and of the audit record of every change. It is safe
// for concurrent use.
type Admin struct {
	store   state.KeyStore
	config  map[string]auth.KeyConfig
	names   []string // the config keys' names, sorted
	teams   map[string]bool
	keys    *Keys
	now     func() time.Time
	log     *slog.Logger
	metrics *metrics.Metrics
}

// AdminDeps are what an Admin runs on.
type AdminDeps struct {
	// Store keeps the stored keys.
	Store state.KeyStore
	// Config are the config's keys (auth.keys), read-only; Teams the
	// config's teams' names.
	Config []auth.KeyConfig
	Teams  []string
	// Keys is the lookup of presented keys, which forgets a key changed
	// on this replica at once; nil for none.
	Keys *Keys
	// Now is the clock (nil: time.Now); Logger receives the audit records
	// (nil: discarded); Metrics counts the changes (nil: not counted).
	Now     func() time.Time
	Logger  *slog.Logger
	Metrics *metrics.Metrics
}

// NewAdmin returns the admin operations on d.
func NewAdmin(d AdminDeps) *Admin {
	a := &Admin{store: d.Store, config: make(map[string]auth.KeyConfig, len(d.Config)), teams: make(map[string]bool),
		keys: d.Keys, now: d.Now, log: d.Logger, metrics: d.Metrics}
	if a.now == nil {
		a.now = time.Now
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	for _, c := range d.Config {
		a.config[c.Name] = c
	}
	a.names = slices.Sorted(maps.Keys(a.config))
	for _, t := range d.Teams {
		a.teams[t] = true
	}
	return a
}

// Actor is who makes a change: the name of the admin's API key ("" on a
// server without keys) and the call's request id.
type Actor struct {
	Key, RequestID string
}

// Create stores a new key made of k's name and settable fields, and
// returns it with its secret, which nothing keeps: only its hash is
// stored. The key authenticates on every replica of the store at once.
func (a *Admin) Create(ctx context.Context, actor Actor, k Key) (*Key, string, error) {
	now := a.now().UTC()
	if !namePattern.MatchString(k.Name) {
		return nil, "", &FieldError{Field: "key.name", Problem: "must be 1 to 64 letters, digits, \".\", \"_\" or \"-\", starting with a letter or digit"}
	}
	if _, ok := a.config[k.Name]; ok {
		return nil, "", fmt.Errorf("%w: %s is a config key", ErrExists, k.Name)
	}
	nk := &Key{
		Name: k.Name, Source: SourceStore, Scopes: k.Scopes, Models: k.Models, Tools: k.Tools, Limits: k.Limits,
		Team: k.Team, Budgets: k.Budgets, ExpiresAt: k.ExpiresAt.UTC(), Metadata: k.Metadata,
		CreatedAt: now, UpdatedAt: now, CreatedBy: actor.Key,
	}
	secret := newSecret()
	hash := auth.HashKey(secret)
	if err := a.check(nk, hash, now, allFields); err != nil {
		return nil, "", err
	}
	_, err := a.store.CreateKey(ctx, state.StoredKey{Name: nk.Name, Hash: hash, Record: encodeKey(nk)})
	if errors.Is(err, state.ErrKeyExists) {
		// A revoked key keeps its name, and ListKeys hides it by default:
		// say so, or the name looks free.
		if _, cur, err := a.stored(ctx, k.Name); err == nil && !cur.RevokedAt.IsZero() {
			return nil, "", fmt.Errorf("%w: %s, revoked at %s (a revoked key keeps its name, listed with show_revoked, llmrelay keys list --revoked): give the new key another name",
				ErrExists, k.Name, cur.RevokedAt.Format(time.RFC3339))
		}
		return nil, "", fmt.Errorf("%w: %s", ErrExists, k.Name)
	}
	if err != nil {
		return nil, "", err
	}
	a.audit(ctx, metrics.AdminCreateKey, actor, nk, nil)
	return nk, secret, nil
}

// Get returns the key named name, config or stored.
func (a *Admin) Get(ctx context.Context, name string) (*Key, error) {
	if c, ok := a.config[name]; ok {
		k := configKey(c)
		return &k, nil
	}
	_, k, err := a.stored(ctx, name)
	return k, err
}

// stored reads the stored key named name: its record as the store has it
// (for an update conditional on it) and decoded.
func (a *Admin) stored(ctx context.Context, name string) (state.StoredKey, *Key, error) {
	sk, err := a.store.KeyByName(ctx, name)
	if errors.Is(err, state.ErrKeyNotFound) {
		return sk, nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err != nil {
		return sk, nil, err
	}
	k, err := decodeKey(sk.Name, sk.Record)
	return sk, k, err
}

// DefaultPageSize is the page size of a ListQuery without one.
const DefaultPageSize = 100

// ListQuery selects a page of keys.
type ListQuery struct {
	// PageSize is the most keys of the page; PageToken the previous
	// page's NextPageToken ("" for the first).
	PageSize  int
	PageToken string
	// ShowRevoked lists revoked keys too; Team, when set, only its keys.
	ShowRevoked bool
	Team        string
}

// List returns a page of keys, config and stored, by name, and the token
// of the next page ("" after the last).
func (a *Admin) List(ctx context.Context, q ListQuery) ([]*Key, string, error) {
	after, err := decodePageToken(q.PageToken)
	if err != nil {
		return nil, "", &FieldError{Field: "page_token", Problem: "is not a token ListKeys returned"}
	}
	limit := q.PageSize
	if limit <= 0 {
		limit = DefaultPageSize
	}
	var out []*Key
	keep := func(k *Key) {
		if (q.ShowRevoked || k.RevokedAt.IsZero()) && (q.Team == "" || k.Team == q.Team) {
			out = append(out, k)
		}
	}
	for len(out) < limit {
		page, err := a.store.ListKeys(ctx, after, limit)
		if err != nil {
			return nil, "", err
		}
		// Config keys up to the last stored key of a full page; past it,
		// the next page of stored keys decides.
		bound, more := "", len(page) == limit
		if more {
			bound = page[len(page)-1].Name
		}
		var batch []*Key
		for _, n := range a.names {
			if n > after && (!more || n <= bound) {
				k := configKey(a.config[n])
				batch = append(batch, &k)
			}
		}
		for _, sk := range page {
			if _, shadowed := a.config[sk.Name]; shadowed {
				continue // a config key took its name in a reload: the config's wins
			}
			k, err := decodeKey(sk.Name, sk.Record)
			if err != nil {
				return nil, "", err
			}
			batch = append(batch, k)
		}
		slices.SortFunc(batch, func(x, y *Key) int { return strings.Compare(x.Name, y.Name) })
		for _, k := range batch {
			after = k.Name
			keep(k)
			if len(out) == limit {
				return out, encodePageToken(after), nil
			}
		}
		if !more {
			return out, "", nil
		}
	}
	return out, encodePageToken(after), nil
}

func encodePageToken(after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("after:" + after))
}

func decodePageToken(tok string) (string, error) {
	if tok == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	after, ok := strings.CutPrefix(string(b), "after:")
	if err != nil || !ok {
		return "", errors.New("bad page token")
	}
	return after, nil
}

// The fields Update may change, by their names in an update mask.
const (
	FieldScopes    = "scopes"
	FieldModels    = "models"
	FieldTools     = "tools"
	FieldLimits    = "limits"
	FieldTeam      = "team"
	FieldBudgets   = "budgets"
	FieldExpiresAt = "expires_at"
	FieldMetadata  = "metadata"
)

// UpdatableFields lists the fields Update may change.
var UpdatableFields = []string{FieldScopes, FieldModels, FieldTools, FieldLimits, FieldTeam, FieldBudgets, FieldExpiresAt, FieldMetadata}

var allFields = UpdatableFields

// Update sets the fields of the stored key k.Name that fields names to
// k's values (a field named and unset in k is cleared), and returns the
// key as changed. Every replica sees the change within CacheTTL; this one
// at once.
func (a *Admin) Update(ctx context.Context, actor Actor, k Key, fields []string) (*Key, error) {
	if len(fields) == 0 {
		return nil, &FieldError{Field: "update_mask", Problem: "is empty: name the fields to change (" + strings.Join(UpdatableFields, ", ") + ")"}
	}
	for i, f := range fields {
		if !slices.Contains(UpdatableFields, f) {
			return nil, &FieldError{Field: fmt.Sprintf("update_mask.paths[%d]", i), Problem: fmt.Sprintf("%q is not a field UpdateKey changes; they are %s", f, strings.Join(UpdatableFields, ", "))}
		}
	}
	if _, ok := a.config[k.Name]; ok {
		return nil, fmt.Errorf("%w: %s", ErrReadOnly, k.Name)
	}
	for range 8 {
		sk, cur, err := a.stored(ctx, k.Name)
		if err != nil {
			return nil, err
		}
		if !cur.RevokedAt.IsZero() {
			return nil, fmt.Errorf("%w: %s was revoked at %s", ErrRevoked, k.Name, cur.RevokedAt.Format(time.RFC3339))
		}
		now := a.now().UTC()
		apply(cur, &k, fields)
		cur.UpdatedAt = now
		if err := a.check(cur, sk.Hash, now, fields); err != nil {
			return nil, err
		}
		sk.Record = encodeKey(cur)
		_, err = a.store.UpdateKey(ctx, sk)
		if errors.Is(err, state.ErrKeyConflict) {
			continue // changed meanwhile: apply the fields to what is there now
		}
		if err != nil {
			return nil, err
		}
		a.forget(sk.Hash)
		a.audit(ctx, metrics.AdminUpdateKey, actor, cur, fields)
		return cur, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrConflict, k.Name)
}

// apply copies the named fields from k to cur.
func apply(cur, k *Key, fields []string) {
	for _, f := range fields {
		switch f {
		case FieldScopes:
			cur.Scopes = k.Scopes
		case FieldModels:
			cur.Models = k.Models
		case FieldTools:
			cur.Tools = k.Tools
		case FieldLimits:
			cur.Limits = k.Limits
		case FieldTeam:
			cur.Team = k.Team
		case FieldBudgets:
			cur.Budgets = k.Budgets
		case FieldExpiresAt:
			cur.ExpiresAt = k.ExpiresAt.UTC()
		case FieldMetadata:
			cur.Metadata = k.Metadata
		}
	}
}

// Revoke revokes the stored key named name for good, and returns it. A
// revoked key is returned as it is. Every replica refuses it within
// CacheTTL; this one at once.
func (a *Admin) Revoke(ctx context.Context, actor Actor, name string) (*Key, error) {
	if _, ok := a.config[name]; ok {
		return nil, fmt.Errorf("%w: %s", ErrReadOnly, name)
	}
	for range 8 {
		sk, cur, err := a.stored(ctx, name)
		if err != nil {
			return nil, err
		}
		if !cur.RevokedAt.IsZero() {
			return cur, nil
		}
		now := a.now().UTC()
		cur.RevokedAt, cur.UpdatedAt = now, now
		sk.Record = encodeKey(cur)
		_, err = a.store.UpdateKey(ctx, sk)
		if errors.Is(err, state.ErrKeyConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		a.forget(sk.Hash)
		a.audit(ctx, metrics.AdminRevokeKey, actor, cur, nil)
		return cur, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrConflict, name)
}

func (a *Admin) forget(hash string) {
	if a.keys != nil {
		a.keys.forget(hash)
	}
}

// check says what is wrong with k, whose secret hashes to hash, as of now;
// fields are the ones being set. An expiry and a team are checked only
// when set: a reload may drop a team that stored keys still name, and
// that must not block changing their other fields.
func (a *Admin) check(k *Key, hash string, now time.Time, fields []string) error {
	if _, err := auth.NewIdentity(k.keyConfig(hash)); err != nil {
		var ke *auth.KeyError
		if errors.As(err, &ke) {
			field := ke.Field
			switch field {
			case "requests_per_second", "burst", "max_concurrent_streams":
				field = "limits." + field
			}
			return &FieldError{Field: "key." + field, Problem: ke.Problem}
		}
		return err
	}
	if k.Team != "" && slices.Contains(fields, FieldTeam) && !a.teams[k.Team] {
		teams := slices.Sorted(maps.Keys(a.teams))
		return &FieldError{Field: "key.team", Problem: fmt.Sprintf("%q is not a configured team; the teams are [%s]", k.Team, strings.Join(teams, ", "))}
	}
	if slices.Contains(fields, FieldExpiresAt) && !k.ExpiresAt.IsZero() && !k.ExpiresAt.After(now) {
		return &FieldError{Field: "key.expires_at", Problem: "is in the past: " + k.ExpiresAt.Format(time.RFC3339)}
	}
	return nil
}

// audit writes the one structured record of a change and counts it: who,
// what, which key, never a secret or its hash.
func (a *Admin) audit(ctx context.Context, action string, actor Actor, k *Key, fields []string) {
	a.metrics.AdminChange(action)
	attrs := []slog.Attr{
		slog.String("action", action), slog.String("actor", actor.Key), slog.String("key", k.Name),
		slog.String("request_id", actor.RequestID),
	}
	if fields != nil {
		attrs = append(attrs, slog.Any("fields", fields))
	}
	if k.Team != "" {
		attrs = append(attrs, slog.String("team", k.Team))
	}
	a.log.LogAttrs(ctx, slog.LevelInfo, "admin change", attrs...)
}
