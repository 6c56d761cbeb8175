package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// UserAgent is sent with every provider request unless the configuration's
// headers replace it.
const UserAgent = "llmrelay"

// BaseURL returns cfg.BaseURL without trailing slashes, or def when it is
// empty. It must be an absolute http or https URL.
func BaseURL(cfg provider.Config, def string) (string, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		return def, nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("base_url %q is not an absolute http or https URL", cfg.BaseURL)
	}
	return base, nil
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
