package httpx

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// EndpointOptions are what one provider kind says about its HTTP API.
type EndpointOptions struct {
	// DefaultBaseURL is used when the configuration has no base_url.
	DefaultBaseURL string
	// KeyRequired makes a missing api_key_env an error.
	KeyRequired bool
	// Header holds the kind's fixed headers (for example anthropic-version);
	// the configuration's headers may replace them.
	Header map[string]string
	// Auth sets the API key on a request's headers; it is not called when
	// there is no key.
	Auth func(h http.Header, key string)
	// Extra names a non-standard line field the kind's streams may carry as
	// an event (see GetReader); empty for none.
	Extra string
}

// Endpoint is what every HTTP adapter holds for one configured provider:
// its base URL, API key, headers and timeout, and its client (see
// NewClient). It is safe for concurrent use.
type Endpoint struct {
	// BaseURL is the configured base_url without trailing slashes, or the
	// kind's default.
	BaseURL string

	key     Secret
	header  http.Header
	timeout time.Duration
	client  *http.Client
	auth    func(h http.Header, key string)
	extra   string
}

// NewEndpoint reads a provider's configuration: the base URL (validated),
// the API key from the environment (see APIKey), the headers, the
// timeout, the transport settings and the redirect policy.
func NewEndpoint(cfg provider.Config, o EndpointOptions) (*Endpoint, error) {
	key, err := APIKey(cfg, o.KeyRequired)
	if err != nil {
		return nil, err
	}
	base, err := BaseURL(cfg, o.DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	client, err := NewClient(cfg.Transport, cfg.Redirects)
	if err != nil {
		return nil, err
	}
	ep := &Endpoint{
		BaseURL: base,
		key:     key,
		header:  StaticHeader(cfg, o.Header),
		timeout: cfg.Timeout,
		client:  client,
		auth:    o.Auth,
		extra:   o.Extra,
	}
	release(ep, client)
	return ep, nil
}

// Stream starts one attempt: it POSTs body, encoded as JSON, to url with
// the endpoint's headers and key, and returns the provider.Stream that
// decodes the response with dec, or the attempt's error (see Provider.Stream);
// parse reads the provider's error bodies.
func (e *Endpoint) Stream(ctx context.Context, url string, body any, dec Decoder, parse ErrorBodyParser) (provider.Stream, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("httpx: encoding the request: %w", err)
	}
	h := e.header.Clone()
	if !e.key.IsZero() && e.auth != nil {
		e.auth(h, e.key.Reveal())
	}
	s, err := open(ctx, e.client, request{url: url, header: h, body: b, timeout: e.timeout, extra: e.extra}, dec, parse)
	if err != nil {
		return nil, err
	}
	return s, nil
}
