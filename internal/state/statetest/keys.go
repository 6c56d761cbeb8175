package statetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/llmrelay/llmrelay/internal/state"
)

// NewKeyStore returns a fresh, empty key store for one test, closed (if
// it needs it) by the test's cleanup.
type NewKeyStore func(t *testing.T) state.KeyStore

// RunKeyStore runs the conformance suite of state.KeyStore against the
// implementations newKeys makes.
func RunKeyStore(t *testing.T, newKeys NewKeyStore) {
	tests := []struct {
		name string
		run  func(*testing.T, state.KeyStore)
	}{
		{"CreateThenReadByNameAndHash", testKeyCreateRead},
		{"NameAndHashAreUnique", testKeyUnique},
		{"UnknownKey", testKeyUnknown},
		{"UpdateNeedsTheVersion", testKeyUpdate},
		{"ConcurrentUpdatesOneWins", testKeyConcurrentUpdates},
		{"ListPagesByName", testKeyList},
		{"RecordKeptByteForByte", testKeyBinary},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newKeys(t)) })
	}
}

// hashOf returns a hex SHA-256, as keys are stored.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func storedKey(name string) state.StoredKey {
	return state.StoredKey{Name: name, Hash: hashOf("secret of " + name), Record: []byte(`{"name":"` + name + `"}`)}
}

func createKey(t *testing.T, s state.KeyStore, k state.StoredKey) state.StoredKey {
	t.Helper()
	got, err := s.CreateKey(t.Context(), k)
	if err != nil {
		t.Fatalf("CreateKey(%s): %v", k.Name, err)
	}
	return got
}

func sameKey(t *testing.T, what string, got, want state.StoredKey) {
	t.Helper()
	if got.Name != want.Name || got.Hash != want.Hash || got.Version != want.Version || !bytes.Equal(got.Record, want.Record) {
		t.Fatalf("%s: got %s/%s v%d %q, want %s/%s v%d %q", what, got.Name, got.Hash, got.Version, got.Record, want.Name, want.Hash, want.Version, want.Record)
	}
}

func testKeyCreateRead(t *testing.T, s state.KeyStore) {
	k := storedKey("alice")
	got := createKey(t, s, k)
	k.Version = 1
	sameKey(t, "CreateKey", got, k)
	byName, err := s.KeyByName(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	sameKey(t, "KeyByName", byName, k)
	byHash, err := s.KeyByHash(t.Context(), k.Hash)
	if err != nil {
		t.Fatal(err)
	}
	sameKey(t, "KeyByHash", byHash, k)
}

func testKeyUnique(t *testing.T, s state.KeyStore) {
	createKey(t, s, storedKey("alice"))
	sameName := storedKey("alice")
	sameName.Hash = hashOf("another secret")
	if _, err := s.CreateKey(t.Context(), sameName); !errors.Is(err, state.ErrKeyExists) {
		t.Fatalf("CreateKey with a name in use: %v, want ErrKeyExists", err)
	}
	sameHash := storedKey("bob")
	sameHash.Hash = storedKey("alice").Hash
	if _, err := s.CreateKey(t.Context(), sameHash); !errors.Is(err, state.ErrKeyExists) {
		t.Fatalf("CreateKey with a hash in use: %v, want ErrKeyExists", err)
	}
	// Neither refused key left anything behind.
	if _, err := s.KeyByName(t.Context(), "bob"); !errors.Is(err, state.ErrKeyNotFound) {
		t.Fatalf("KeyByName(bob) after a refused create: %v, want ErrKeyNotFound", err)
	}
	if _, err := s.KeyByHash(t.Context(), hashOf("another secret")); !errors.Is(err, state.ErrKeyNotFound) {
		t.Fatalf("KeyByHash after a refused create: %v, want ErrKeyNotFound", err)
	}
}

func testKeyUnknown(t *testing.T, s state.KeyStore) {
	if _, err := s.KeyByName(t.Context(), "nobody"); !errors.Is(err, state.ErrKeyNotFound) {
		t.Fatalf("KeyByName: %v, want ErrKeyNotFound", err)
	}
	if _, err := s.KeyByHash(t.Context(), hashOf("nothing")); !errors.Is(err, state.ErrKeyNotFound) {
		t.Fatalf("KeyByHash: %v, want ErrKeyNotFound", err)
	}
	if _, err := s.UpdateKey(t.Context(), state.StoredKey{Name: "nobody", Version: 1}); !errors.Is(err, state.ErrKeyNotFound) {
		t.Fatalf("UpdateKey: %v, want ErrKeyNotFound", err)
	}
}

func testKeyUpdate(t *testing.T, s state.KeyStore) {
	k := createKey(t, s, storedKey("alice"))
	k.Record = []byte(`{"revoked":true}`)
	got, err := s.UpdateKey(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	want := k
	want.Version = 2
	sameKey(t, "UpdateKey", got, want)
	// The same update again carries a stale version.
	if _, err := s.UpdateKey(t.Context(), k); !errors.Is(err, state.ErrKeyConflict) {
		t.Fatalf("UpdateKey with version 1 after version 2: %v, want ErrKeyConflict", err)
	}
	byHash, err := s.KeyByHash(t.Context(), k.Hash)
	if err != nil {
		t.Fatal(err)
	}
	sameKey(t, "KeyByHash after UpdateKey", byHash, want)
	// The hash is the stored key's, whatever the update carries.
	other := got
	other.Hash = hashOf("another secret")
	if _, err := s.UpdateKey(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeyByHash(t.Context(), k.Hash); err != nil {
		t.Fatalf("KeyByHash of the created hash after an update carrying another: %v", err)
	}
}

func testKeyConcurrentUpdates(t *testing.T, s state.KeyStore) {
	k := createKey(t, s, storedKey("alice"))
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			u := k
			u.Record = fmt.Appendf(nil, `{"writer":%d}`, i)
			_, errs[i] = s.UpdateKey(t.Context(), u)
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, state.ErrKeyConflict):
			t.Fatalf("UpdateKey: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d updates of version 1 succeeded, want exactly 1", won, n)
	}
}

func testKeyList(t *testing.T, s state.KeyStore) {
	names := []string{"carol", "alice", "dave", "bob", "eve"}
	for _, n := range names {
		createKey(t, s, storedKey(n))
	}
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("ListKeys does not end")
		}
		page, err := s.ListKeys(t.Context(), after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 2 {
			t.Fatalf("ListKeys(limit 2) returned %d keys", len(page))
		}
		if len(page) == 0 {
			break
		}
		for _, k := range page {
			got = append(got, k.Name)
			if k.Version != 1 || k.Hash != hashOf("secret of "+k.Name) {
				t.Fatalf("listed key %+v", k)
			}
		}
		after = page[len(page)-1].Name
	}
	want := []string{"alice", "bob", "carol", "dave", "eve"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
}

func testKeyBinary(t *testing.T, s state.KeyStore) {
	k := storedKey("alice")
	k.Record = []byte{0, 1, 2, 0xff, '\n', '"', 0}
	createKey(t, s, k)
	got, err := s.KeyByName(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Record, k.Record) {
		t.Fatalf("record %q, want %q", got.Record, k.Record)
	}
}
