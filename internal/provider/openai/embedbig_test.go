package openai_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/openai"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// prettyReply writes OpenAI's embeddings reply for n inputs of dims
// values, pretty-printed as api.openai.com sends it (two spaces an
// indent, one value a line, as in the recorded replies of
// alexrudall/ruby-openai's spec/fixtures/cassettes): some 22 bytes a
// value. The entries come in reverse order of index, so that only
// placing them by index gives the inputs' order. Every vector holds the
// same values, but for its first, which is markerOf its index.
func prettyReply(n, dims int) func(w io.Writer) error {
	var tail []byte
	for _, v := range embedBigTail(dims) {
		tail = append(tail, ",\n        "...)
		tail = strconv.AppendFloat(tail, float64(v), 'g', -1, 32)
	}
	return writeReply(n, func(bw *bufio.Writer, i int) {
		bw.WriteString("[\n        ")
		bw.WriteString(strconv.FormatFloat(float64(markerOf(i)), 'g', -1, 32))
		bw.Write(tail)
		bw.WriteString("\n      ]")
	})
}

// base64Reply writes prettyReply's vectors as OpenAI sends them for
// encoding_format "base64": each vector one string of its float32s,
// little-endian, base64-encoded (some 5.3 bytes a value), in the same
// pretty-printed reply.
func base64Reply(n, dims int) func(w io.Writer) error {
	raw := make([]byte, 4*dims)
	for j, v := range embedBigTail(dims) {
		binary.LittleEndian.PutUint32(raw[4*(j+1):], math.Float32bits(v))
	}
	return writeReply(n, func(bw *bufio.Writer, i int) {
		binary.LittleEndian.PutUint32(raw, math.Float32bits(markerOf(i)))
		bw.WriteString(`"`)
		enc := base64.NewEncoder(base64.StdEncoding, bw)
		enc.Write(raw)
		enc.Close()
		bw.WriteString(`"`)
	})
}

// writeReply writes a pretty-printed embeddings reply for n inputs, the
// entries in reverse order of index, each vector written by vector.
func writeReply(n int, vector func(bw *bufio.Writer, i int)) func(w io.Writer) error {
	return func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		bw.WriteString("{\n  \"object\": \"list\",\n  \"data\": [\n")
		for i := n - 1; i >= 0; i-- {
			bw.WriteString("    {\n      \"object\": \"embedding\",\n      \"index\": " + strconv.Itoa(i) + ",\n      \"embedding\": ")
			vector(bw, i)
			bw.WriteString("\n    }")
			if i > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n")
		}
		bw.WriteString("  ],\n  \"model\": \"text-embedding-3-large\",\n  \"usage\": {\n    \"prompt_tokens\": " + strconv.Itoa(n) +
			",\n    \"total_tokens\": " + strconv.Itoa(n) + "\n  }\n}\n")
		return bw.Flush()
	}
}

// embedBigTail is the values of every vector of a prettyReply after the
// first: float32s of a normal distribution, as an embedding's are.
func embedBigTail(dims int) []float32 {
	rng := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, dims-1)
	for j := range v {
		v[j] = float32(rng.NormFloat64() * 0.02)
	}
	return v
}

// markerOf is the first value of input i's vector in a prettyReply.
func markerOf(i int) float32 { return -0.0731 + float32(i)*1e-5 }

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// embedBig embeds n inputs against an upstream answering reply(n, dims)
// (prettyReply, base64Reply), and returns the vectors and the reply's
// size.
func embedBig(tb testing.TB, reply func(n, dims int) func(w io.Writer) error, n, dims int) (*provider.Embeddings, int64, error) {
	var size int64
	gen := reply(n, dims)
	up := pt.NewUpstream(tb, func(int, *http.Request) pt.Reply {
		return pt.Reply{Header: http.Header{"Content-Type": {"application/json"}}, Write: func(w io.Writer) error {
			cw := &countingWriter{w: w}
			err := gen(cw)
			size = cw.n
			return err
		}}
	})
	emb, err := embedInputs(tb, newEmbedder(tb, up), n)
	return emb, size, err
}

// newEmbedder returns an openai provider whose base URL is up's.
func newEmbedder(tb testing.TB, up *pt.Upstream) provider.Embedder {
	p, err := openai.New(provider.Config{Name: "openai", Kind: openai.Kind, BaseURL: up.URL})
	if err != nil {
		tb.Fatal(err)
	}
	return p.(provider.Embedder)
}

// embedInputs embeds n inputs with e.
func embedInputs(tb testing.TB, e provider.Embedder, n int) (*provider.Embeddings, error) {
	inputs := make([]string, n)
	for i := range inputs {
		inputs[i] = "input " + strconv.Itoa(i)
	}
	return e.Embed(tb.Context(), &provider.EmbedRequest{Model: "text-embedding-3-large", Inputs: inputs, Attempt: 1})
}

// BenchmarkEmbedLarge measures one Embed of 2048 inputs of 1536 values
// (text-embedding-3-small's) against a loopback upstream that sends a
// reply written before the timing starts: float, pretty-printed as OpenAI
// sends it (some 66 MiB), or base64 (some 16 MiB).
func BenchmarkEmbedLarge(b *testing.B) {
	const n, dims = 2048, 1536
	for _, tc := range []struct {
		name  string
		reply func(n, dims int) func(w io.Writer) error
	}{
		{"float", prettyReply},
		{"base64", base64Reply},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var body bytes.Buffer
			if err := tc.reply(n, dims)(&body); err != nil {
				b.Fatal(err)
			}
			up := pt.Replay(b, pt.Reply{Header: http.Header{"Content-Type": {"application/json"}}, Write: func(w io.Writer) error {
				_, err := w.Write(body.Bytes())
				return err
			}})
			e := newEmbedder(b, up)
			b.SetBytes(int64(body.Len()))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := embedInputs(b, e, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestEmbedLargerThanTheOldCap: 2048 inputs (the most a request holds) of
// text-embedding-3-large's 3072 values, pretty-printed as OpenAI sends
// them, are 130 MiB, past the 96 MiB an embeddings reply was read up to:
// the call failed as a protocol error after the provider had been paid.
// The reply is decoded as it arrives, each vector in its input's place.
// The test sends 1600 inputs, 101 MiB, enough to pass the old cap and
// light enough for the race detector.
func TestEmbedLargerThanTheOldCap(t *testing.T) {
	const n, dims = 1600, 3072
	emb, size, err := embedBig(t, prettyReply, n, dims)
	if err != nil {
		t.Fatalf("%d inputs of %d values: %v", n, dims, err)
	}
	if size <= 96<<20 {
		t.Fatalf("the reply is %d bytes, not past the old cap of 96 MiB", size)
	}
	t.Logf("the reply is %.1f MiB", float64(size)/(1<<20))
	checkBig(t, emb, n, dims)
}

// TestEmbedLargeBase64: 2048 inputs of text-embedding-3-small's 1536
// values in base64, as OpenAI sends them when asked (16 MiB, a quarter of
// the same reply in floats), decode each vector to its values, in its
// input's place.
func TestEmbedLargeBase64(t *testing.T) {
	const n, dims = 2048, 1536
	emb, size, err := embedBig(t, base64Reply, n, dims)
	if err != nil {
		t.Fatalf("%d inputs of %d values: %v", n, dims, err)
	}
	t.Logf("the reply is %.1f MiB", float64(size)/(1<<20))
	checkBig(t, emb, n, dims)
}

// checkBig checks the vectors of an embedBig reply: n of them, each in its
// input's place, and the reply's usage.
func checkBig(t *testing.T, emb *provider.Embeddings, n, dims int) {
	t.Helper()
	if len(emb.Vectors) != n || !emb.Reported || emb.Usage.InputTokens != int64(n) {
		t.Fatalf("%d vectors, usage %+v (reported %v); want %d and %d input tokens", len(emb.Vectors), emb.Usage, emb.Reported, n, n)
	}
	want := embedBigTail(dims)
	for i, v := range emb.Vectors {
		if len(v) != dims || v[0] != markerOf(i) || !slices.Equal(v[1:], want) {
			t.Fatalf("vector %d starts %v (%d values), want %v then the reply's values", i, v[:min(len(v), 3)], len(v), markerOf(i))
		}
	}
}
