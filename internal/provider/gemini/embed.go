package gemini

import (
	"context"
	"encoding/json"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// embedBatch is the body of POST {base}/models/{model}:batchEmbedContents
// (https://ai.google.dev/api/embeddings#method:-models.batchembedcontents):
// one EmbedContentRequest per input, each naming the model again.
type embedBatch struct {
	Requests []json.RawMessage `json:"requests"`
}

// embedContent is one EmbedContentRequest of the batch.
type embedContent struct {
	Model                string  `json:"model"`
	Content              content `json:"content"`
	OutputDimensionality int     `json:"outputDimensionality,omitempty"`
}

// embedOwned are the members of each EmbedContentRequest llmrelay sets:
// provider_options, merged into each, may not set them.
var embedOwned = httpx.Owned{"model": "model", "content": "inputs", "outputDimensionality": "dimensions"}

// embedReply is the answer: one ContentEmbedding per request, in the
// requests' order. It carries no token counts.
type embedReply struct {
	Embeddings []struct {
		Values []float32 `json:"values"`
	} `json:"embeddings"`
}

// Embed implements provider.Embedder with batchEmbedContents: one request
// per input, each with the input as its content's one text part and
// outputDimensionality when dimensions are asked for, provider_options
// merged into each (taskType, title). extra_headers go with the call.
// The answer's embeddings are the inputs', in order; Gemini reports no
// usage for them (Embeddings.Reported is false).
func (p *Provider) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.Embeddings, error) {
	path, name, err := modelPath(req.Model)
	if err != nil {
		return nil, err
	}
	batch := embedBatch{Requests: make([]json.RawMessage, len(req.Inputs))}
	var header httpx.Encoded
	for i := range req.Inputs {
		one := embedContent{Model: name, Content: content{Parts: []part{{Text: &req.Inputs[i]}}}, OutputDimensionality: req.Dimensions}
		enc, err := httpx.Encode(one, req.Options, embedOwned)
		if err != nil {
			return nil, err
		}
		batch.Requests[i], header.Header = enc.Body, enc.Header
	}
	body, err := json.Marshal(batch)
	if err != nil {
		return nil, err
	}
	b, err := p.ep.Post(ctx, httpx.Call{URL: p.ep.BaseURL + "/" + path + ":batchEmbedContents", Body: httpx.Encoded{Body: body, Header: header.Header},
		Parse: parseErrorBody, MaxBody: httpx.MaxEmbeddingsBody})
	if err != nil {
		return nil, err
	}
	var reply embedReply
	if err := json.Unmarshal(b, &reply); err != nil {
		pe := httpx.ProtocolError(err, b)
		pe.Message = "answered embeddings that do not decode"
		return nil, pe
	}
	out := &provider.Embeddings{Vectors: make([][]float32, len(reply.Embeddings))}
	for i, e := range reply.Embeddings {
		out.Vectors[i] = e.Values
	}
	if err := provider.CheckEmbeddings(out, len(req.Inputs), req.Dimensions); err != nil {
		return nil, err
	}
	return out, nil
}
