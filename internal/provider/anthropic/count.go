package anthropic

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// countRequest is the body of POST /messages/count_tokens: the members of
// a Messages request that make its input. The endpoint refuses the others
// (max_tokens, stream, sampling, stop sequences: "Extra inputs are not
// permitted").
type countRequest struct {
	Model        string        `json:"model"`
	System       string        `json:"system,omitempty"`
	Messages     []message     `json:"messages"`
	Tools        []any         `json:"tools,omitempty"`
	ToolChoice   *toolChoice   `json:"tool_choice,omitempty"`
	OutputConfig *outputConfig `json:"output_config,omitempty"`
}

// errNoInputTokens is wrapped by the error of a count whose answer has no
// input_tokens.
var errNoInputTokens = errors.New("no input_tokens in the token count")

// countReply is the endpoint's answer.
type countReply struct {
	InputTokens *int64 `json:"input_tokens"`
}

// encodeCount builds the count request of req: the Messages request
// Stream would send (newRequest, the server tools added, provider_options
// merged in) without its generation members.
func encodeCount(req *provider.Request) (httpx.Encoded, error) {
	server, opts, err := serverTools(req.Options)
	if err != nil {
		return httpx.Encoded{}, err
	}
	r := *req
	r.Options = opts
	return httpx.EncodeRequest(&r, func(req *provider.Request) (*countRequest, error) {
		m, err := newRequest(req)
		if err != nil {
			return nil, err
		}
		return &countRequest{Model: m.Model, System: m.System, Messages: m.Messages, Tools: append(m.Tools, server...),
			ToolChoice: m.ToolChoice, OutputConfig: m.OutputConfig}, nil
	}, owned)
}

// CountTokens implements provider.TokenCounter with Anthropic's POST
// /messages/count_tokens, sent with the headers Stream sends (the key,
// anthropic-version, the configuration's headers, the client's betas as
// options.client_betas lets them through, extra_headers, whose betas it
// must list: checkBetas). An answer without input_tokens is a protocol
// error.
func (p *Provider) CountTokens(ctx context.Context, req *provider.Request) (int64, error) {
	if err := p.checkBetas(req.Options); err != nil {
		return 0, err
	}
	body, err := encodeCount(req)
	if err != nil {
		return 0, err
	}
	b, err := p.ep.Post(ctx, httpx.Call{URL: p.countURL, Body: body, Header: p.betas(ctx, body.Header), Parse: parseErrorBody})
	if err != nil {
		return 0, err
	}
	var reply countReply
	if err := json.Unmarshal(b, &reply); err != nil || reply.InputTokens == nil || *reply.InputTokens < 0 {
		pe := httpx.ProtocolError(errNoInputTokens, b)
		pe.Message = "answered the token count without its input_tokens"
		return 0, pe
	}
	return *reply.InputTokens, nil
}
