package jsonstream_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/llmrelay/llmrelay/internal/provider/jsonstream"
)

// readers are the ways a test hands its input to a Decoder: whole, and a
// byte a read, which puts every token across the buffer's refills.
var readers = map[string]func([]byte) io.Reader{
	"whole":       func(b []byte) io.Reader { return bytes.NewReader(b) },
	"byte a read": func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
}

// seeds are inputs for the fuzz targets.
var seeds = []string{
	`[1, -0.5, 2e3, 1E-2, 0, -0, 3.4028235e38]`,
	"[\n        -0.0069292834,\n        0.024047505\n      ]\n",
	`[]`, `null`, `[1,]`, `[01]`, `[1.]`, `[.5]`, `[1e]`, `[-]`, `[1e39]`, `[1, null]`, `["1"]`, `[1 2]`, `[1] x`,
	`{"a": [1, {"b": "c\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\ud800x"}], "d": true, "e": false, "f": null}`,
	`{"a" 1}`, `{"a":1,}`, `{,}`, `"\x"`, "\"\x01\"", `"\u12"`, `tru`, `nul`, "\"\xff\xfe\"", `{"\u0064ata": 1, "d\u00e9": 2, "\ud800": 3}`,
	strings.Repeat("[", 100) + strings.Repeat("]", 100),
}

// FuzzSkip holds Skip and End to encoding/json: an input is accepted
// exactly when json.Valid says it is JSON.
func FuzzSkip(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > jsonstream.MaxNumber {
			t.Skip("a number of the input may be longer than MaxNumber")
		}
		for name, r := range readers {
			d := jsonstream.NewDecoder(r(in))
			err := d.Skip()
			if err == nil {
				err = d.End()
			}
			if want := json.Valid(in); (err == nil) != want {
				t.Fatalf("%s: %q: %v, json.Valid %v", name, in, err, want)
			}
		}
	})
}

// FuzzFloat32s holds Float32s to json.Unmarshal into []float32: the same
// values when both accept the input, and acceptance by both but where the
// array holds a null (a zero to encoding/json, refused by Float32s).
func FuzzFloat32s(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > jsonstream.MaxNumber {
			t.Skip("a number of the input may be longer than MaxNumber")
		}
		var want []float32
		wantErr := json.Unmarshal(in, &want)
		var ptrs []*float32
		hasNull := json.Unmarshal(in, &ptrs) == nil && slices.Contains(ptrs, nil)
		for name, r := range readers {
			d := jsonstream.NewDecoder(r(in))
			got, err := d.Float32s(nil, 1<<20)
			if err == nil {
				err = d.End()
			}
			switch {
			case err == nil && wantErr != nil:
				t.Fatalf("%s: %q gave %v; json.Unmarshal: %v", name, in, got, wantErr)
			case err != nil && wantErr == nil && !hasNull:
				t.Fatalf("%s: %q: %v; json.Unmarshal gave %v", name, in, err, want)
			case err == nil && !slices.Equal(got, want):
				t.Fatalf("%s: %q gave %v, json.Unmarshal %v", name, in, got, want)
			}
		}
	})
}

// FuzzObjectKeys holds Object's keys to encoding/json's, for an object
// json.Unmarshal takes into a map.
func FuzzObjectKeys(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var want map[string]json.RawMessage
		if len(in) > jsonstream.MaxNumber || json.Unmarshal(in, &want) != nil || want == nil {
			return
		}
		for name, r := range readers {
			d := jsonstream.NewDecoder(r(in))
			got := map[string]bool{}
			err := d.Object(func(key []byte) error {
				got[string(key)] = true
				return d.Skip()
			})
			if err != nil {
				t.Fatalf("%s: %q: %v", name, in, err)
			}
			for k := range want {
				if !got[k] {
					t.Fatalf("%s: %q: keys %v, want %q among them", name, in, got, k)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %q: keys %v, json.Unmarshal's %s", name, in, got, want)
			}
		}
	})
}

// TestFloat32sBound: an array longer than the bound stops at the bound,
// with ErrTooMany and the values read; one of the bound's length is read
// whole.
func TestFloat32sBound(t *testing.T) {
	got, err := jsonstream.NewDecoder(strings.NewReader(`[1, 2, 3, 4]`)).Float32s(nil, 3)
	if !errors.Is(err, jsonstream.ErrTooMany) || !slices.Equal(got, []float32{1, 2, 3}) {
		t.Errorf("4 values, bound 3: %v, %v; want [1 2 3] and ErrTooMany", got, err)
	}
	got, err = jsonstream.NewDecoder(strings.NewReader(`[1, 2, 3]`)).Float32s(nil, 3)
	if err != nil || !slices.Equal(got, []float32{1, 2, 3}) {
		t.Errorf("3 values, bound 3: %v, %v; want [1 2 3]", got, err)
	}
}

// TestReadError: a reader's failure mid-value is returned as it is, not
// as a syntax error, wherever the value breaks.
func TestReadError(t *testing.T) {
	boom := errors.New("connection reset")
	for _, in := range []string{`[1, 2`, `[1, 2.5e`, `{"a": "b`, `{"ke`, `tr`, `[1, 2,`} {
		r := io.MultiReader(strings.NewReader(in), iotest.ErrReader(boom))
		d := jsonstream.NewDecoder(r)
		if err := d.Skip(); !errors.Is(err, boom) {
			t.Errorf("Skip of %q then a failed read: %v, want the read's error", in, err)
		}
	}
	d := jsonstream.NewDecoder(io.MultiReader(strings.NewReader(`[1, 2`), iotest.ErrReader(boom)))
	if _, err := d.Float32s(nil, 10); !errors.Is(err, boom) {
		t.Errorf("Float32s of [1, 2 then a failed read: %v, want the read's error", err)
	}
	var se *jsonstream.SyntaxError
	if _, err := jsonstream.NewDecoder(strings.NewReader(`[1, 2`)).Float32s(nil, 10); !errors.As(err, &se) {
		t.Errorf("Float32s of [1, 2 then the end: %v, want a SyntaxError", err)
	}
}
