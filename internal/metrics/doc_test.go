package metrics

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestObservabilityDocListsEveryMetric: docs/observability.md's table names
// every metric this package defines (the Name constants of its source), so
// a new metric cannot go undocumented.
func TestObservabilityDocListsEveryMetric(t *testing.T) {
	doc, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`(?m)^\s*Name\w* += "((?:llmrelay|gen_ai)_\w+)"`)
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range name.FindAllStringSubmatch(string(src), -1) {
			found++
			if !strings.Contains(string(doc), "`"+m[1]+"`") {
				t.Errorf("docs/observability.md does not list the metric `%s` (%s)", m[1], f)
			}
		}
	}
	if found < 20 {
		t.Fatalf("found only %d metric names in the source: the pattern no longer matches how they are defined", found)
	}
}
