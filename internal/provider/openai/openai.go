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
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

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
	// (which every compatible server understands); see maxTokensField.
	maxCompletionTokens bool
	// maxStop is the most stop sequences the server takes: maxOpenAIStop
	// for OpenAI's and Azure OpenAI's APIs, 0 (no bound of the adapter's)
	// for other compatible servers, whose bounds differ.
	maxStop int
	// mistralCallIDs sends tool call ids by Mistral's rule (mistralCallID)
	// instead of OpenAI's (see toolCallIDs).
	mistralCallIDs bool
	// floatEmbeddings is set once the server refused embeddings in base64:
	// Embed asks it for floats from then on.
	floatEmbeddings atomic.Bool
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
	for k := range cfg.Options {
		if k != "max_tokens_field" && k != "tool_call_ids" {
			return nil, &provider.ConfigProblem{Field: "options." + k, Problem: "unknown option for the openai adapter; known: max_tokens_field, tool_call_ids"}
		}
	}
	mct, err := maxTokensField(cfg.Options, ep.BaseURL)
	if err != nil {
		return nil, err
	}
	mistral, err := toolCallIDs(cfg.Options, ep.BaseURL)
	if err != nil {
		return nil, err
	}
	p := &Provider{ep: ep, url: ep.BaseURL + "/chat/completions", maxCompletionTokens: mct, mistralCallIDs: mistral}
	if openAIs(ep.BaseURL) {
		p.maxStop = maxOpenAIStop
	}
	return p, nil
}

// maxOpenAIStop is the most stop sequences OpenAI's Chat Completions
// takes ("up to 4 sequences"); it answers 400 to more.
const maxOpenAIStop = 4

// The values of the option max_tokens_field.
const (
	fieldMaxTokens           = "max_tokens"
	fieldMaxCompletionTokens = "max_completion_tokens"
)

// maxTokensField reads the option max_tokens_field and reports whether
// the output bound goes as max_completion_tokens. Unset,
// it does for OpenAI (api.openai.com) and Azure OpenAI (an
// *.openai.azure.com host, or Azure OpenAI's /openai path on a
// *.cognitiveservices.azure.com host): their reasoning models (o1, o3,
// o4-mini, gpt-5) refuse max_tokens, and every chat model of theirs takes
// max_completion_tokens. Other compatible servers get max_tokens, which
// they all know (older vLLM, llama.cpp's server and others know only it).
// A problem is a *provider.ConfigProblem.
func maxTokensField(opts map[string]any, baseURL string) (bool, error) {
	if v, ok := opts["max_tokens_field"]; ok {
		switch v {
		case fieldMaxTokens:
			return false, nil
		case fieldMaxCompletionTokens:
			return true, nil
		}
		return false, &provider.ConfigProblem{Field: "options.max_tokens_field", Problem: fmt.Sprintf("%v is neither max_tokens nor max_completion_tokens", v)}
	}
	return openAIs(baseURL), nil
}

// The values of the option tool_call_ids.
const (
	callIDsOpenAI  = "openai"
	callIDsMistral = "mistral"
)

// toolCallIDs reads the option tool_call_ids and reports whether tool
// call ids go by Mistral's rule: exactly 9 letters and digits, which
// Mistral's API (and servers running Mistral's chat templates) require of
// every id sent back, where OpenAI's takes any of at most 40 bytes.
// Unset, they do for Mistral's API (a *.mistral.ai host). A problem is a
// *provider.ConfigProblem.
func toolCallIDs(opts map[string]any, baseURL string) (bool, error) {
	if v, ok := opts["tool_call_ids"]; ok {
		switch v {
		case callIDsOpenAI:
			return false, nil
		case callIDsMistral:
			return true, nil
		}
		return false, &provider.ConfigProblem{Field: "options.tool_call_ids", Problem: fmt.Sprintf("%v is neither openai nor mistral", v)}
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return false, nil // httpx.NewEndpoint checked it
	}
	host := strings.ToLower(u.Hostname())
	return host == "mistral.ai" || strings.HasSuffix(host, ".mistral.ai"), nil
}

// openAIs reports whether baseURL is OpenAI's own API (api.openai.com) or
// Azure OpenAI's (an *.openai.azure.com host, or Azure OpenAI's /openai
// path on a *.cognitiveservices.azure.com host), not another compatible
// server's.
func openAIs(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false // httpx.NewEndpoint checked it
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case host == "api.openai.com", strings.HasSuffix(host, ".openai.azure.com"):
		return true
	case strings.HasSuffix(host, ".cognitiveservices.azure.com"):
		return u.Path == "/openai" || strings.HasPrefix(u.Path, "/openai/")
	}
	return false
}

// ReadsOptions implements provider.OptionReader: the kind's options take
// max_tokens_field (see maxTokensField) and tool_call_ids (toolCallIDs).
func (p *Provider) ReadsOptions() {}

// TakesReasoning implements provider.ReasoningTaker: the formats of
// OpenAI-compatible servers, which go back each in its field.
func (*Provider) TakesReasoning(format string) bool {
	switch format {
	case provider.FormatReasoningContent, provider.FormatReasoning, provider.FormatOpenRouterDetails, provider.FormatMistralThinking:
		return true
	}
	return false
}

// ValidateRequest implements provider.RequestValidator: it builds the wire
// request, so what a chat completion cannot take is refused before the
// first attempt (a response format whose schema is not JSON, a
// provider_options key the adapter sets itself: a *provider.FieldError).
func (p *Provider) ValidateRequest(req *provider.Request) error {
	_, err := p.encode(req)
	return err
}

// PrepareRequest implements provider.RequestPreparer: ValidateRequest's
// check, returning the wire request it built, which Stream sends when it
// comes back as req.Prepared.
func (p *Provider) PrepareRequest(req *provider.Request) (any, error) {
	return p.encode(req)
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
	body, ok := httpx.Prepared(req)
	if !ok {
		var err error
		if body, err = p.encode(req); err != nil {
			return nil, err
		}
	}
	return p.ep.Stream(ctx, httpx.Call{URL: p.url, Body: body, Activity: req.Activity, Decoder: &decoder{}, Parse: parseErrorBody})
}
