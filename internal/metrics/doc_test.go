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

// TestObservabilityDocListsWhatTheRegistryExposes: every metric family a
// fresh server's registry exposes at /metrics (the handler's own
// included), but the Go runtime's and the process's, is in
// docs/observability.md's table, with each of its labels and each value
// its series are made with at start (resume events, reload results, admin
// actions): what an operator scrapes on the first day is documented.
func TestObservabilityDocListsWhatTheRegistryExposes(t *testing.T) {
	doc, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	// rows returns the table rows that name the metric.
	rows := func(name string) []string {
		var out []string
		for _, l := range strings.Split(string(doc), "\n") {
			if cells := strings.Split(l, "|"); len(cells) > 3 && strings.Contains(cells[1], "`"+name+"`") {
				out = append(out, l)
			}
		}
		return out
	}
	m := New()
	m.Handler() // registers the handler's own metrics, as serving does
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		name := mf.GetName()
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		rs := rows(name)
		if len(rs) == 0 {
			t.Errorf("docs/observability.md has no row for the metric `%s`", name)
			continue
		}
		for _, series := range mf.GetMetric() {
			for _, lp := range series.GetLabel() {
				for _, want := range []string{lp.GetName(), lp.GetValue()} {
					for _, r := range rs {
						if !strings.Contains(r, "`"+want+"`") {
							t.Errorf("docs/observability.md's row of `%s` does not list `%s` (label %s):\n%s", name, want, lp.GetName(), r)
						}
					}
				}
			}
		}
	}
}
