package redisstore_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestStateStoreErrorOpsAreDocumented: every op the store counts in
// llmrelay_state_store_errors_total (a literal name handed to the
// metric, or to the helpers that count a failed command) is listed in
// docs/observability.md's row of the metric, so an operator can tell
// what a series is about.
func TestStateStoreErrorOpsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "| `llmrelay_state_store_errors_total` |") {
			row = l
		}
	}
	if row == "" {
		t.Fatal("docs/observability.md has no row for llmrelay_state_store_errors_total")
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	op := regexp.MustCompile(`\b(?:StateStoreError|failed|logError|admitInRedis)\((?:ctx, )?"([a-z_]+)"`)
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range op.FindAllStringSubmatch(string(src), -1) {
			found++
			if !strings.Contains(row, "`"+m[1]+"`") {
				t.Errorf("docs/observability.md's row of llmrelay_state_store_errors_total does not list the op `%s` (%s)", m[1], f)
			}
		}
	}
	if found < 20 {
		t.Fatalf("found only %d ops in the source: the pattern no longer matches how they are counted", found)
	}
}
