package gemini

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"

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

// maxEmbedBatch is the most EmbedContentRequests batchEmbedContents
// takes in one batch: Gemini answers 400 ("at most 100 requests can be in
// one batch") to more.
const maxEmbedBatch = 100

// Embed implements provider.Embedder with batchEmbedContents: one request
// per input, each with the input as its content's one text part and
// outputDimensionality when dimensions are asked for, provider_options
// merged into each (taskType, title). extra_headers go with the call.
// The inputs go in batches of maxEmbedBatch, one after another (an
// EmbedRequest holds up to 2048): the attempt fails with the first batch
// that fails. The answer's embeddings are the inputs', in order; Gemini
// reports no usage for them (Embeddings.Reported is false).
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
	for batch := range slices.Chunk(requests, maxEmbedBatch) {
		body, err := json.Marshal(embedBatch{Requests: batch})
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
		if len(reply.Embeddings) != len(batch) {
			// Checked a batch at a time: a short batch and a long one
			// would add up to the inputs' count, each vector off by one.
			return nil, &provider.Error{Kind: provider.KindProtocol, Class: provider.ClassProtocol,
				Message: "answered " + strconv.Itoa(len(reply.Embeddings)) + " embeddings for a batch of " + strconv.Itoa(len(batch)) + " inputs"}
		}
		for _, e := range reply.Embeddings {
			out.Vectors = append(out.Vectors, e.Values)
		}
	}
	if err := provider.CheckEmbeddings(out, len(req.Inputs), req.Dimensions); err != nil {
		return nil, err
	}
	return out, nil
}
