package client

import (
	"bytes"
	"os"
	"testing"
)

// TestModuleCarriesTheLicence: a module's zip holds only the files of its
// own directory, so the repository's LICENSE is not in this module's; a
// module without one is not documented on pkg.go.dev and leaves its users
// without the licence's text.
func TestModuleCarriesTheLicence(t *testing.T) {
	own, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatalf("the client module has no LICENSE of its own: %v", err)
	}
	repo, err := os.ReadFile("../LICENSE")
	if err != nil {
		t.Skipf("no repository LICENSE to compare with: %v", err)
	}
	if !bytes.Equal(own, repo) {
		t.Error("client/LICENSE differs from the repository's LICENSE")
	}
}
