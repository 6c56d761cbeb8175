package memory

import (
	"context"
	"slices"
	"sort"
	"sync"

	"github.com/llmrelay/llmrelay/internal/state"
)

var _ state.KeyStore = (*Store)(nil)

// keyTable is the store's API keys (state.KeyStore). The zero value is
// ready.
type keyTable struct {
	mu     sync.RWMutex
	byName map[string]state.StoredKey
	byHash map[string]string // hash → name
}

// CreateKey implements state.KeyStore.
func (s *Store) CreateKey(ctx context.Context, k state.StoredKey) (state.StoredKey, error) {
	if err := ctx.Err(); err != nil {
		return state.StoredKey{}, err
	}
	t := &s.keys
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.byName[k.Name]; ok {
		return state.StoredKey{}, state.ErrKeyExists
	}
	if _, ok := t.byHash[k.Hash]; ok {
		return state.StoredKey{}, state.ErrKeyExists
	}
	if t.byName == nil {
		t.byName, t.byHash = make(map[string]state.StoredKey), make(map[string]string)
	}
	k.Version, k.Record = 1, slices.Clone(k.Record)
	t.byName[k.Name], t.byHash[k.Hash] = k, k.Name
	return k, nil
}

// KeyByName implements state.KeyStore.
func (s *Store) KeyByName(ctx context.Context, name string) (state.StoredKey, error) {
	if err := ctx.Err(); err != nil {
		return state.StoredKey{}, err
	}
	s.keys.mu.RLock()
	defer s.keys.mu.RUnlock()
	return s.keys.get(name)
}

// KeyByHash implements state.KeyStore.
func (s *Store) KeyByHash(ctx context.Context, hash string) (state.StoredKey, error) {
	if err := ctx.Err(); err != nil {
		return state.StoredKey{}, err
	}
	s.keys.mu.RLock()
	defer s.keys.mu.RUnlock()
	name, ok := s.keys.byHash[hash]
	if !ok {
		return state.StoredKey{}, state.ErrKeyNotFound
	}
	return s.keys.get(name)
}

// get returns a copy of the key named name; t.mu is held.
func (t *keyTable) get(name string) (state.StoredKey, error) {
	k, ok := t.byName[name]
	if !ok {
		return state.StoredKey{}, state.ErrKeyNotFound
	}
	k.Record = slices.Clone(k.Record)
	return k, nil
}

// ListKeys implements state.KeyStore.
func (s *Store) ListKeys(ctx context.Context, after string, limit int) ([]state.StoredKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.keys.mu.RLock()
	defer s.keys.mu.RUnlock()
	names := make([]string, 0, len(s.keys.byName))
	for n := range s.keys.byName {
		if n > after {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]state.StoredKey, 0, min(limit, len(names)))
	for _, n := range names[:min(limit, len(names))] {
		k, _ := s.keys.get(n)
		out = append(out, k)
	}
	return out, nil
}

// UpdateKey implements state.KeyStore.
func (s *Store) UpdateKey(ctx context.Context, k state.StoredKey) (state.StoredKey, error) {
	if err := ctx.Err(); err != nil {
		return state.StoredKey{}, err
	}
	t := &s.keys
	t.mu.Lock()
	defer t.mu.Unlock()
	cur, ok := t.byName[k.Name]
	switch {
	case !ok:
		return state.StoredKey{}, state.ErrKeyNotFound
	case cur.Version != k.Version:
		return state.StoredKey{}, state.ErrKeyConflict
	}
	cur.Version++
	cur.Record = slices.Clone(k.Record)
	t.byName[k.Name] = cur
	cur.Record = slices.Clone(cur.Record)
	return cur, nil
}
