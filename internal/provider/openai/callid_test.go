package openai

import (
	"regexp"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestToolCallIDsFitMistralsRule: Mistral's API answers 400 ("Tool call
// id was call_abc123 but must be a-z, A-Z, 0-9, with a length of 9") to
// any other id, and OpenAI's, Anthropic's and llmrelay's own ids are
// none, which a route falling back to Mistral (or a conversation begun
// elsewhere) sends. For api.mistral.ai, or a server whose options say
// tool_call_ids: mistral, every id that is not Mistral's own goes as 9
// letters and digits, the same in the call and its result, two ids stay
// two, and Mistral's own go as they are. Other servers get OpenAI's rule.
func TestToolCallIDsFitMistralsRule(t *testing.T) {
	nine := regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)
	for _, p := range []struct {
		name, base string
		options    map[string]any
	}{
		{"api.mistral.ai", "https://api.mistral.ai/v1", nil},
		{"a server told to", "http://127.0.0.1:8080/v1", map[string]any{"tool_call_ids": "mistral"}},
	} {
		for _, tc := range []struct{ name, a, b string }{
			{"OpenAI's", "call_abc123", "call_abc124"},
			{"Anthropic's", "toolu_01A09q90qw90lq917835lq9", "toolu_01A09q90qw90lq917835lq8"},
			{"llmrelay's", "call_0123456789abcdef01234567", "call_0123456789abcdef01234568"},
			{"differing in what is replaced", "call-1", "call.1"},
			{"Mistral's own and one of nine that is not", "D681PevKs", "call_0fyp"},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				pr, err := New(provider.Config{Kind: Kind, BaseURL: p.base, Options: p.options})
				if err != nil {
					t.Fatal(err)
				}
				body, err := pr.(*Provider).request(pt.ToolCallIDRequest("mistral-large-latest", tc.a, tc.b))
				if err != nil {
					t.Fatal(err)
				}
				n := len(body.Messages)
				calls, r1, r2 := body.Messages[n-3].ToolCalls, body.Messages[n-2].ToolCallID, body.Messages[n-1].ToolCallID
				if len(calls) != 2 {
					t.Fatalf("tool_calls %+v, want 2", calls)
				}
				for _, c := range calls {
					if !nine.MatchString(c.ID) {
						t.Errorf("tool call id %q is not 9 letters and digits", c.ID)
					}
				}
				if calls[0].ID == calls[1].ID {
					t.Errorf("the ids %q and %q were both sent as %q", tc.a, tc.b, calls[0].ID)
				}
				if r1 != calls[1].ID || r2 != calls[0].ID {
					t.Errorf("tool_call_ids %q, %q do not answer the calls %q, %q", r1, r2, calls[1].ID, calls[0].ID)
				}
				for i, id := range []string{tc.a, tc.b} {
					if nine.MatchString(id) && calls[i].ID != id {
						t.Errorf("Mistral's own id %q was sent as %q", id, calls[i].ID)
					}
				}
			})
		}
	}
}
