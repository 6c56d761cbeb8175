// Package openai is the `openai` provider kind: the Chat Completions API,
// streamed, as served by OpenAI and by every OpenAI-compatible server
// reached through base_url (Ollama's /v1, vLLM, llama.cpp's server,
// OpenRouter, Groq, Together, DeepSeek, Mistral).
//
// It speaks the wire format directly with net/http, a pooled line reader
// and small structs for the fields it uses: no SDK sits on the hot path.
package openai

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// Kind is the provider kind this package registers.
const Kind = "openai"

// DefaultBaseURL is used when the configuration has no base_url.
const DefaultBaseURL = "https://api.openai.com/v1"

func init() { provider.Register(Kind, New) }

// Provider streams chat completions from one OpenAI-compatible endpoint. It
// is safe for concurrent use.
type Provider struct {
	ep  *httpx.Endpoint
	url string
	// maxCompletionTokens sends the output bound as max_completion_tokens
	// (which OpenAI's reasoning models require) instead of max_tokens
	// (which every compatible server understands).
	maxCompletionTokens bool
}

// New builds the provider from its configuration. The API key, sent as a
// bearer token, is read from the variable api_key_env names; with no
// api_key_env no Authorization header is sent, as local servers such as
// Ollama need none.
func New(cfg provider.Config) (provider.Provider, error) {
	ep, err := httpx.NewEndpoint(cfg, httpx.EndpointOptions{
		DefaultBaseURL: DefaultBaseURL,
		Auth:           func(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) },
		// llama.cpp's server sent mid-stream errors as `error:` lines until late 2025.
		Extra: "error",
	})
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(ep.BaseURL)
	return &Provider{
		ep:                  ep,
		url:                 ep.BaseURL + "/chat/completions",
		maxCompletionTokens: strings.EqualFold(u.Hostname(), "api.openai.com"),
	}, nil
}

// ValidateRequest implements provider.RequestValidator: it builds the wire
// request, so what a chat completion cannot take is refused before the
// first attempt (a response format whose schema is not JSON, a
// provider_options key the adapter sets itself: a *provider.FieldError).
func (p *Provider) ValidateRequest(req *provider.Request) error {
	_, err := p.encode(req)
	return err
}

// encode builds the wire request, with provider_options merged in.
func (p *Provider) encode(req *provider.Request) (httpx.Encoded, error) {
	body, err := p.request(req)
	if err != nil {
		return httpx.Encoded{}, err
	}
	return httpx.Encode(body, req.Options, owned)
}

// Stream implements provider.Provider. The request was validated
// (ValidateRequest) before the first attempt.
func (p *Provider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	body, err := p.encode(req)
	if err != nil {
		return nil, err
	}
	return p.ep.Stream(ctx, httpx.Call{URL: p.url, Body: body, Activity: req.Activity, Decoder: &decoder{}, Parse: parseErrorBody})
}
