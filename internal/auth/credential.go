package auth

import (
	"context"
	"fmt"
	"strings"
)

// Keys looks up the keys callers present. Today's is the Keyring built
// from the config; a store-backed one (keys in a shared store) implements
// the same. Implementations are safe for concurrent use.
type Keys interface {
	// Lookup returns the identity of a presented key: an error wrapping
	// ErrUnknownKey when no key matches. Any other error says the keys
	// could not be read (a store that is down): the caller is not at
	// fault, and its call is refused as unavailable, not unauthenticated.
	Lookup(ctx context.Context, key string) (*Identity, error)
}

// Rechecker is a Keys' optional capability, found by type assertion:
// Recheck reads a key that calls are open on again, where it is kept and
// past any cache, so that the calls of a key that stopped working while
// they run (revoked, expired, or gone from the keys) can be ended
// (engine.KeyCalls). Implementations are safe for concurrent use.
type Rechecker interface {
	// Recheck returns nil while the key id was authenticated as works:
	// the key itself, its secret (id.ID), whatever its name now, so that
	// a key renamed works on and a new secret under its name does not
	// make the old one work. It returns an error wrapping ErrRevokedKey,
	// ErrExpiredKey or ErrUnknownKey once the secret no longer works:
	// what Lookup of it would return. Any other error says the key could
	// not be read (a store that is down): its calls run on.
	Recheck(ctx context.Context, id *Identity) error
}

// Credential is what a caller presented, as its door read it: a key, or
// why none could be read (ErrNoCredentials, ErrMalformedCredentials).
type Credential struct {
	key string
	err error
}

// Bearer is the credential of an `authorization: Bearer <key>` header,
// given all its values (see ParseBearer).
func Bearer(header []string) Credential {
	key, err := ParseBearer(header)
	return Credential{key: key, err: err}
}

// APIKey is the credential of a header that carries the key alone (such
// as `x-api-key: <key>`), given all its values.
func APIKey(header []string) Credential {
	switch {
	case len(header) == 0:
		return Credential{err: ErrNoCredentials}
	case len(header) > 1:
		return Credential{err: fmt.Errorf("%w: more than one key header", ErrMalformedCredentials)}
	}
	key := strings.TrimSpace(header[0])
	if err := checkKey(key); err != nil {
		return Credential{err: err}
	}
	return Credential{key: key}
}

// Key returns the presented key, or why there is none.
func (c Credential) Key() (string, error) { return c.key, c.err }

// Authenticate returns the identity of credential c among keys: c's own
// error when it holds no key, else keys' Lookup's.
func Authenticate(ctx context.Context, keys Keys, c Credential) (*Identity, error) {
	key, err := c.Key()
	if err != nil {
		return nil, err
	}
	return keys.Lookup(ctx, key)
}

// Lookup implements Keys: it compares the key's hash with every configured
// hash in constant time.
func (k *Keyring) Lookup(_ context.Context, key string) (*Identity, error) {
	if id := k.lookup(key); id != nil {
		return id, nil
	}
	return nil, ErrUnknownKey
}

// checkKey refuses a presented key that is empty, longer than MaxKeyLen
// or contains spaces or control characters.
func checkKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty key", ErrMalformedCredentials)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: key longer than %d bytes", ErrMalformedCredentials, MaxKeyLen)
	case strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return fmt.Errorf("%w: key contains spaces or control characters", ErrMalformedCredentials)
	}
	return nil
}
