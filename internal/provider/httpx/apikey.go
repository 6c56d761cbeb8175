package httpx

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// Secret holds an API key so that it cannot be printed by accident: its
// String and GoString methods say "[redacted]", and inside a struct printed
// with %v, %+v or %#v it shows as a pointer. Reveal returns the key for the
// one place that sends it.
type Secret struct {
	p *string
}

// String implements fmt.Stringer without revealing the key.
func (s Secret) String() string { return "[redacted]" }

// GoString implements fmt.GoStringer without revealing the key.
func (s Secret) GoString() string { return "httpx.Secret([redacted])" }

// Reveal returns the key; "" when there is none.
func (s Secret) Reveal() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

// IsZero reports whether there is no key.
func (s Secret) IsZero() bool { return s.p == nil }

// APIKey reads a provider's API key from the environment variable that
// cfg.APIKeyEnv names. With no variable named, the key is empty, which is an
// error when required (the kind's API always needs a key) and fine
// otherwise (a local OpenAI-compatible server such as Ollama needs none). A
// variable that is named but unset or empty is always an error, naming the
// variable, never its value. Whitespace around the key (the newline a
// key file or a Kubernetes secret made from one ends with) is dropped; a
// key that still holds a control character cannot go in a header and is
// an error: HTTP/1.1 requests turned it into a space, HTTP/2 ones failed
// ("invalid HTTP/2 header field value"), retried as transport failures.
// Errors are *provider.ConfigProblem.
func APIKey(cfg provider.Config, required bool) (Secret, error) {
	if cfg.APIKeyEnv == "" {
		if required {
			return Secret{}, &provider.ConfigProblem{Field: "api_key_env", Problem: fmt.Sprintf("required: the %s provider needs an API key; set api_key_env to the name of the environment variable that holds it", cfg.Kind)}
		}
		return Secret{}, nil
	}
	v := strings.TrimSpace(os.Getenv(cfg.APIKeyEnv))
	if v == "" {
		return Secret{}, &provider.ConfigProblem{Field: "api_key_env", Problem: fmt.Sprintf("names %s, but that environment variable is unset or empty", cfg.APIKeyEnv)}
	}
	if !httpguts.ValidHeaderFieldValue(v) {
		return Secret{}, &provider.ConfigProblem{Field: "api_key_env", Problem: fmt.Sprintf("names %s, whose value holds a line break or control character, which an HTTP header cannot carry (the value is not shown)", cfg.APIKeyEnv)}
	}
	return Secret{p: &v}, nil
}
