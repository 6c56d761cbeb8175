// Package gemini is the `gemini` provider kind: the Gemini API's
// streamGenerateContent, as server-sent events (alt=sse).
//
// It speaks the wire format directly with net/http, a pooled line reader
// and small structs for the fields it uses: no SDK sits on the hot path.
package gemini

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// Kind is the provider kind this package registers.
const Kind = "gemini"

// DefaultBaseURL is used when the configuration has no base_url.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"

func init() { provider.Register(Kind, New) }

// Provider streams content from the Gemini API. It is safe for concurrent
// use.
type Provider struct {
	ep *httpx.Endpoint
}

// New builds the provider from its configuration. The API key, sent as
// x-goog-api-key, is read from the variable api_key_env names; it is
// required.
func New(cfg provider.Config) (provider.Provider, error) {
	ep, err := httpx.NewEndpoint(cfg, httpx.EndpointOptions{
		DefaultBaseURL: DefaultBaseURL,
		KeyRequired:    true,
		Auth:           func(h http.Header, key string) { h.Set("X-Goog-Api-Key", key) },
	})
	if err != nil {
		return nil, err
	}
	return &Provider{ep: ep}, nil
}

// endpoint returns the streaming URL for a model: "gemini-2.5-flash" and
// "models/gemini-2.5-flash" name the same model; a name with its own
// collection ("tunedModels/x") is used as it is. Each segment of the name
// is escaped, and a name with an empty, "." or ".." segment is a
// *provider.FieldError on "model": the URL never leaves the API's model
// paths.
func (p *Provider) endpoint(model string) (string, error) {
	path, _, err := modelPath(model)
	if err != nil {
		return "", err
	}
	return p.ep.BaseURL + "/" + path + ":streamGenerateContent?alt=sse", nil
}

// modelPath returns a model's path in the API's URLs, each segment
// escaped, and its resource name ("models/gemini-embedding-001"), as
// endpoint describes them.
func modelPath(model string) (path, name string, err error) {
	if err := provider.CheckModelPath(model); err != nil {
		return "", "", &provider.FieldError{Field: "model", Description: err.Error()}
	}
	segs := strings.Split(model, "/")
	if len(segs) == 1 {
		segs = []string{"models", segs[0]}
	}
	name = strings.Join(segs, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/"), name, nil
}

// TakesReasoning implements provider.ReasoningTaker: Gemini's own thought
// signatures.
func (*Provider) TakesReasoning(format string) bool { return format == provider.FormatGemini }

// ValidateRequest implements provider.RequestValidator: it checks that the
// model name is a clean path and builds the wire request, so everything
// streamGenerateContent cannot take is refused before the first attempt. A
// tool call in the conversation whose arguments are not a JSON object, an
// image at a URL (the API takes images inline only, in a user message or
// a tool result), a provider_options key the adapter sets itself, and a
// model name with an empty, "." or ".." segment are a *provider.FieldError
// naming it.
func (p *Provider) ValidateRequest(req *provider.Request) error {
	_, err := p.PrepareRequest(req)
	return err
}

// PrepareRequest implements provider.RequestPreparer: ValidateRequest's
// check, returning the wire request it built, which Stream sends when it
// comes back as req.Prepared.
func (p *Provider) PrepareRequest(req *provider.Request) (any, error) {
	if _, err := p.endpoint(req.Model); err != nil {
		return nil, err
	}
	return encode(req)
}

// encode builds the wire request, with provider_options merged in.
func encode(req *provider.Request) (httpx.Encoded, error) {
	return httpx.EncodeRequest(req, newRequest, owned)
}

// Stream implements provider.Provider. The request was validated
// (ValidateRequest) before the first attempt; the URL is checked again as
// it is built. A request that asks for at most one tool call per reply
// (ToolChoice.DisableParallel) gets its reply's first function call only:
// the API has no such switch, so the calls after the first are dropped,
// never streamed.
func (p *Provider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	u, err := p.endpoint(req.Model)
	if err != nil {
		return nil, err
	}
	body, ok := httpx.Prepared(req)
	if !ok {
		if body, err = encode(req); err != nil {
			return nil, err
		}
	}
	return p.ep.Stream(ctx, httpx.Call{URL: u, Body: body, Activity: req.Activity, Decoder: &decoder{single: req.ToolChoice.DisableParallel}, Parse: parseErrorBody})
}
