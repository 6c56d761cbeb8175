package state

import (
	"context"
	"errors"
)

// KeyStore keeps the API keys made through the admin API
// (llmrelay.admin.v1.KeyService), where every replica that shares the
// store reads them: a key stored by one replica authenticates on the others
// as soon as StoreKey returns. What a key holds (its scopes, models, limits,
// budgets, expiry, whether it is revoked) is the caller's record, opaque
// to the store; the store knows a key by its name and by the hash of its
// secret, and orders changes by its version.
//
// It is an optional capability of a Store, found by type assertion (both
// stores implement it). Implementations are safe for concurrent use; an
// error other than ErrKeyExists, ErrKeyNotFound and ErrKeyConflict means
// the store could not be reached (it matches ErrUnavailable) or ctx ended.
// While Redis is unreachable, the redis store answers KeyByHash with fail_open
// from the keys it read last (a key it never read is ErrUnavailable).
//
// statetest.RunKeyStore is its conformance suite.
type KeyStore interface {
	// CreateKey stores k with version 1 and returns it as stored. It
	// stores nothing and returns ErrKeyExists when a key of the same name
	// or the same hash is stored.
	CreateKey(ctx context.Context, k StoredKey) (StoredKey, error)
	// KeyByName returns the key named name, ErrKeyNotFound when none is.
	KeyByName(ctx context.Context, name string) (StoredKey, error)
	// KeyByHash returns the key whose secret has the hash hash,
	// ErrKeyNotFound when none has.
	KeyByHash(ctx context.Context, hash string) (StoredKey, error)
	// ListKeys returns at most limit keys whose names sort after after
	// (bytewise), in name order.
	ListKeys(ctx context.Context, after string, limit int) ([]StoredKey, error)
	// UpdateKey replaces the record of the key named k.Name with k.Record
	// if the stored key's version is still k.Version, and returns the key
	// as stored, with the next version. Its hash never changes. It returns
	// ErrKeyConflict when the version moved on (the caller reads the key
	// again and retries) and ErrKeyNotFound when no key has the name.
	UpdateKey(ctx context.Context, k StoredKey) (StoredKey, error)
}

// StoredKey is one API key as a KeyStore keeps it.
type StoredKey struct {
	// Name is the key's unique name.
	Name string
	// Hash is the lower-case hex SHA-256 of the key's secret, unique too;
	// the secret itself is never stored.
	Hash string
	// Version counts the key's changes, from 1 when it was created.
	Version int64
	// Record is what the key holds, in its owner's encoding.
	Record []byte
}

// Errors of a KeyStore.
var (
	// ErrKeyExists: a key of that name or hash is stored already.
	ErrKeyExists = errors.New("state: a key of that name or hash exists")
	// ErrKeyNotFound: no key has that name or hash.
	ErrKeyNotFound = errors.New("state: no such key")
	// ErrKeyConflict: the key changed since it was read.
	ErrKeyConflict = errors.New("state: the key changed since it was read")
)
