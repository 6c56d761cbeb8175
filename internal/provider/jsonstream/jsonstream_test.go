package jsonstream_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
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
	d = jsonstream.NewDecoder(io.MultiReader(strings.NewReader(`"AACAPwAA`), iotest.ErrReader(boom)))
	if _, err := d.Base64Float32s(nil, 10); !errors.Is(err, boom) {
		t.Errorf("Base64Float32s of \"AACAPwAA then a failed read: %v, want the read's error", err)
	}
	var se *jsonstream.SyntaxError
	if _, err := jsonstream.NewDecoder(strings.NewReader(`[1, 2`)).Float32s(nil, 10); !errors.As(err, &se) {
		t.Errorf("Float32s of [1, 2 then the end: %v, want a SyntaxError", err)
	}
}

// base64Seeds are inputs for FuzzBase64Float32s: OpenAI's base64
// vectors, padded or not, escaped, cut, with NaNs and infinities.
var base64Seeds = []string{
	`"AACAPw=="`, `"AACAPwAAAEA="`, `"AACAPwAAAEAAAEBAAACAQAAAoEA="`, `"AACAPwAAAEAAAEBAAACAQAAAoEAAAMBA"`,
	`""`, `null`, `"AACAPw"`, `"AACA"`, `"AA=A"`, `"A==="`, `"AACAPw==AACAPw=="`, `"AACAPw==" `, `"AACAPw==`,
	`"AACAfw=="`, `"AACA/w=="`, `"AADAfw=="`, `"AAC\/Pw=="`, `"\u0041ACAPw=="`, `"\u00e9ACAPw=="`, `"AACA\nPw=="`,
	"\"AACA\nPw==\"", `"AACAP!=="`, `1`, `[1]`, `"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"`,
}

// FuzzBase64Float32s holds Base64Float32s to json.Unmarshal into a
// string and encoding/base64's StdEncoding: the same float32s when both
// accept the input, the input refused when they do not, or when its bytes
// are not a whole number of float32s, or hold a NaN or an infinity. Line
// breaks, which encoding/base64 skips, are refused.
func FuzzBase64Float32s(f *testing.F) {
	for _, s := range base64Seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var want []float32
		var s *string
		wantErr := json.Unmarshal(in, &s)
		if wantErr == nil && s != nil {
			var raw []byte
			raw, wantErr = base64.StdEncoding.DecodeString(*s)
			switch {
			case wantErr != nil:
			case strings.ContainsAny(*s, "\r\n"), len(raw)%4 != 0:
				wantErr = errors.New("not float32s")
			default:
				for b := raw; len(b) > 0; b = b[4:] {
					v := math.Float32frombits(binary.LittleEndian.Uint32(b))
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						wantErr = errors.New("not a JSON number")
					}
					want = append(want, v)
				}
			}
		}
		for name, r := range readers {
			d := jsonstream.NewDecoder(r(in))
			got, err := d.Base64Float32s(nil, 1<<20)
			if err == nil {
				err = d.End()
			}
			switch {
			case (err == nil) != (wantErr == nil):
				t.Fatalf("%s: %q gave %v, %v; want %v, %v", name, in, got, err, want, wantErr)
			case err == nil && !slices.Equal(got, want):
				t.Fatalf("%s: %q gave %v, want %v", name, in, got, want)
			}
		}
	})
}

// TestBase64Float32sLong: a vector of text-embedding-3-large's 3072
// values, past the Decoder's buffer and cut by its refills at every
// offset of a run, decodes to its values; past the bound it stops at the
// bound with ErrTooMany.
func TestBase64Float32sLong(t *testing.T) {
	want := make([]float32, 3072)
	raw := make([]byte, 4*len(want))
	for i := range want {
		want[i] = float32(i)/3072 - 0.5
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(want[i]))
	}
	str := `"` + base64.StdEncoding.EncodeToString(raw) + `"`
	for lead := range 17 {
		in := strings.Repeat(" ", 32<<10-lead) + str
		got, err := jsonstream.NewDecoder(strings.NewReader(in)).Base64Float32s(nil, len(want))
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%d spaces before: %d values, %v; want the %d written", len(in)-len(str), len(got), err, len(want))
		}
	}
	for _, max := range []int{3071, 3070, 3069, 10} {
		got, err := jsonstream.NewDecoder(strings.NewReader(str)).Base64Float32s(nil, max)
		if !errors.Is(err, jsonstream.ErrTooMany) || !slices.Equal(got, want[:max]) {
			t.Errorf("bound %d: %d values, %v; want the first %d and ErrTooMany", max, len(got), err, max)
		}
	}
}
