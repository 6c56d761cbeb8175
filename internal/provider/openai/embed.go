package openai

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/provider/jsonstream"
)

// embedRequest is the body of POST /embeddings
// (https://platform.openai.com/docs/api-reference/embeddings/create).
// The inputs always go as an array.
type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
}

// The encodings of the vectors (encoding_format): base64 is each vector's
// float32s, little-endian, base64-encoded, some 5.3 bytes a value against
// float's 22 of pretty-printed JSON.
const (
	encodingBase64 = "base64"
	encodingFloat  = "float"
)

// embedOwned are the members of an embeddings request llmrelay sets from
// the request: provider_options may not set them.
var embedOwned = httpx.Owned{"model": "model", "input": "inputs", "dimensions": "dimensions", "encoding_format": ""}

// errEmbedReply is wrapped by the error of an embeddings answer that does
// not decode or does not give each input its vector.
var errEmbedReply = errors.New("an embeddings answer that does not hold one embedding per input")

// Embed implements provider.Embedder with POST {base_url}/embeddings,
// sent with the headers a chat completion gets (the key, the
// configuration's, extra_headers): every input in `input`, the vectors
// asked for in base64 (encoding_format "base64", as OpenAI's SDKs ask),
// `dimensions` when asked for. Errors go through the adapter's error
// table, as a chat completion's. The answer is decoded as it arrives
// (readEmbedReply), into the vectors alone, each a base64 string or an
// array of numbers: some compatible servers ignore encoding_format and
// send floats. Each vector is placed by its `index`; an answer that
// leaves an input without one, or names one twice, is a protocol error,
// as is one past the bounds of what is decoded
// (provider.EmbeddingBoundError).
//
// A server that refuses base64 (refusesBase64) is asked again at once,
// for floats, within the same attempt, and the Provider asks it for
// floats from then on.
func (p *Provider) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.Embeddings, error) {
	encoding := encodingBase64
	if p.floatEmbeddings.Load() {
		encoding = encodingFloat
	}
	out, err := p.embed(ctx, req, encoding)
	if encoding == encodingBase64 && refusesBase64(err) {
		p.floatEmbeddings.Store(true)
		out, err = p.embed(ctx, req, encodingFloat)
	}
	if err != nil {
		return nil, err
	}
	if err := provider.CheckEmbeddings(out, len(req.Inputs), req.Dimensions); err != nil {
		return nil, err
	}
	return out, nil
}

// embed sends req asking for the vectors in encoding, and reads the
// answer.
func (p *Provider) embed(ctx context.Context, req *provider.EmbedRequest, encoding string) (*provider.Embeddings, error) {
	body, err := httpx.Encode(embedRequest{Model: req.Model, Input: req.Inputs, Dimensions: req.Dimensions, EncodingFormat: encoding},
		req.Options, embedOwned)
	if err != nil {
		return nil, err
	}
	out := &provider.Embeddings{Vectors: make([][]float32, len(req.Inputs))}
	err = p.ep.PostRead(ctx, httpx.Call{URL: p.ep.BaseURL + "/embeddings", Body: body, Parse: parseErrorBody}, func(r io.Reader) error {
		return httpx.ReadEmbeddings(r, func(d *jsonstream.Decoder) error { return readEmbedReply(d, out) })
	})
	return out, err
}

// refusesBase64 reports whether err is a server's refusal of
// encoding_format "base64": a 400 or 422 whose message or body names
// base64 or encoding_format, as vLLM's "base64 encoding is not currently
// supported" (2024) or a FastAPI server's validation error of
// encoding_format (a 422 whose detail names the member).
func refusesBase64(err error) bool {
	pe, ok := errors.AsType[*provider.Error](err)
	if !ok || pe.Kind != provider.KindHTTP || pe.Status != http.StatusBadRequest && pe.Status != http.StatusUnprocessableEntity {
		return false
	}
	for _, s := range [2]string{pe.Message, pe.Raw} {
		s = strings.ToLower(s)
		if strings.Contains(s, "base64") || strings.Contains(s, "encoding_format") {
			return true
		}
	}
	return false
}

// readEmbedReply reads the answer into out, whose Vectors has one nil
// entry per input: one entry of data per input, each with the index of its
// input (the order of data is not promised), and usage.prompt_tokens.
// Other members are skipped; more entries than inputs are refused before
// the first too many is read.
func readEmbedReply(d *jsonstream.Decoder, out *provider.Embeddings) error {
	n := len(out.Vectors)
	placed := make([]bool, n)
	entries, hint, left := 0, 0, provider.MaxEmbeddingValues
	entry := func() error {
		if entries == n {
			return provider.EmbeddingBoundExceeded(provider.BoundVectors, n)
		}
		entries++
		index, vec := -1, []float32(nil)
		err := d.Object(func(key []byte) error {
			var err error
			switch string(key) {
			case "index":
				var i int64
				if i, err = d.Int(); err == nil && i >= 0 && i < int64(n) {
					index = int(i)
				}
			case "embedding":
				vec, err = httpx.ReadEmbedding(d, hint, &left, true)
				hint = cmp.Or(hint, len(vec))
			default:
				err = d.Skip()
			}
			return err
		})
		if err != nil {
			return err
		}
		if index < 0 || placed[index] {
			pe := httpx.ProtocolError(errEmbedReply, nil)
			pe.Message = "answered an embedding without a valid index for " + strconv.Itoa(n) + " inputs"
			return pe
		}
		placed[index], out.Vectors[index] = true, vec
		return nil
	}
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "data":
			if null, err := d.Null(); null || err != nil {
				return err
			}
			return d.Array(entry)
		case "usage":
			if null, err := d.Null(); null || err != nil {
				return err
			}
			out.Reported = true
			return d.Object(func(key []byte) error {
				if string(key) != "prompt_tokens" {
					return d.Skip()
				}
				if null, err := d.Null(); null || err != nil {
					return err
				}
				var err error
				out.Usage.InputTokens, err = d.Int()
				return err
			})
		}
		return d.Skip()
	})
}
