package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/setting"
	"github.com/llmrelay/llmrelay/internal/state"
)

// TestEverySectionsProblemsInOneRun: one mistake in each section checked
// by its own package, every one reported in the same run, on its line.
func TestEverySectionsProblemsInOneRun(t *testing.T) {
	yaml := `retry:
  initial_backoff: 0s
deadlines:
  stream_idle: 50ms
heartbeat:
  min_interval: 0s
auth:
  throttle: {log_interval: 0s}
structured_output:
  max_validation_retries: -1
outlier_detection:
  consecutive_failures: 0
state:
  on_store_failure: fail_opn
resume:
  grace: 0s
limits:
  provider_queue: -1
pricing:
  models:
    nowhere/x: {input: 1, output: 1}
tools:
  max_tool_result_bytes: 10
`
	_, err := Parse([]byte(yaml))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse: %v, want Problems", err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.Path)
		if p.Line == 0 {
			t.Errorf("%s has no line", p)
		}
	}
	for _, want := range []string{
		"retry.initial_backoff", "deadlines.stream_idle", "heartbeat.min_interval", "auth.throttle.log_interval",
		"structured_output.max_validation_retries", "outlier_detection.consecutive_failures", "state.on_store_failure",
		"resume.grace", "limits.provider_queue", "pricing.models.nowhere/x", "tools.max_tool_result_bytes",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no problem with %s; got %s", want, err)
		}
	}
}

// TestSectionsCheckedByHand: a section that needs only itself is checked
// by being composed (setting.Checker); one whose Check takes other
// sections' settings must be called by validate with them. This is the
// list of those: a new one fails here until validate calls it, and then
// joins the list.
func TestSectionsCheckedByHand(t *testing.T) {
	var byHand []string
	var walk func(typ reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() || yamlName(f) == "-" {
				continue
			}
			at := prefix + yamlName(f)
			if isInline(f) {
				at = strings.TrimSuffix(prefix, ".")
			}
			_, hasCheck := reflect.PointerTo(f.Type).MethodByName("Check")
			switch {
			case reflect.PointerTo(f.Type).Implements(checkerType):
			case f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == configPkg:
				walk(f.Type, at+".")
			case hasCheck:
				byHand = append(byHand, at+" ("+f.Type.String()+")")
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	want := []string{"deadlines (engine.Deadlines)", "limits (engine.Limits)", "pricing (usage.Pricing)"}
	if !slices.Equal(byHand, want) {
		t.Errorf("sections with a Check that needs more than its section: %v, want %v; "+
			"call a new one's Check in validate with what it depends on, and list it here", byHand, want)
	}
}

// TestLocatePlacesWhatBuildingFinds: the problems found building the
// providers and the routes are placed on the file's lines, as Load's are.
func TestLocatePlacesWhatBuildingFinds(t *testing.T) {
	cfg, err := Parse([]byte(`providers:
  - name: oa
    kind: openai
    api_key_env: LLMRELAY_TEST_UNSET_KEY
  - name: claude
    kind: anthropic
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = provider.NewSet(cfg.Providers)
	want := "config has 2 problems:\n" +
		"  config:4: providers[0].api_key_env: names LLMRELAY_TEST_UNSET_KEY, but that environment variable is unset or empty\n" +
		"  config:5: providers[1].api_key_env: required: the anthropic provider needs an API key; set api_key_env to the name of the environment variable that holds it"
	if got := cfg.Locate(err); got == nil || got.Error() != want {
		t.Errorf("Locate:\n got %v\nwant %s", got, want)
	}

	cfg, err = Parse([]byte("routes:\n  - name: smart\n    targets:\n      - model: mock/echo\n      - model: mock/gpt-9\n"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := provider.NewSet(cfg.Providers)
	if err != nil {
		t.Fatal(err)
	}
	_, err = route.NewTable(cfg.Routes, set, route.Options{Policy: state.DefaultOutlierPolicy})
	got := cfg.Locate(err)
	if want := `config:5: routes[0].targets[1].model: unknown model "gpt-9" for provider "mock"`; got == nil || got.Error() != want {
		t.Errorf("Locate:\n got %v\nwant %s", got, want)
	}

	other := errors.New("tls: no certificate")
	if got := cfg.Locate(other); got != other {
		t.Errorf("Locate changed an error that lists no settings: %v", got)
	}
	var l setting.List
	if got := cfg.Locate(l.Err()); got != nil {
		t.Errorf("Locate(nil) = %v", got)
	}
}
