package setting_test

import (
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/internal/setting"
)

func TestNotOneOf(t *testing.T) {
	kinds := []string{"anthropic", "gemini", "mock", "openai"}
	tests := []struct {
		name, value string
		choices     []string
		want        string
	}{
		{"a letter missing", "opnai", kinds, `"opnai" is not anthropic, gemini, mock or openai; did you mean openai?`},
		{"two letters swapped", "fial_open", []string{"fail_open", "fail_closed"}, `"fial_open" is not fail_open or fail_closed; did you mean fail_open?`},
		{"case and separators", "Fail-Closed", []string{"fail_open", "fail_closed"}, `"Fail-Closed" is not fail_open or fail_closed; did you mean fail_closed?`},
		{"nothing close", "ollama", kinds, `"ollama" is not anthropic, gemini, mock or openai`},
		{"a short word, two letters off", "mok", []string{"mock", "json"}, `"mok" is not mock or json; did you mean mock?`},
		{"a short word, too far", "ab", []string{"text", "json"}, `"ab" is not text or json`},
		{"one choice", "x", []string{"restart"}, `"x" is not restart`},
		{"empty", "", []string{"ordered", "weighted"}, `"" is not ordered or weighted`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := setting.NotOneOf(tt.value, tt.choices...); got != tt.want {
				t.Errorf("NotOneOf(%q) = %s, want %s", tt.value, got, tt.want)
			}
		})
	}
}

func TestListIsAnErrorOfEveryProblem(t *testing.T) {
	var l setting.List
	if l.Err() != nil {
		t.Fatal("an empty list is an error")
	}
	cause := errors.New("unknown model")
	l.Bad("providers[0].kind", "%q is wrong", "x")
	l.Between("providers[1].base_url", "providers[1]", "not a URL")
	l.Add("routes[0].targets[0].model", cause)
	err := l.Err()
	want := "providers[0].kind: \"x\" is wrong\nproviders[1].base_url: not a URL\nroutes[0].targets[0].model: unknown model"
	if err == nil || err.Error() != want {
		t.Fatalf("Err() = %v, want %s", err, want)
	}
	if !errors.Is(err, cause) {
		t.Error("the list does not unwrap to the error a problem was found as")
	}
	var got setting.List
	if !errors.As(err, &got) || len(got) != 3 || got[1].Other != "providers[1]" {
		t.Errorf("errors.As gave %+v", got)
	}
}
