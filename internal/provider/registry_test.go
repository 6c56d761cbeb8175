package provider_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/setting"
)

type fake struct{}

func (fake) Stream(context.Context, *provider.Request) (provider.Stream, error) { return nil, nil }
func (fake) DefaultModels() []string                                            { return []string{"a", "b"} }

func init() {
	provider.Register("test-fake", func(provider.Config) (provider.Provider, error) { return fake{}, nil })
	provider.Register("test-picky", func(provider.Config) (provider.Provider, error) {
		return nil, &provider.ConfigProblem{Field: "base_url", Problem: "is not a URL"}
	})
}

func TestNewSetAndResolve(t *testing.T) {
	set, err := provider.NewSet([]provider.Config{
		{Name: "open", Kind: "test-fake"},
		{Name: "listed", Kind: "test-fake", Models: []string{"only"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		model, wantProvider, wantModel string
		wantErr                        error
	}{
		{"open/anything", "open", "anything", nil},
		{"open/org/model:tag", "open", "org/model:tag", nil},
		{"listed/only", "listed", "only", nil},
		{"listed/other", "", "", provider.ErrUnknownModel},
		{"nope/x", "", "", provider.ErrUnknownProvider},
		{"noslash", "", "", provider.ErrUnknownProvider},
		{"open/", "", "", provider.ErrUnknownProvider},
	}
	for _, tc := range tests {
		e, m, err := set.Resolve(tc.model)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("Resolve(%q) error %v, want %v", tc.model, err, tc.wantErr)
			continue
		}
		if err == nil && (e.Config.Name != tc.wantProvider || m != tc.wantModel) {
			t.Errorf("Resolve(%q) = %s, %s; want %s, %s", tc.model, e.Config.Name, m, tc.wantProvider, tc.wantModel)
		}
	}
	if e, _ := set.Get("open"); strings.Join(e.Models, ",") != "a,b" {
		t.Errorf("unlisted models %v, want the adapter's defaults", e.Models)
	}
	if e, _ := set.Get("listed"); strings.Join(e.Models, ",") != "only" {
		t.Errorf("listed models %v, want the configured list", e.Models)
	}
}

func TestNewSetRejectsUnknownKindListingKnownOnes(t *testing.T) {
	_, err := provider.NewSet([]provider.Config{{Name: "x", Kind: "nosuch"}})
	if err == nil || !strings.Contains(err.Error(), "test-fake") || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("error %v, want it to name the unknown kind and list the known ones", err)
	}
}

// TestNewSetReportsEveryProvidersProblem: every provider's problem at
// once, each at its setting (a factory's *ConfigProblem names its own),
// with the provider's item to place it when the setting was not written.
func TestNewSetReportsEveryProvidersProblem(t *testing.T) {
	_, err := provider.NewSet([]provider.Config{
		{Name: "a", Kind: "test-fak"},
		{Name: "b", Kind: "test-fake"},
		{Name: "c", Kind: "test-picky"},
		{Name: "b", Kind: "test-fake"},
	})
	var l setting.List
	if !errors.As(err, &l) {
		t.Fatalf("error %v (%T), want a setting.List", err, err)
	}
	want := setting.List{
		{Path: "providers[0].kind", Other: "providers[0]", Message: `"test-fak" is not test-fake or test-picky; did you mean test-fake?`},
		{Path: "providers[2].base_url", Other: "providers[2]", Message: "is not a URL"},
		{Path: "providers[3].name", Other: "providers[3]", Message: `"b" is listed twice`},
	}
	if fmt.Sprint(l) != fmt.Sprint(want) {
		t.Errorf("problems\n%v\nwant\n%v", l, want)
	}
}

func TestNewSetRefusesOptionsAnAdapterDoesNotRead(t *testing.T) {
	_, err := provider.NewSet([]provider.Config{{Name: "x", Kind: "test-fake", Options: map[string]any{"fault": map[string]any{"status": 503}}}})
	if err == nil || !strings.Contains(err.Error(), "options: the test-fake adapter takes no options") {
		t.Fatalf("error %v, want the options refused", err)
	}
}

// CheckOptions: the operator's policy, naming the provider, then the
// headers the configuration sets, which extra_headers may not name in any
// case.
func TestConfigCheckOptions(t *testing.T) {
	cfg := provider.Config{
		Name:            "claude",
		Headers:         map[string]string{"OpenAI-Project": "proj_operator"},
		ProviderOptions: provider.OptionsPolicy{Deny: []string{"seed", "mcp_servers"}},
	}
	allowing := provider.Config{Name: "strict", ProviderOptions: provider.OptionsPolicy{Allow: []string{"top_k", "extra_headers"}}}
	headers := func(h map[string]any) map[string]any { return map[string]any{provider.ExtraHeadersKey: h} }
	tests := []struct {
		name    string
		cfg     provider.Config
		opts    map[string]any
		field   string // a *FieldError's; "" for none
		refused string // an *OptionNotAllowedError's option; "" for none
	}{
		{"no options", cfg, nil, "", ""},
		{"another header", cfg, headers(map[string]any{"anthropic-beta": "x", "X-Title": "app"}), "", ""},
		{"a key the policy leaves alone", cfg, map[string]any{"top_k": 5.0}, "", ""},
		{"a configured header", cfg, headers(map[string]any{"OpenAI-Project": "proj_other"}), "provider_options.extra_headers.OpenAI-Project", ""},
		{"a configured header in another case", cfg, headers(map[string]any{"x-a": "1", "openai-project": "proj_other"}), "provider_options.extra_headers.openai-project", ""},
		{"a denied key", cfg, map[string]any{"top_k": 5.0, "mcp_servers": []any{}}, "", "mcp_servers"},
		{"a key the policy denies first", cfg, map[string]any{"seed": 1.0, "extra_headers": map[string]any{"OpenAI-Project": "p"}}, "", "seed"},
		{"allowed keys", allowing, map[string]any{"top_k": 5.0, "extra_headers": map[string]any{"X-Title": "app"}}, "", ""},
		{"a key the allow list leaves out", allowing, map[string]any{"top_k": 5.0, "container": "container_011"}, "", "container"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.CheckOptions(tc.opts)
			var fe *provider.FieldError
			var ne *provider.OptionNotAllowedError
			switch {
			case tc.field == "" && tc.refused == "" && err != nil:
				t.Errorf("CheckOptions = %v, want nil", err)
			case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
				t.Errorf("CheckOptions = %v, want a *FieldError on %s", err, tc.field)
			case tc.refused != "" && (!errors.As(err, &ne) || ne.Option != tc.refused || ne.Provider != tc.cfg.Name):
				t.Errorf("CheckOptions = %v, want an *OptionNotAllowedError on %s of provider %s", err, tc.refused, tc.cfg.Name)
			}
		})
	}
}
