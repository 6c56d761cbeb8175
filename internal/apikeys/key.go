// Package apikeys owns the API keys managed through the admin API
// (llmrelay.admin.v1.KeyService): their record in the state store, the
// checks of a new or changed key, their secrets (made once, kept only as a
// hash), revocation and expiry, the audit record of every change, and
// Keys, the lookup of a presented key among the config's keys and the
// stored ones that authentication runs on (auth.Keys).
//
// Config keys (auth.keys) and stored keys live side by side: a name is
// either's, never both's (CreateKey refuses a config key's name); config
// keys are read-only here.
package apikeys

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/spend"
)

// Source says where a key is kept.
type Source int

// The sources.
const (
	// SourceConfig: auth.keys in the config file; read-only here.
	SourceConfig Source = iota + 1
	// SourceStore: the state store, made through the admin API.
	SourceStore
)

// State says whether a key works, at a time.
type State int

// The states.
const (
	Active State = iota + 1
	Expired
	Revoked
)

// Key is one API key, without its secret: what the admin API shows, and,
// for a stored key, the record kept in the store (JSON).
type Key struct {
	Name   string `json:"-"`
	Source Source `json:"-"`
	// Scopes, Models and Tools are what the key may do and use (see
	// auth.KeyConfig).
	Scopes []string `json:"scopes"`
	Models []string `json:"models,omitempty"`
	Tools  []string `json:"tools,omitempty"`
	// Limits are the key's rate and stream limits.
	Limits Limits `json:"limits,omitzero"`
	// Team is the key's team, "" for none; Budgets its own.
	Team    string         `json:"team,omitempty"`
	Budgets []spend.Budget `json:"budgets,omitempty"`
	// ExpiresAt is when the key stops working; zero: never.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Metadata are free-form labels.
	Metadata map[string]string `json:"metadata,omitempty"`
	// CreatedAt, UpdatedAt and RevokedAt are the times of its changes
	// (zero for config keys, and RevokedAt while not revoked); CreatedBy
	// names the admin key that created it.
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
	CreatedBy string    `json:"created_by,omitempty"`
}

// Limits are a key's limits on calls; zero means unlimited.
type Limits struct {
	RequestsPerSecond    float64 `json:"requests_per_second,omitempty"`
	Burst                int     `json:"burst,omitempty"`
	MaxConcurrentStreams int     `json:"max_concurrent_streams,omitempty"`
}

// State returns the key's state at now.
func (k *Key) State(now time.Time) State {
	switch {
	case !k.RevokedAt.IsZero():
		return Revoked
	case !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt):
		return Expired
	}
	return Active
}

// keyConfig returns the key as auth.NewIdentity checks it.
func (k *Key) keyConfig(hash string) auth.KeyConfig {
	return auth.KeyConfig{
		Name: k.Name, SHA256: hash, Scopes: k.Scopes, Models: k.Models, Tools: k.Tools,
		RequestsPerSecond: k.Limits.RequestsPerSecond, Burst: k.Limits.Burst, MaxConcurrentStreams: k.Limits.MaxConcurrentStreams,
		Team: k.Team, Budgets: k.Budgets,
	}
}

// configKey returns a config key as the admin API shows it.
func configKey(c auth.KeyConfig) Key {
	return Key{
		Name: c.Name, Source: SourceConfig, Scopes: slices.Clone(c.Scopes), Models: slices.Clone(c.Models), Tools: slices.Clone(c.Tools),
		Limits: Limits{RequestsPerSecond: c.RequestsPerSecond, Burst: c.Burst, MaxConcurrentStreams: c.MaxConcurrentStreams},
		Team:   c.Team, Budgets: slices.Clone(c.Budgets),
	}
}

func encodeKey(k *Key) []byte {
	b, err := json.Marshal(k)
	if err != nil {
		panic("apikeys: a key does not encode: " + err.Error()) // only plain fields
	}
	return b
}

func decodeKey(name string, record []byte) (*Key, error) {
	k := &Key{}
	if err := json.Unmarshal(record, k); err != nil {
		return nil, fmt.Errorf("apikeys: stored key %s is damaged: %w", name, err)
	}
	k.Name, k.Source = name, SourceStore
	tidy(k)
	return k, nil
}

// tidy drops from a stored key what keys stored before auth refused it
// may hold, and what never had an effect: an entry repeated in scopes,
// models or tools, a burst without a rate. Such a key authenticates as
// before, and is shown (and written back by its next update) without it.
func tidy(k *Key) {
	if k.Limits.RequestsPerSecond == 0 {
		k.Limits.Burst = 0
	}
	for _, l := range []*[]string{&k.Scopes, &k.Models, &k.Tools} {
		var seen []string
		for _, v := range *l {
			if !slices.Contains(seen, v) {
				seen = append(seen, v)
			}
		}
		if len(seen) < len(*l) {
			*l = seen
		}
	}
}

// namePattern is what a stored key's name looks like (as a team's).
var namePattern = spend.NamePattern

// SecretPrefix starts every secret CreateKey makes.
const SecretPrefix = "llmr_"

// newSecret returns a fresh secret: SecretPrefix and 256 random bits in
// URL-safe base64 (43 characters).
func newSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Errors of the admin operations, matched with errors.Is; internal/apierr
// maps them to statuses.
var (
	// ErrNotFound: no key has the name (NOT_FOUND, KEY_NOT_FOUND).
	ErrNotFound = errors.New("no API key has this name")
	// ErrExists: a config or stored key has the name (ALREADY_EXISTS,
	// KEY_EXISTS).
	ErrExists = errors.New("an API key of this name exists")
	// ErrReadOnly: a config key cannot be changed here
	// (FAILED_PRECONDITION, KEY_READ_ONLY).
	ErrReadOnly = errors.New("config keys are read-only through the admin API: change auth.keys in the config file")
	// ErrRevoked: a revoked key cannot be changed (FAILED_PRECONDITION,
	// KEY_REVOKED).
	ErrRevoked = errors.New("the API key is revoked")
	// ErrConflict: the key kept changing under the update (ABORTED,
	// KEY_CONFLICT).
	ErrConflict = errors.New("the API key was changed by another update at the same time; call again")
	// ErrInvalid is matched by every *FieldError (INVALID_ARGUMENT).
	ErrInvalid = errors.New("invalid API key")
)

// FieldError is a field of a key (or of the request) that is wrong. It
// matches ErrInvalid.
type FieldError struct {
	// Field is the request field's path ("key.scopes", "key.budgets[1].window").
	Field   string
	Problem string
}

func (e *FieldError) Error() string        { return e.Field + " " + e.Problem }
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }
