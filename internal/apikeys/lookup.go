package apikeys

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/state"
)

// CacheTTL is how long a replica authenticates a stored key from what it
// read without reading it again: the most a change or a revocation made on
// another replica takes to reach it. A key created anywhere authenticates
// everywhere at once (a key not in the cache is read from the store).
const CacheTTL = 500 * time.Millisecond

// maxCached bounds the cache before it drops what is stale.
const maxCached = 10_000

// Keys looks up presented keys among the config's keys (auth.Keyring,
// compared in constant time) and, for the others, the keys stored in a
// state.KeyStore, read by the hash of the presented key and kept for
// CacheTTL. It implements auth.Keys. It is safe for concurrent use.
type Keys struct {
	config *auth.Keyring
	// configNames are the config keys' names: a stored key of one of them
	// (a reload gave a config key its name) is not looked at. configIDs
	// are their Identity.IDs: the secrets the config accepts.
	configNames map[string]bool
	configIDs   map[string]bool
	store       state.KeyStore // nil: the config's keys only
	now         func() time.Time

	mu     sync.Mutex
	cache  map[string]cached // by hash
	byName map[string]string // name → hash, of the keys in cache
}

// cached is a stored key as last read.
type cached struct {
	id   *auth.Identity
	key  *Key
	read time.Time
}

// NewKeys returns the lookup of config's keys and store's (nil: none); now
// is its clock (nil: time.Now).
func NewKeys(config *auth.Keyring, store state.KeyStore, now func() time.Time) *Keys {
	if now == nil {
		now = time.Now
	}
	k := &Keys{config: config, configNames: map[string]bool{}, configIDs: map[string]bool{}, store: store, now: now,
		cache: make(map[string]cached), byName: make(map[string]string)}
	for _, id := range config.Identities() {
		k.configNames[id.Name], k.configIDs[id.ID] = true, true
	}
	return k
}

var _ auth.Keys = (*Keys)(nil)

// Lookup implements auth.Keys: the identity of the presented key, or an
// error wrapping auth.ErrUnknownKey, auth.ErrRevokedKey or
// auth.ErrExpiredKey; any other error says the store could not be read.
// A stored key whose name a config key took (in a reload) is unknown: the
// config's key is the one of that name, as GetKey and ListKeys show, and
// the stored one could be neither seen nor revoked.
func (k *Keys) Lookup(ctx context.Context, key string) (*auth.Identity, error) {
	if id, err := k.config.Lookup(ctx, key); err == nil || k.store == nil {
		return id, err
	}
	hash := auth.HashKey(key)
	now := k.now()
	k.mu.Lock()
	c, ok := k.cache[hash]
	k.mu.Unlock()
	if !ok || now.Sub(c.read) >= CacheTTL {
		sk, err := k.store.KeyByHash(ctx, hash)
		if errors.Is(err, state.ErrKeyNotFound) {
			k.forget(hash)
			return nil, auth.ErrUnknownKey
		}
		if err != nil {
			return nil, err
		}
		if c, err = k.remember(sk, now); err != nil {
			return nil, err
		}
	}
	if k.configNames[c.key.Name] {
		return nil, auth.ErrUnknownKey
	}
	switch c.key.State(now) {
	case Revoked:
		return nil, auth.ErrRevokedKey
	case Expired:
		return nil, auth.ErrExpiredKey
	}
	return c.id, nil
}

var _ auth.Rechecker = (*Keys)(nil)

// Recheck implements auth.Rechecker, by the key's secret (id.ID) as
// Lookup would find it: nil, without a read, while a config key has the
// secret, whatever its name (config keys are neither revoked nor expire);
// else it reads the stored key of id's name from the store (not from the
// cache, which it refreshes, so that this replica refuses the key's new
// calls at once too: stored keys are not renamed) and returns
// auth.ErrUnknownKey when there is none, it has another secret (id's was
// a config key's, removed or given a new secret) or a config key took its
// name, auth.ErrRevokedKey or auth.ErrExpiredKey once it is revoked or
// expired at k's clock. Without a store a secret no config key has is
// unknown. Any other error says the store could not be read.
func (k *Keys) Recheck(ctx context.Context, id *auth.Identity) error {
	switch {
	case k.configIDs[id.ID]:
		return nil
	case k.store == nil:
		return auth.ErrUnknownKey
	}
	sk, err := k.store.KeyByName(ctx, id.Name)
	if errors.Is(err, state.ErrKeyNotFound) {
		return auth.ErrUnknownKey
	}
	if err != nil {
		return err
	}
	now := k.now()
	c, err := k.remember(sk, now)
	if err != nil {
		return err
	}
	if c.id.ID != id.ID || k.configNames[sk.Name] {
		return auth.ErrUnknownKey
	}
	switch c.key.State(now) {
	case Revoked:
		return auth.ErrRevokedKey
	case Expired:
		return auth.ErrExpiredKey
	}
	return nil
}

// remember decodes a stored key into its identity and caches it.
func (k *Keys) remember(sk state.StoredKey, now time.Time) (cached, error) {
	key, err := decodeKey(sk.Name, sk.Record)
	if err != nil {
		return cached{}, err
	}
	id, err := auth.NewIdentity(key.keyConfig(sk.Hash))
	if err != nil {
		return cached{}, errors.Join(errors.New("apikeys: stored key "+sk.Name+" does not check"), err)
	}
	c := cached{id: id, key: key, read: now}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.cache) >= maxCached {
		for h, old := range k.cache {
			if now.Sub(old.read) >= CacheTTL {
				delete(k.cache, h)
				delete(k.byName, old.key.Name)
			}
		}
	}
	k.cache[sk.Hash] = c
	k.byName[sk.Name] = sk.Hash
	return c, nil
}

// StoredTools returns the server tool patterns of the stored key named
// name, as this replica last read it (a call's key was read as it was
// admitted), nil when it has not read it or the key is revoked or
// expired. servertools asks it for the keys the config does not list.
func (k *Keys) StoredTools(name string) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	c, ok := k.cache[k.byName[name]]
	if !ok || c.key.State(k.now()) != Active {
		return nil
	}
	return c.key.Tools
}

// forget drops a key from the cache: it changed on this replica.
func (k *Keys) forget(hash string) {
	k.mu.Lock()
	delete(k.cache, hash)
	k.mu.Unlock()
}
