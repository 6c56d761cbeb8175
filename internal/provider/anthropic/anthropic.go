// Package anthropic is the `anthropic` provider kind: Anthropic's Messages
// API, streamed.
//
// It speaks the wire format directly with net/http, a pooled line reader
// and small structs for the fields it uses: no SDK sits on the hot path.
package anthropic

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// Kind is the provider kind this package registers.
const Kind = "anthropic"

// DefaultBaseURL is used when the configuration has no base_url.
const DefaultBaseURL = "https://api.anthropic.com/v1"

// Version is the anthropic-version header sent unless the configuration's
// headers set another.
const Version = "2023-06-01"

// DefaultMaxTokens is sent as max_tokens, which the Messages API requires,
// when the request sets no max_output_tokens: on top of the thinking
// budget when provider_options ask for extended thinking (see maxTokens).
const DefaultMaxTokens = 4096

func init() { provider.Register(Kind, New) }

// Provider streams messages from Anthropic's API. It is safe for
// concurrent use.
type Provider struct {
	// name is the provider's configured name, for the errors that are
	// its configuration's decision.
	name string
	ep   *httpx.Endpoint
	url  string
	// countURL is the token counting endpoint's (CountTokens).
	countURL string
	// configuredBetas is the anthropic-beta header the configuration's
	// headers set, "" for none.
	configuredBetas string
	// clientBetas: which of the client's betas (provider.ClientBetas) are
	// sent, and which extra_headers may ask for (checkBetas); nil lets all
	// through (see betas).
	clientBetas map[string]bool
}

// New builds the provider from its configuration. The API key, sent as
// x-api-key, is read from the variable api_key_env names; it is required.
func New(cfg provider.Config) (provider.Provider, error) {
	ep, err := httpx.NewEndpoint(cfg, httpx.EndpointOptions{
		DefaultBaseURL: DefaultBaseURL,
		KeyRequired:    true,
		Header:         map[string]string{"Anthropic-Version": Version},
		Auth:           func(h http.Header, key string) { h.Set("X-Api-Key", key) },
	})
	if err != nil {
		return nil, err
	}
	p := &Provider{name: cfg.Name, ep: ep, url: ep.BaseURL + "/messages", countURL: ep.BaseURL + "/messages/count_tokens"}
	for k, v := range cfg.Headers {
		if http.CanonicalHeaderKey(k) == headerBeta {
			p.configuredBetas = v
		}
	}
	if p.clientBetas, err = readOptions(cfg.Options); err != nil {
		return nil, err
	}
	return p, nil
}

// headerBeta is the header that turns on Anthropic's beta features, a
// comma-separated list of their names.
const headerBeta = "Anthropic-Beta"

// readOptions reads the kind's options: client_betas, the list of the
// betas a client may turn on, with the Anthropic door's anthropic-beta
// header or with extra_headers (an empty list: none). Without it every
// one may. A problem is a *provider.ConfigProblem.
func readOptions(opts map[string]any) (map[string]bool, error) {
	for k := range opts {
		if k != "client_betas" {
			return nil, &provider.ConfigProblem{Field: "options." + k, Problem: "unknown option for the anthropic adapter; known: client_betas"}
		}
	}
	v, ok := opts["client_betas"]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok && v != nil {
		return nil, &provider.ConfigProblem{Field: "options.client_betas", Problem: "must be a list of beta names, such as [interleaved-thinking-2025-05-14]"}
	}
	allowed := make(map[string]bool, len(list))
	for i, n := range list {
		name, _ := n.(string)
		if name == "" || strings.ContainsAny(name, ", \t") {
			return nil, &provider.ConfigProblem{Field: fmt.Sprintf("options.client_betas[%d]", i), Problem: "must be one beta name, such as interleaved-thinking-2025-05-14"}
		}
		allowed[name] = true
	}
	return allowed, nil
}

// ReadsOptions implements provider.OptionReader (client_betas, see
// readOptions).
func (*Provider) ReadsOptions() {}

// betas returns the anthropic-beta header to send instead of the one the
// endpoint sends, or nil to send that one: the client's betas
// (provider.ClientBetas) that options.client_betas lets through and that
// are not there already, after the betas there already (the
// configuration's header, else the request's extra_headers one).
func (p *Provider) betas(ctx context.Context, extra http.Header) http.Header {
	client := provider.ClientBetas(ctx)
	if len(client) == 0 {
		return nil
	}
	base := p.configuredBetas
	if base == "" {
		base = extra.Get(headerBeta)
	}
	have := map[string]bool{}
	var names []string
	for n := range strings.SplitSeq(base, ",") {
		if n = strings.TrimSpace(n); n != "" && !have[n] {
			have[n] = true
			names = append(names, n)
		}
	}
	added := false
	for _, n := range client {
		if have[n] || p.clientBetas != nil && !p.clientBetas[n] {
			continue
		}
		have[n] = true
		names = append(names, n)
		added = true
	}
	if !added {
		return nil
	}
	return http.Header{headerBeta: {strings.Join(names, ",")}}
}

// checkBetas returns an *provider.OptionNotAllowedError naming the first
// beta of the anthropic-beta header of opts' extra_headers (in any case)
// that options.client_betas does not list, or nil. The Anthropic door's
// header drops such a beta (an SDK sends its betas unasked), but
// extra_headers are the request's own setting: sent as they are, they
// would turn on what the operator did not allow (the MCP connector, code
// execution), and dropped, the call would run without what it asked for.
// The betas of the configuration's headers are the operator's, not the
// request's: extra_headers cannot name that header
// (provider.Config.CheckOptions).
func (p *Provider) checkBetas(opts map[string]any) error {
	if p.clientBetas == nil {
		return nil
	}
	extra, _ := opts[provider.ExtraHeadersKey].(map[string]any)
	for _, header := range slices.Sorted(maps.Keys(extra)) {
		if http.CanonicalHeaderKey(header) != headerBeta {
			continue
		}
		value, _ := extra[header].(string)
		for n := range strings.SplitSeq(value, ",") {
			if n = strings.TrimSpace(n); n != "" && !p.clientBetas[n] {
				return &provider.OptionNotAllowedError{Provider: p.name, Option: provider.ExtraHeadersKey, Header: header, Beta: n,
					Allowed: slices.Sorted(maps.Keys(p.clientBetas))}
			}
		}
	}
	return nil
}

// TakesReasoning implements provider.ReasoningTaker: Anthropic's own
// thinking blocks.
func (*Provider) TakesReasoning(format string) bool { return format == provider.FormatAnthropic }

// ValidateRequest implements provider.RequestValidator: it builds the wire
// request, so everything the Messages API cannot take is refused before the
// first attempt. A tool call in the conversation whose arguments are not a
// JSON object, and a provider_options key the adapter sets itself, are a
// *provider.FieldError naming it; a beta in extra_headers that
// options.client_betas does not list is a *provider.OptionNotAllowedError
// (checkBetas).
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

// encode is encode after checkBetas.
func (p *Provider) encode(req *provider.Request) (httpx.Encoded, error) {
	if err := p.checkBetas(req.Options); err != nil {
		return httpx.Encoded{}, err
	}
	return encode(req)
}

// encode builds the wire request, with provider_options merged in and
// provider_options.server_tools added to its tools.
func encode(req *provider.Request) (httpx.Encoded, error) {
	server, opts, err := serverTools(req.Options)
	if err != nil {
		return httpx.Encoded{}, err
	}
	r := *req
	r.Options = opts
	return httpx.EncodeRequest(&r, func(req *provider.Request) (*messagesRequest, error) {
		m, err := newRequest(req)
		if err == nil {
			m.Tools = append(m.Tools, server...)
		}
		return m, err
	}, owned)
}

// serverToolsKey is the provider_options key of the tools Anthropic runs
// itself (web search, web fetch, code execution, ...): `tools` is the
// request's own, so they come apart.
const serverToolsKey = "server_tools"

// serverTools takes provider_options.server_tools out of opts: a list of
// the definitions of tools Anthropic runs itself, each an object with the
// tool's versioned type, e.g. {"type": "web_search_20250305", "name":
// "web_search", "max_uses": 5}, added to the body's tools as given. Their
// calls and results come back as provider tool blocks; a long run of them
// may pause the turn (FinishPaused). Anything else is a
// *provider.FieldError.
func serverTools(opts map[string]any) (tools []any, rest map[string]any, err error) {
	v, ok := opts[serverToolsKey]
	if !ok {
		return nil, opts, nil
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, nil, &provider.FieldError{Field: "provider_options." + serverToolsKey,
			Description: `must be a list of the tools Anthropic runs itself, e.g. [{"type": "web_search_20250305", "name": "web_search"}]`}
	}
	for i, t := range list {
		m, _ := t.(map[string]any)
		if typ, _ := m["type"].(string); typ == "" || typ == "custom" {
			return nil, nil, &provider.FieldError{Field: fmt.Sprintf("provider_options.%s[%d]", serverToolsKey, i),
				Description: "must be an object with the server tool's versioned type (web_search_20250305, web_fetch_20250910, code_execution_20250825, ...); your own tools go in the request's tools"}
		}
	}
	rest = maps.Clone(opts)
	delete(rest, serverToolsKey)
	return list, rest, nil
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
	return p.ep.Stream(ctx, httpx.Call{URL: p.url, Body: body, Header: p.betas(ctx, body.Header), Activity: req.Activity, Decoder: &decoder{}, Parse: parseErrorBody})
}
