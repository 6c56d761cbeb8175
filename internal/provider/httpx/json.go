package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errTrailingData reports an event whose data holds more than one JSON value.
var errTrailingData = errors.New("data after the JSON value")

// JSONDecoder decodes the JSON payloads of one stream's events. It keeps
// one encoding/json.Decoder for the whole stream, whose scanner and decode
// state are reused from event to event; json.Unmarshal builds them afresh
// for every call, which costs several allocations per event. Like
// json.Unmarshal, Decode merges into v: reset v first.
//
// The zero JSONDecoder is ready to use. It is not safe for concurrent use.
type JSONDecoder struct {
	r   bytes.Reader
	dec *json.Decoder
	fed int64 // bytes given to dec so far
}

// Decode decodes data, which must hold exactly one JSON value, into v.
func (j *JSONDecoder) Decode(data []byte, v any) error {
	if j.dec == nil {
		j.r.Reset(nil)
		j.dec = json.NewDecoder(&j.r)
		j.fed = 0
	}
	j.r.Reset(data)
	j.fed += int64(len(data))
	if err := j.dec.Decode(v); err != nil {
		j.dec = nil // its state is spoilt; the next event starts afresh
		return err
	}
	rest := j.fed - j.dec.InputOffset()
	if rest > int64(len(data)) || len(bytes.TrimSpace(data[int64(len(data))-rest:])) > 0 {
		j.dec = nil
		return errTrailingData
	}
	return nil
}
