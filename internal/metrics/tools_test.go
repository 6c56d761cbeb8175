package metrics

import (
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestToolNamesAreBounded: an MCP server that lists ever new tool names
// (allow ["*"] offers them all) keeps its first MaxToolNames as tool
// labels and counts the calls and retries of the rest as OtherTool, so it
// cannot grow the tool metrics without bound; another server has a bound
// of its own.
func TestToolNamesAreBounded(t *testing.T) {
	m := New()
	for i := range MaxToolNames + 20 {
		name := "tool" + strconv.Itoa(i)
		m.ToolCall("renamer", name, "ok", time.Millisecond)
		m.ToolRetry("renamer", name)
	}
	m.ToolCall("other-server", "search", "ok", time.Millisecond)
	m.ToolCall("renamer", "tool0", "ok", time.Millisecond) // seen: keeps its label

	if got, want := testutil.CollectAndCount(m.tools.calls), MaxToolNames+1+1; got != want {
		t.Errorf("%d call series, want %d (renamer's %d tools and %q, other-server's one)", got, want, MaxToolNames, OtherTool)
	}
	if got, want := testutil.CollectAndCount(m.tools.retries), MaxToolNames+1; got != want {
		t.Errorf("%d retry series, want %d", got, want)
	}
	for _, c := range []struct {
		tool string
		want float64
	}{{OtherTool, 20}, {"tool0", 2}, {"tool" + strconv.Itoa(MaxToolNames-1), 1}} {
		if got := testutil.ToFloat64(m.tools.calls.WithLabelValues("renamer", c.tool, "ok")); got != c.want {
			t.Errorf("renamer's calls of %s: %v, want %v", c.tool, got, c.want)
		}
	}
	if got := testutil.ToFloat64(m.tools.retries.WithLabelValues("renamer", OtherTool)); got != 20 {
		t.Errorf("renamer's retries counted as %q: %v, want 20", OtherTool, got)
	}
	if got := testutil.ToFloat64(m.tools.calls.WithLabelValues("other-server", "search", "ok")); got != 1 {
		t.Errorf("other-server's search: %v calls, want 1", got)
	}
}

// TestAToolNamedOtherKeepsItsSeries: a server's tool named "other" is not
// counted with the server's tools beyond MaxToolNames.
func TestAToolNamedOtherKeepsItsSeries(t *testing.T) {
	m := New()
	m.ToolCall("go", "other", "ok", time.Millisecond)
	for i := range MaxToolNames { // the last one is beyond the bound
		m.ToolCall("go", "tool"+strconv.Itoa(i), "ok", time.Millisecond)
	}
	if got := testutil.ToFloat64(m.tools.calls.WithLabelValues("go", "other", "ok")); got != 1 {
		t.Errorf("calls of the tool named other: %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.tools.calls.WithLabelValues("go", OtherTool, "ok")); got != 1 {
		t.Errorf("calls of the tools beyond the bound (%s): %v, want 1", OtherTool, got)
	}
}
