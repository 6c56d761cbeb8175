package gemini

import (
	"context"
	"encoding/json"
	"slices"

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

// maxBatch is how many requests one batchEmbedContents call takes: a
// longer batch is a 400 ("at most 100 requests can be in one batch").
const maxBatch = 100

// Embed implements provider.Embedder with batchEmbedContents: one request
// per input, each with the input as its content's one text part and
// outputDimensionality when dimensions are asked for, provider_options
// merged into each (taskType, title), in batches of at most maxBatch
// (the API's bound), sent one after the other; the first that fails
// fails the attempt. extra_headers go with every batch. The answers'
// embeddings are the inputs', in order; Gemini reports no usage for them
// (Embeddings.Reported is false).
func (p *Provider) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.Embeddings, error) {
	path, name, err := modelPath(req.Model)
	if err != nil {
		return nil, err
	}
	requests := make([]json.RawMessage, len(req.Inputs))
	var header httpx.Encoded
	for i := range req.Inputs {
		one := embedContent{Model: name, Content: content{Parts: []part{{Text: &req.Inputs[i]}}}, OutputDimensionality: req.Dimensions}
		enc, err := httpx.Encode(one, req.Options, embedOwned)
		if err != nil {
			return nil, err
		}
		requests[i], header.Header = enc.Body, enc.Header
	}
	out := &provider.Embeddings{Vectors: make([][]float32, 0, len(req.Inputs))}
	for batch := range slices.Chunk(requests, maxBatch) {
		vectors, err := p.embedBatch(ctx, path, batch, header)
		if err != nil {
			return nil, err
		}
		out.Vectors = append(out.Vectors, vectors...)
	}
	if err := provider.CheckEmbeddings(out, len(req.Inputs), req.Dimensions); err != nil {
		return nil, err
	}
	return out, nil
}

// embedBatch sends one batchEmbedContents call of the encoded requests,
// with header's extra headers, and returns the answer's vectors; one per
// request is Embed's to check.
func (p *Provider) embedBatch(ctx context.Context, path string, requests []json.RawMessage, header httpx.Encoded) ([][]float32, error) {
	body, err := json.Marshal(embedBatch{Requests: requests})
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
	if len(reply.Embeddings) != len(requests) {
		// Checked here, so that a short answer does not shift the
		// vectors of the batches after it.
		return nil, provider.CheckEmbeddings(&provider.Embeddings{Vectors: make([][]float32, len(reply.Embeddings))}, len(requests), 0)
	}
	vectors := make([][]float32, len(reply.Embeddings))
	for i, e := range reply.Embeddings {
		vectors[i] = e.Values
	}
	return vectors, nil
}
