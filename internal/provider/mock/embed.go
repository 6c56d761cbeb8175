package mock

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// DefaultEmbedDimensions is the length of the mock's vectors when a
// request asks for none.
const DefaultEmbedDimensions = 8

// Embed implements provider.Embedder with deterministic vectors: the same
// text and dimensions give the same unit-length vector on every call and
// every replica (its values drawn from SHA-256 of the text), and a
// different text a different one. The usage counts a token per word of
// the inputs (at least one per input). provider_options takes `faults`
// only, as Stream reads it, and the configured standing fault applies
// the same way; of a fault, only a status applies (the attempt fails
// with it, its retry hint and error type), the stream's faults having no
// stream to act on.
func (p *Provider) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.Embeddings, error) {
	for k := range req.Options {
		if k != "faults" && k != provider.ExtraHeadersKey {
			return nil, fieldErr("provider_options."+k, "unknown option for the mock provider's embeddings; known: faults")
		}
	}
	faults, err := ParseFaults(req.Options["faults"])
	if err != nil {
		return nil, err
	}
	f := noFault()
	if i := req.Attempt - 1; i >= 0 && i < len(faults) {
		f = faults[i]
	} else if p.standing != nil {
		f = *p.standing
	}
	if f.Status != 0 {
		return nil, statusError(f)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dims := req.Dimensions
	if dims <= 0 {
		dims = DefaultEmbedDimensions
	}
	out := &provider.Embeddings{Vectors: make([][]float32, len(req.Inputs)), Reported: true}
	for i, in := range req.Inputs {
		out.Vectors[i] = Vector(in, dims)
		out.Usage.InputTokens += int64(max(len(strings.Fields(in)), 1))
	}
	return out, nil
}

// Vector is the mock's embedding of text with dims values: unit length,
// each value drawn from SHA-256 of the text and the value's block.
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	var sum float64
	var block [sha256.Size]byte
	for j := range v {
		if j%8 == 0 {
			var n [4]byte
			binary.LittleEndian.PutUint32(n[:], uint32(j/8))
			block = sha256.Sum256(append([]byte(text), n[:]...))
		}
		u := binary.LittleEndian.Uint32(block[(j%8)*4:])
		x := float64(u)/math.MaxUint32*2 - 1
		v[j] = float32(x)
		sum += x * x
	}
	norm := math.Sqrt(sum)
	if norm == 0 {
		v[0], norm = 1, 1
	}
	for j := range v {
		v[j] = float32(float64(v[j]) / norm)
	}
	return v
}
