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
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

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
	url     string
	key     httpx.Secret
	header  http.Header
	timeout time.Duration
	client  *http.Client
	// maxCompletionTokens sends the output bound as max_completion_tokens
	// (which OpenAI's reasoning models require) instead of max_tokens
	// (which every compatible server understands).
	maxCompletionTokens bool
	now                 func() time.Time
}

// New builds the provider from its configuration. The API key is read from
// the variable api_key_env names; with no api_key_env no Authorization
// header is sent, as local servers such as Ollama need none.
func New(cfg provider.Config) (provider.Provider, error) {
	key, err := httpx.APIKey(cfg, false)
	if err != nil {
		return nil, err
	}
	base, err := httpx.BaseURL(cfg, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(base)
	return &Provider{
		url:                 base + "/chat/completions",
		key:                 key,
		header:              httpx.StaticHeader(cfg, nil),
		timeout:             cfg.Timeout,
		client:              httpx.Client(),
		maxCompletionTokens: strings.EqualFold(u.Hostname(), "api.openai.com"),
		now:                 time.Now,
	}, nil
}

// Stream implements provider.Provider.
func (p *Provider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	body, err := json.Marshal(p.request(req))
	if err != nil {
		return nil, fmt.Errorf("openai: encoding the request: %w", err)
	}
	h := p.header.Clone()
	if !p.key.IsZero() {
		h.Set("Authorization", "Bearer "+p.key.Reveal())
	}
	s, err := httpx.Open(ctx, p.client, httpx.Request{
		URL:     p.url,
		Header:  h,
		Body:    body,
		Timeout: p.timeout,
		Extra:   "error",
		Now:     p.now,
	}, &decoder{}, parseErrorBody)
	if err != nil {
		return nil, err
	}
	return s, nil
}
