package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// UserAgent is sent with every provider request unless the configuration's
// headers replace it.
const UserAgent = "llmrelay"

// BaseURL returns cfg.BaseURL without trailing slashes, or def when it is
// empty. It must be an absolute http or https URL. The error names the
// field and what is wrong, never the value: a base_url may carry a key in
// its query or its user info, and start-up and reload log this error (a *provider.ConfigProblem).
func BaseURL(cfg provider.Config, def string) (string, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		return def, nil
	}
	if problem := baseURLProblem(base); problem != "" {
		return "", &provider.ConfigProblem{Field: "base_url", Problem: fmt.Sprintf("is not an absolute http or https URL: %s (the value is not shown: it may hold a secret)", problem)}
	}
	return base, nil
}

// baseURLProblem says what keeps base from being an absolute http or https
// URL, without quoting any of it, or returns "".
func baseURLProblem(base string) string {
	u, err := url.Parse(base)
	switch {
	case err != nil:
		return "it does not parse as a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "it must start with https:// or http://"
	case u.Host == "":
		return "it has no host"
	}
	return ""
}

// checkHeaders says what is wrong with a provider's configured headers: a
// name that is no header name, a value no header can carry (a line break,
// a control character), or a framing header. Requests would drop the
// first, rewrite the second and override the third without a word. The
// values are not shown: a header may carry a credential.
func checkHeaders(headers map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		problem := ""
		switch {
		case !httpguts.ValidHeaderFieldName(name):
			problem = "is not a valid header name"
		case slices.Contains(framingHeaders, http.CanonicalHeaderKey(name)):
			problem = "cannot be set: the request's framing and connection decide it"
		case !httpguts.ValidHeaderFieldValue(headers[name]):
			problem = "has a value a header cannot carry (a line break or control character; the value is not shown)"
		}
		if problem != "" {
			return &provider.ConfigProblem{Field: "headers." + name, Problem: problem}
		}
	}
	return nil
}

// StaticHeader returns the headers every request of a provider carries: the
// kind's own (fixed, for example anthropic-version), then cfg.Headers,
// which may replace them, and the User-Agent. Requests send a Clone of it.
func StaticHeader(cfg provider.Config, fixed map[string]string) http.Header {
	h := make(http.Header, len(fixed)+len(cfg.Headers)+3)
	h.Set("User-Agent", UserAgent)
	for k, v := range fixed {
		h.Set(k, v)
	}
	for k, v := range cfg.Headers {
		h.Set(k, v)
	}
	return h
}

// JSONObject returns a tool call's arguments as the JSON object that
// providers which embed arguments (rather than carry them as text) expect.
// Empty arguments are {}; anything but a JSON object is an error.
func JSONObject(args string) (json.RawMessage, error) {
	s := strings.TrimSpace(args)
	if s == "" {
		return json.RawMessage(`{}`), nil
	}
	if !strings.HasPrefix(s, "{") || !json.Valid([]byte(s)) {
		return nil, errors.New("must be a JSON object")
	}
	return json.RawMessage(s), nil
}
