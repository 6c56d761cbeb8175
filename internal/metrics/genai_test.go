package metrics

import (
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// TestAModelNamedOtherKeepsItsSeries: an open provider's model named
// "other" is not counted with the models beyond the bound.
func TestAModelNamedOtherKeepsItsSeries(t *testing.T) {
	m := New()
	m.GenerateDone(CallLabels{Provider: "open", Model: "other", OpenModels: true}, CallResult{Code: "OK"})
	for i := range MaxOpenModels + 5 {
		m.GenerateDone(CallLabels{Provider: "open", Model: "m" + strconv.Itoa(i), OpenModels: true}, CallResult{Code: "OK"})
	}
	count := func(model string) uint64 {
		return histogramCount(t, m.requestDuration.WithLabelValues("open", model, "", "", "", "", "", ""))
	}
	if got := count("other"); got != 1 {
		t.Errorf("the model named other has %d calls, want its own 1", got)
	}
	if got := count(OtherModel); got != 6 {
		t.Errorf("%d calls counted as %q, want the 6 beyond the bound", got, OtherModel)
	}
}

// TestOpenModelsAreBounded: a provider that lists no models keeps its
// first MaxOpenModels model names as labels and counts the rest as
// OtherModel, so clients cannot grow the metrics without bound; a provider
// that lists its models keeps every name.
func TestOpenModelsAreBounded(t *testing.T) {
	m := New()
	for i := range MaxOpenModels + 20 {
		m.GenerateDone(CallLabels{Provider: "open", Model: "m" + strconv.Itoa(i), OpenModels: true}, CallResult{Code: "OK"})
		m.GenerateDone(CallLabels{Provider: "listed", Model: "m" + strconv.Itoa(i)}, CallResult{Code: "OK"})
	}
	count := func(provider, model string) uint64 {
		h := m.requestDuration.WithLabelValues(provider, model, "", "", "", "", "", "")
		return histogramCount(t, h)
	}
	if got := count("open", OtherModel); got != 20 {
		t.Errorf("%d calls counted as %q, want 20", got, OtherModel)
	}
	if got := count("open", "m0"); got != 1 {
		t.Errorf("the first model has %d calls, want 1", got)
	}
	if got := count("listed", "m"+strconv.Itoa(MaxOpenModels+10)); got != 1 {
		t.Errorf("a listed model beyond the bound has %d calls, want 1", got)
	}
}

// TestRecordingDoesNotAllocate: once a label set's series exist, recording
// a call's metrics does not allocate.
func TestRecordingDoesNotAllocate(t *testing.T) {
	m := New()
	l := CallLabels{Provider: "mock", Model: "echo", Key: "checkout"}
	u := provider.Usage{InputTokens: 3, OutputTokens: 5}
	record := func() {
		m.FirstToken(l, time.Millisecond)
		m.AttemptUsage(l, u, 0.001, true)
		m.GenerateDone(l, CallResult{Code: "OK", Attempts: 1, Duration: time.Second})
	}
	record()
	if allocs := testing.AllocsPerRun(100, record); allocs != 0 {
		t.Errorf("%v allocations per call, want 0", allocs)
	}
	if got := testutil.ToFloat64(m.tokens.WithLabelValues("mock", "echo", "", "checkout", "", "", "", "output")); got != 5*102 {
		t.Errorf("output tokens %v, want %d (record, then AllocsPerRun's 101 runs)", got, 5*102)
	}
}

// histogramCount returns how many observations o (a histogram) holds.
func histogramCount(t *testing.T, o prometheus.Observer) uint64 {
	t.Helper()
	var d dto.Metric
	if err := o.(prometheus.Metric).Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetHistogram().GetSampleCount()
}

// TestTeamLabel: the tokens and cost of a key's calls carry its team, so
// a team's spend is one sum across its keys.
func TestTeamLabel(t *testing.T) {
	m := New()
	u := provider.Usage{InputTokens: 3, OutputTokens: 5}
	for _, key := range []string{"a", "b"} {
		m.AttemptUsage(CallLabels{Provider: "mock", Model: "echo", Key: key, Team: "research"}, u, 0.25, true)
	}
	m.AttemptUsage(CallLabels{Provider: "mock", Model: "echo", Key: "c"}, u, 0.25, true)
	if got := testutil.ToFloat64(m.cost.WithLabelValues("mock", "echo", "", "a", "research", "", "")); got != 0.25 {
		t.Errorf("key a's cost with its team: %v", got)
	}
	if got := testutil.ToFloat64(m.tokens.WithLabelValues("mock", "echo", "", "c", "", "", "", "input")); got != 3 {
		t.Errorf("a key of no team: %v input tokens under team \"\"", got)
	}
}

// TestEstimatedTokensOpenModelsAreBounded: the estimated tokens of a
// provider that lists no models are labelled as its calls are, its first
// MaxOpenModels model names and OtherModel beyond, so that a client that
// makes up model names (and ends its streams early) cannot grow
// llmrelay_estimated_tokens_total without bound.
func TestEstimatedTokensOpenModelsAreBounded(t *testing.T) {
	m := New()
	u := provider.Usage{InputTokens: 3, OutputTokens: 5}
	for i := range MaxOpenModels + 20 {
		m.Estimated(CallLabels{Provider: "open", Model: "m" + strconv.Itoa(i), OpenModels: true}, u, 0, false)
		m.Estimated(CallLabels{Provider: "listed", Model: "m" + strconv.Itoa(i)}, u, 0, false)
	}
	if got, want := testutil.CollectAndCount(m.governance.estimated), 2*(MaxOpenModels+1+MaxOpenModels+20); got != want {
		t.Errorf("%d series, want %d (input and output of %d open models and %q, and of every listed model)", got, want, MaxOpenModels, OtherModel)
	}
	if got := testutil.ToFloat64(m.governance.estimated.WithLabelValues("open", OtherModel, "input")); got != 3*20 {
		t.Errorf("input tokens counted as %q: %v, want %d", OtherModel, got, 3*20)
	}
}
