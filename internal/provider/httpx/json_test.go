package httpx

import (
	"bytes"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/jsonstream"
)

func TestJSONDecoder(t *testing.T) {
	type v struct {
		A string `json:"a"`
		B []int  `json:"b"`
	}
	var j JSONDecoder
	steps := []struct {
		data    string
		want    v
		wantErr bool
	}{
		{`{"a":"x","b":[1,2]}`, v{A: "x", B: []int{1, 2}}, false},
		{`  {"a": "y"}   `, v{A: "y"}, false},
		{`{"a":"z"}{"a":"w"}`, v{}, true},
		{`{"a":"after an error"}`, v{A: "after an error"}, false},
		{`{"a":`, v{}, true},
		{`{"b":[3]}`, v{B: []int{3}}, false},
		{`   `, v{}, true},
		{`{"a":"last"}`, v{A: "last"}, false},
	}
	for i, s := range steps {
		var got v
		err := j.Decode([]byte(s.data), &got)
		if (err != nil) != s.wantErr {
			t.Fatalf("step %d (%s): error %v, want error %v", i, s.data, err, s.wantErr)
		}
		if err == nil && (got.A != s.want.A || len(got.B) != len(s.want.B)) {
			t.Errorf("step %d (%s): got %+v, want %+v", i, s.data, got, s.want)
		}
	}
	if err := j.Decode([]byte(`{"a":"x"} x`), new(v)); !errors.Is(err, errTrailingData) {
		t.Errorf("trailing garbage: %v, want errTrailingData", err)
	}
}

// onWorker reports whether the calling goroutine is one of offstack's
// workers: its stack goes down to the workers' function.
func onWorker() bool {
	buf := make([]byte, 64<<10)
	return bytes.Contains(buf[:runtime.Stack(buf, false)], []byte(offstack.WorkerFunction+"("))
}

// probe records, when encoding/json encodes or decodes it, whether that
// ran on one of offstack's workers.
type probe struct{ worker *bool }

func (p probe) MarshalJSON() ([]byte, error) {
	*p.worker = onWorker()
	return []byte(`{}`), nil
}

func (p *probe) UnmarshalJSON([]byte) error {
	*p.worker = onWorker()
	return nil
}

// TestJSONRunsOffTheStreamsGoroutine: encoding/json's recursion, which
// needs several KiB of stack, runs on offstack's workers for the request's
// encoding and every event's decoding, never on the goroutine of the
// stream, which would keep the grown stack while it waits.
func TestJSONRunsOffTheStreamsGoroutine(t *testing.T) {
	var encoded, decoded bool
	if _, err := Encode(map[string]any{"messages": []any{probe{&encoded}}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !encoded {
		t.Error("Encode ran encoding/json on the caller's goroutine")
	}
	var j JSONDecoder
	v := struct{ Delta *probe }{&probe{&decoded}}
	if err := j.Decode([]byte(`{"Delta":{"text":"x"}}`), &v); err != nil {
		t.Fatal(err)
	}
	if !decoded {
		t.Error("JSONDecoder.Decode ran encoding/json on the caller's goroutine")
	}
	encoded = false
	if _, err := EncodeRequest(&provider.Request{}, func(*provider.Request) (any, error) { return []any{probe{&encoded}}, nil }, nil); err != nil || !encoded {
		t.Errorf("EncodeRequest: %v, on a worker: %v; want it encoded on a worker", err, encoded)
	}
}

// TestReleaseDropsTheDecodersState: after Release the JSONDecoder holds
// none of encoding/json's state (a held stream whose events the fast path
// takes keeps none), and the next Decode works afresh.
func TestReleaseDropsTheDecodersState(t *testing.T) {
	var j JSONDecoder
	var v struct{ A string }
	if err := j.Decode([]byte(`{"A":"x"}`), &v); err != nil || j.st == nil || j.st.dec == nil {
		t.Fatalf("Decode: %v, state kept %v; want the decoder kept between events", err, j.st != nil)
	}
	j.Release()
	if j.st != nil {
		t.Error("Release kept the decoder's state")
	}
	v.A = ""
	if err := j.Decode([]byte(`{"A":"y"}`), &v); err != nil || v.A != "y" {
		t.Errorf("Decode after Release: %q, %v; want y", v.A, err)
	}
}

// TestReadEmbeddingBounds: ReadEmbedding reads a vector within both
// bounds and lowers what the answer may still hold by its length; a vector
// past what is left of provider.MaxEmbeddingValues, or past
// provider.MaxEmbeddingDimensions, is the error naming that bound.
func TestReadEmbeddingBounds(t *testing.T) {
	left := 5
	v, err := ReadEmbedding(jsonstream.NewDecoder(strings.NewReader(`[1, 2, 3]`)), 0, &left, false)
	if err != nil || len(v) != 3 || left != 2 {
		t.Errorf("3 values of 5 left: %v, %v, %d left; want them and 2 left", v, err, left)
	}
	_, err = ReadEmbedding(jsonstream.NewDecoder(strings.NewReader(`[1, 2, 3]`)), 3, &left, false)
	if be, _ := errors.AsType[*provider.EmbeddingBoundError](err); be == nil || be.Bound != provider.BoundValues || be.Limit != provider.MaxEmbeddingValues {
		t.Errorf("3 values of 2 left: %v, want the bound of values in all", err)
	}
	left = provider.MaxEmbeddingValues
	long := "[0" + strings.Repeat(",0", provider.MaxEmbeddingDimensions) + "]"
	_, err = ReadEmbedding(jsonstream.NewDecoder(strings.NewReader(long)), 0, &left, false)
	if be, _ := errors.AsType[*provider.EmbeddingBoundError](err); be == nil || be.Bound != provider.BoundDimensions || be.Limit != provider.MaxEmbeddingDimensions {
		t.Errorf("%d values: %v, want the bound of values in one vector", provider.MaxEmbeddingDimensions+1, err)
	}
	left = 5
	_, err = ReadEmbedding(jsonstream.NewDecoder(strings.NewReader(`"AACAPwAAAEAAAEBAAACAQAAAoEAAAMBA"`)), 0, &left, true)
	if be, _ := errors.AsType[*provider.EmbeddingBoundError](err); be == nil || be.Bound != provider.BoundValues {
		t.Errorf("6 base64 values of 5 left: %v, want the bound of values in all", err)
	}
}

// TestReadEmbeddingBase64: with base64 set, ReadEmbedding reads a vector
// sent as a base64 string as well as an array; without, a string is not
// an embedding.
func TestReadEmbeddingBase64(t *testing.T) {
	for _, in := range []string{`"AACAPwAAAEA="`, `[1, 2]`} {
		left := 5
		v, err := ReadEmbedding(jsonstream.NewDecoder(strings.NewReader(in)), 0, &left, true)
		if err != nil || !slices.Equal(v, []float32{1, 2}) || left != 3 {
			t.Errorf("%s: %v, %v, %d left; want [1 2] and 3 left", in, v, err, left)
		}
	}
	left := 5
	if _, err := ReadEmbedding(jsonstream.NewDecoder(strings.NewReader(`"AACAPwAAAEA="`)), 0, &left, false); err == nil {
		t.Errorf("a base64 string without base64 set: read, want an error")
	}
}
