package gemini

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"slices"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/provider/jsonstream"
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

// maxBatch is how many requests one batchEmbedContents call takes: a
// longer batch is a 400 ("at most 100 requests can be in one batch").
const maxBatch = 100

// Embed implements provider.Embedder with batchEmbedContents: one request
// per input, each with the input as its content's one text part and
// outputDimensionality when dimensions are asked for, provider_options
// merged into each (taskType, title), in batches of at most maxBatch
// (the API's bound), sent one after the other; the first that fails
// fails the attempt. extra_headers go with every batch. The answers'
// embeddings are the inputs', in order, each answer decoded as it arrives
// (readEmbedReply), within the bounds of what is decoded
// (provider.EmbeddingBoundError) over all the batches; Gemini reports no
// usage for them (Embeddings.Reported is false).
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
	left := provider.MaxEmbeddingValues
	for batch := range slices.Chunk(requests, maxBatch) {
		if out.Vectors, err = p.embedBatch(ctx, path, batch, header, out.Vectors, &left); err != nil {
			return nil, err
		}
	}
	if err := provider.CheckEmbeddings(out, len(req.Inputs), req.Dimensions); err != nil {
		return nil, err
	}
	return out, nil
}

// embedBatch sends one batchEmbedContents call of the encoded requests,
// with header's extra headers, and appends the answer's vectors, one per
// request, to vectors; left is what the answers may still hold of
// provider.MaxEmbeddingValues.
func (p *Provider) embedBatch(ctx context.Context, path string, requests []json.RawMessage, header httpx.Encoded, vectors [][]float32, left *int) ([][]float32, error) {
	body, err := json.Marshal(embedBatch{Requests: requests})
	if err != nil {
		return nil, err
	}
	start := len(vectors)
	err = p.ep.PostRead(ctx, httpx.Call{URL: p.ep.BaseURL + "/" + path + ":batchEmbedContents", Body: httpx.Encoded{Body: body, Header: header.Header},
		Parse: parseErrorBody}, func(r io.Reader) error {
		return httpx.ReadEmbeddings(r, func(d *jsonstream.Decoder) (err error) {
			vectors, err = readEmbedReply(d, vectors, len(requests), left)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	if got := len(vectors) - start; got != len(requests) {
		// Checked here, so that a short answer does not shift the
		// vectors of the batches after it.
		return nil, provider.CheckEmbeddings(&provider.Embeddings{Vectors: make([][]float32, got)}, len(requests), 0)
	}
	return vectors, nil
}

// readEmbedReply reads an answer to n requests, appending its vectors to
// vectors: one ContentEmbedding per request, in the requests' order, its
// values in values (other members are skipped). More embeddings than
// requests are refused before the first too many is read; left is what
// the answer may still hold of provider.MaxEmbeddingValues.
func readEmbedReply(d *jsonstream.Decoder, vectors [][]float32, n int, left *int) ([][]float32, error) {
	got := 0
	hint := 0
	if len(vectors) > 0 {
		hint = len(vectors[0])
	}
	err := d.Object(func(key []byte) error {
		if string(key) != "embeddings" {
			return d.Skip()
		}
		if null, err := d.Null(); null || err != nil {
			return err
		}
		return d.Array(func() error {
			if got == n {
				return provider.EmbeddingBoundExceeded(provider.BoundVectors, n)
			}
			got++
			var v []float32
			err := d.Object(func(key []byte) error {
				if string(key) != "values" {
					return d.Skip()
				}
				var err error
				v, err = httpx.ReadEmbedding(d, hint, left, false)
				hint = cmp.Or(hint, len(v))
				return err
			})
			vectors = append(vectors, v)
			return err
		})
	})
	return vectors, err
}
