package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/llmrelay/llmrelay/internal/state"
)

// Stored API keys (state.KeyStore). A key is a hash under its secret's
// hash, read in one HGETALL on every authentication that misses the
// caller's cache; its name points at its hash; a sorted set of names
// (all scores 0) lists them in name order. They share the hash tag {keys},
// so the script that creates a key may touch all three on Redis Cluster.
//
//	{keys}:h:<hash>  hash: name, version, record
//	{keys}:n:<name>  string: the hash
//	{keys}:names     sorted set of names
//
// While Redis is unreachable, KeyByHash answers with fail_open from the
// keys this replica read last (keyCache); writes, lists and reads by name
// fail with state.ErrUnavailable whatever the policy.

func (s *Store) keyHashKey(hash string) string { return s.prefix + "{keys}:h:" + hash }
func (s *Store) keyNameKey(name string) string { return s.prefix + "{keys}:n:" + name }
func (s *Store) keyNamesKey() string           { return s.prefix + "{keys}:names" }

var _ state.KeyStore = (*Store)(nil)

// keyCache holds the keys this replica read last, by hash, for fail_open.
// Its size is bounded by the number of stored keys.
type keyCache struct {
	mu     sync.Mutex
	byHash map[string]state.StoredKey
}

func (c *keyCache) put(k state.StoredKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byHash == nil {
		c.byHash = make(map[string]state.StoredKey)
	}
	c.byHash[k.Hash] = k
}

func (c *keyCache) get(hash string) (state.StoredKey, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.byHash[hash]
	return k, ok
}

// createKeyScript stores a key unless its name or hash is taken.
//
//	KEYS[1]  the hash key, KEYS[2] the name key, KEYS[3] the names set
//	ARGV[1]  the name, ARGV[2] the hash, ARGV[3] the record
//
// It returns 1 when created, 0 when the name or hash is taken.
var createKeyScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'version', 1, 'record', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[3], 0, ARGV[1])
return 1
`)

// updateKeyScript replaces a key's record if its version is the one read.
//
//	KEYS[1]  the hash key
//	ARGV[1]  the version read, ARGV[2] the new record
//
// It returns the new version, 0 when the key is gone, -1 when its version
// moved on.
var updateKeyScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], 'version')
if not v then
  return 0
end
if v ~= ARGV[1] then
  return -1
end
redis.call('HSET', KEYS[1], 'record', ARGV[2])
return redis.call('HINCRBY', KEYS[1], 'version', 1)
`)

// downError is the error of an operation that needs Redis while it is
// unreachable, whatever the failure policy.
func (s *Store) downError() error {
	s.condMu.Lock()
	defer s.condMu.Unlock()
	return &state.UnavailableError{Cause: s.lastErr}
}

// CreateKey implements state.KeyStore.
func (s *Store) CreateKey(ctx context.Context, k state.StoredKey) (state.StoredKey, error) {
	if err := ctx.Err(); err != nil {
		return state.StoredKey{}, err
	}
	if !s.up.Load() {
		return state.StoredKey{}, s.downError()
	}
	ok, err := createKeyScript.Run(ctx, s.rdb, []string{s.keyHashKey(k.Hash), s.keyNameKey(k.Name), s.keyNamesKey()}, k.Name, k.Hash, k.Record).Int()
	if err != nil {
		return state.StoredKey{}, s.logError(ctx, "create_key", err)
	}
	if ok == 0 {
		return state.StoredKey{}, state.ErrKeyExists
	}
	k.Version = 1
	s.keys.put(k)
	return k, nil
}

// KeyByHash implements state.KeyStore.
func (s *Store) KeyByHash(ctx context.Context, hash string) (state.StoredKey, error) {
	if err := ctx.Err(); err != nil {
		return state.StoredKey{}, err
	}
	if s.up.Load() {
		k, err := s.readKey(ctx, hash)
		if err == nil || errors.Is(err, state.ErrKeyNotFound) {
			return k, err
		}
		if err := s.failed(ctx, "key_by_hash", err); err != nil {
			return state.StoredKey{}, err
		}
	}
	if err := s.fallback(); err != nil {
		return state.StoredKey{}, err
	}
	if k, ok := s.keys.get(hash); ok {
		return k, nil
	}
	return state.StoredKey{}, s.downError()
}

// readKey reads the key of hash from Redis, and remembers it.
func (s *Store) readKey(ctx context.Context, hash string) (state.StoredKey, error) {
	m, err := s.rdb.HGetAll(ctx, s.keyHashKey(hash)).Result()
	if err != nil {
		return state.StoredKey{}, err
	}
	if len(m) == 0 {
		return state.StoredKey{}, state.ErrKeyNotFound
	}
	k, err := storedKeyOf(hash, m)
	if err != nil {
		return state.StoredKey{}, err
	}
	s.keys.put(k)
	return k, nil
}

func storedKeyOf(hash string, m map[string]string) (state.StoredKey, error) {
	v, err := strconv.ParseInt(m["version"], 10, 64)
	if err != nil || m["name"] == "" {
		return state.StoredKey{}, fmt.Errorf("redisstore: the key of hash %.8s… is damaged: %v", hash, m["version"])
	}
	return state.StoredKey{Name: m["name"], Hash: hash, Version: v, Record: []byte(m["record"])}, nil
}

// KeyByName implements state.KeyStore: two round trips (the name's hash,
// then the key), which is fine for the admin API; a name's hash never
// changes.
func (s *Store) KeyByName(ctx context.Context, name string) (state.StoredKey, error) {
	if err := ctx.Err(); err != nil {
		return state.StoredKey{}, err
	}
	if !s.up.Load() {
		return state.StoredKey{}, s.downError()
	}
	hash, err := s.rdb.Get(ctx, s.keyNameKey(name)).Result()
	if errors.Is(err, redis.Nil) {
		return state.StoredKey{}, state.ErrKeyNotFound
	}
	if err != nil {
		return state.StoredKey{}, s.logError(ctx, "key_by_name", err)
	}
	k, err := s.readKey(ctx, hash)
	if err != nil && !errors.Is(err, state.ErrKeyNotFound) {
		return state.StoredKey{}, s.logError(ctx, "key_by_name", err)
	}
	return k, err
}

// ListKeys implements state.KeyStore: the names of the page, then their
// keys, in two round trips.
func (s *Store) ListKeys(ctx context.Context, after string, limit int) ([]state.StoredKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.up.Load() {
		return nil, s.downError()
	}
	min := "-"
	if after != "" {
		min = "(" + after
	}
	names, err := s.rdb.ZRangeByLex(ctx, s.keyNamesKey(), &redis.ZRangeBy{Min: min, Max: "+", Count: int64(limit)}).Result()
	if err != nil {
		return nil, s.logError(ctx, "list_keys", err)
	}
	if len(names) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	hashes := make([]*redis.StringCmd, len(names))
	for i, n := range names {
		hashes[i] = pipe.Get(ctx, s.keyNameKey(n))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.logError(ctx, "list_keys", err)
	}
	pipe = s.rdb.Pipeline()
	keys := make([]*redis.MapStringStringCmd, len(names))
	for i := range names {
		keys[i] = pipe.HGetAll(ctx, s.keyHashKey(hashes[i].Val()))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.logError(ctx, "list_keys", err)
	}
	out := make([]state.StoredKey, 0, len(names))
	for i := range names {
		k, err := storedKeyOf(hashes[i].Val(), keys[i].Val())
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// UpdateKey implements state.KeyStore.
func (s *Store) UpdateKey(ctx context.Context, k state.StoredKey) (state.StoredKey, error) {
	cur, err := s.KeyByName(ctx, k.Name)
	if err != nil {
		return state.StoredKey{}, err
	}
	v, err := updateKeyScript.Run(ctx, s.rdb, []string{s.keyHashKey(cur.Hash)}, strconv.FormatInt(k.Version, 10), k.Record).Int64()
	switch {
	case err != nil:
		return state.StoredKey{}, s.logError(ctx, "update_key", err)
	case v == 0:
		return state.StoredKey{}, state.ErrKeyNotFound
	case v < 0:
		return state.StoredKey{}, state.ErrKeyConflict
	}
	cur.Version, cur.Record = v, k.Record
	s.keys.put(cur)
	return cur, nil
}
