package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/jsonstream"
)

// errTrailingData reports an event whose data holds more than one JSON value.
var errTrailingData = errors.New("data after the JSON value")

// JSONDecoder decodes the JSON payloads of one stream's events. It keeps
// one encoding/json.Decoder for the whole stream, whose scanner and decode
// state are reused from event to event; json.Unmarshal builds them afresh
// for every call, which costs several allocations per event. Like
// json.Unmarshal, Decode merges into v: reset v first.
//
// The decoding runs on offstack's workers: encoding/json's recursive
// descent needs a few KiB of stack, and an open stream's goroutine that
// grew to 16 KiB for it would keep the 16 KiB for as long as the stream
// waits (see package offstack).
//
// Its state is allocated by the first Decode and dropped by Release: a
// stream's decoder lives as long as the stream, and one whose events the
// fast path takes holds only a nil pointer, not 120 bytes.
//
// The zero JSONDecoder is ready to use. It is not safe for concurrent use.
type JSONDecoder struct{ st *jsonState }

// jsonState is a JSONDecoder's state.
type jsonState struct {
	r   bytes.Reader
	dec *json.Decoder
	fed int64 // bytes given to dec so far

	// What the worker decodes, and its error; run is decode, made once.
	data []byte
	v    any
	err  error
	run  func()
}

// Decode decodes data, which must hold exactly one JSON value, into v.
func (j *JSONDecoder) Decode(data []byte, v any) error {
	s := j.st
	if s == nil {
		s = new(jsonState)
		s.run = s.decode
		j.st = s
	}
	s.data, s.v = data, v
	offstack.Run(s.run)
	err := s.err
	s.data, s.v, s.err = nil, nil, nil
	return err
}

// Release drops the encoding/json.Decoder, its buffers and the rest of the
// state; the next Decode starts afresh. A decoder whose fast path takes
// nearly every event calls it after each of the few it does not, so that
// a stream waiting for its next event holds none of encoding/json's state.
func (j *JSONDecoder) Release() { j.st = nil }

// decode is Decode's work, on a worker.
func (j *jsonState) decode() {
	data := j.data
	if j.dec == nil {
		j.r.Reset(nil)
		j.dec = json.NewDecoder(&j.r)
		j.fed = 0
	}
	j.r.Reset(data)
	j.fed += int64(len(data))
	if err := j.dec.Decode(j.v); err != nil {
		j.dec = nil // its state is spoilt; the next event starts afresh
		j.err = err
		return
	}
	rest := j.fed - j.dec.InputOffset()
	if rest > int64(len(data)) || len(bytes.TrimSpace(data[int64(len(data))-rest:])) > 0 {
		j.dec = nil
		j.err = errTrailingData
	}
}

// ReadEmbedding reads one embedding from d as float32s: an array of
// numbers, or, when base64 is set, also a string of base64 little-endian
// float32s (OpenAI's encoding_format "base64";
// jsonstream.Decoder.Base64Float32s). It reads within the bounds of
// provider.MaxEmbeddingDimensions values and of left, the values the
// answer may still hold of provider.MaxEmbeddingValues, which it lowers by
// what it read. hint is the capacity to start with (the length of the
// answer's first vector, 0 for the first). A vector past a bound is a
// provider.EmbeddingBoundExceeded error, read no further; see
// embeddingsError for the others.
func ReadEmbedding(d *jsonstream.Decoder, hint int, left *int, base64 bool) ([]float32, error) {
	limit := min(provider.MaxEmbeddingDimensions, *left)
	dst := make([]float32, 0, min(hint, limit))
	var v []float32
	var err error
	if c, _ := d.Peek(); base64 && c == '"' {
		v, err = d.Base64Float32s(dst, limit)
	} else {
		v, err = d.Float32s(dst, limit)
	}
	if errors.Is(err, jsonstream.ErrTooMany) {
		if limit == provider.MaxEmbeddingDimensions {
			return nil, provider.EmbeddingBoundExceeded(provider.BoundDimensions, provider.MaxEmbeddingDimensions)
		}
		return nil, provider.EmbeddingBoundExceeded(provider.BoundValues, provider.MaxEmbeddingValues)
	}
	*left -= len(v)
	return v, err
}

// ReadEmbeddings reads an embeddings answer from r with read, which
// decodes its one JSON value, and checks that nothing follows it; an
// error is embeddingsError's. It is an Endpoint.PostRead reader's body.
func ReadEmbeddings(r io.Reader, read func(*jsonstream.Decoder) error) error {
	d := jsonstream.NewDecoder(r)
	err := read(d)
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return embeddingsError(d, err)
	}
	return nil
}

// embeddingsError returns the error of an embeddings answer that d could
// not read: err when it is a *provider.Error already (a bound the answer
// passed), else a KindProtocol error wrapping ErrMalformed and err, with
// the answer's bytes near where it broke in Raw.
func embeddingsError(d *jsonstream.Decoder, err error) error {
	if _, ok := errors.AsType[*provider.Error](err); ok {
		return err
	}
	pe := ProtocolError(err, d.Near(MaxRaw/2))
	pe.Message = "answered embeddings that do not decode"
	return pe
}
