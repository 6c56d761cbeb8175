package openai

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// embedRequest is the body of POST /embeddings
// (https://platform.openai.com/docs/api-reference/embeddings/create).
// The inputs always go as an array, the vectors always as floats.
type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
}

// embedOwned are the members of an embeddings request llmrelay sets from
// the request: provider_options may not set them.
var embedOwned = httpx.Owned{"model": "model", "input": "inputs", "dimensions": "dimensions", "encoding_format": ""}

// embedReply is the answer: one entry of data per input, each with the
// index of its input (the order of data is not promised).
type embedReply struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Usage *struct {
		PromptTokens int64 `json:"prompt_tokens"`
	} `json:"usage"`
}

// errEmbedReply is wrapped by the error of an embeddings answer that does
// not decode or does not give each input its vector.
var errEmbedReply = errors.New("an embeddings answer that does not hold one embedding per input")

// Embed implements provider.Embedder with POST {base_url}/embeddings,
// sent with the headers a chat completion gets (the key, the
// configuration's, extra_headers): every input in `input`, the vectors as
// floats (encoding_format "float"), `dimensions` when asked for. Errors go
// through the adapter's error table, as a chat completion's. Each vector
// is placed by its `index`; an answer that leaves an input without one,
// or names one twice, is a protocol error.
func (p *Provider) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.Embeddings, error) {
	body, err := httpx.Encode(embedRequest{Model: req.Model, Input: req.Inputs, Dimensions: req.Dimensions, EncodingFormat: "float"},
		req.Options, embedOwned)
	if err != nil {
		return nil, err
	}
	b, err := p.ep.Post(ctx, httpx.Call{URL: p.ep.BaseURL + "/embeddings", Body: body, Parse: parseErrorBody, MaxBody: httpx.MaxEmbeddingsBody})
	if err != nil {
		return nil, err
	}
	var reply embedReply
	if err := json.Unmarshal(b, &reply); err != nil {
		pe := httpx.ProtocolError(err, b)
		pe.Message = "answered embeddings that do not decode"
		return nil, pe
	}
	out := &provider.Embeddings{Vectors: make([][]float32, len(req.Inputs))}
	for _, d := range reply.Data {
		if d.Index == nil || *d.Index < 0 || *d.Index >= len(out.Vectors) || out.Vectors[*d.Index] != nil {
			pe := httpx.ProtocolError(errEmbedReply, b)
			pe.Message = "answered an embedding without a valid index for " + strconv.Itoa(len(req.Inputs)) + " inputs"
			return nil, pe
		}
		out.Vectors[*d.Index] = d.Embedding
	}
	if reply.Usage != nil {
		out.Usage.InputTokens, out.Reported = reply.Usage.PromptTokens, true
	}
	if err := provider.CheckEmbeddings(out, len(req.Inputs), req.Dimensions); err != nil {
		return nil, err
	}
	return out, nil
}
