package gemini_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/gemini"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestEmbedWire: Embed sends one batchEmbedContents request, byte for
// byte, to {base_url}/models/{model}:batchEmbedContents with the key, one
// EmbedContentRequest per input (provider_options merged into each), and
// returns a recorded-shape reply's vectors in order, with no usage.
func TestEmbedWire(t *testing.T) {
	reply, err := os.ReadFile("testdata/batch_embed_contents.json")
	if err != nil {
		t.Fatal(err)
	}
	up := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.JSON(reply) })
	t.Setenv("LLMRELAY_TEST_EMBED_KEY", "g-key")
	p, err := gemini.New(provider.Config{Name: "gemini", Kind: "gemini", BaseURL: up.URL + "/v1beta", APIKeyEnv: "LLMRELAY_TEST_EMBED_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := p.(provider.Embedder).Embed(t.Context(), &provider.EmbedRequest{
		Model: "gemini-embedding-001", Inputs: []string{"first", "second"}, Dimensions: 3,
		Options: map[string]any{"taskType": "RETRIEVAL_DOCUMENT"}, Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"requests":[` +
		`{"content":{"parts":[{"text":"first"}]},"model":"models/gemini-embedding-001","outputDimensionality":3,"taskType":"RETRIEVAL_DOCUMENT"},` +
		`{"content":{"parts":[{"text":"second"}]},"model":"models/gemini-embedding-001","outputDimensionality":3,"taskType":"RETRIEVAL_DOCUMENT"}]}`
	if reqs := up.Requests(); len(reqs) != 1 || reqs[0].URI != "/v1beta/models/gemini-embedding-001:batchEmbedContents" ||
		reqs[0].Header.Get("X-Goog-Api-Key") != "g-key" || string(reqs[0].Body) != want {
		t.Errorf("requests %+v\nwant one to /v1beta/models/gemini-embedding-001:batchEmbedContents (g-key):\n%s", reqs, want)
	}
	if len(emb.Vectors) != 2 || !slices.Equal(emb.Vectors[0], []float32{-0.022374554, -0.004560777, 0.013309286}) ||
		!slices.Equal(emb.Vectors[1], []float32{0.0113491025, -0.0256703, -0.0022131556}) {
		t.Errorf("vectors %v, want the reply's, in order", emb.Vectors)
	}
	if emb.Reported {
		t.Errorf("usage reported %+v; batchEmbedContents reports none", emb.Usage)
	}
}

// TestEmbedBatchesOfAHundred: batchEmbedContents takes at most 100
// requests a batch (Gemini answers 400 "at most 100 requests can be in
// one batch" to more), and Embed takes up to 2048 inputs: they go in
// batches of 100, one after another, and the vectors come back in the
// inputs' order.
func TestEmbedBatchesOfAHundred(t *testing.T) {
	var up *pt.Upstream
	up = pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
		var batch struct {
			Requests []struct {
				Content struct {
					Parts []struct{ Text string }
				}
			}
		}
		if err := json.Unmarshal(up.Requests()[n].Body, &batch); err != nil || len(batch.Requests) > 100 {
			return pt.Reply{Status: http.StatusBadRequest, Body: []byte(`{"error":{"code":400,"message":"* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch","status":"INVALID_ARGUMENT"}}`)}
		}
		var vals []string
		for _, r := range batch.Requests {
			vals = append(vals, `{"values":[`+strings.TrimPrefix(r.Content.Parts[0].Text, "t")+`]}`)
		}
		return pt.JSON([]byte(`{"embeddings":[` + strings.Join(vals, ",") + `]}`))
	})
	t.Setenv("LLMRELAY_TEST_EMBED_KEY", "g-key")
	p, err := gemini.New(provider.Config{Name: "gemini", Kind: "gemini", BaseURL: up.URL, APIKeyEnv: "LLMRELAY_TEST_EMBED_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	inputs := make([]string, 250)
	for i := range inputs {
		inputs[i] = fmt.Sprintf("t%d", i)
	}
	emb, err := p.(provider.Embedder).Embed(t.Context(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: inputs})
	if err != nil {
		t.Fatalf("250 inputs: %v", err)
	}
	if n := len(up.Requests()); n != 3 {
		t.Errorf("%d requests for 250 inputs, want 3 (100, 100, 50)", n)
	}
	for i, v := range emb.Vectors {
		if len(v) != 1 || v[0] != float32(i) {
			t.Fatalf("vector %d is %v, want input %d's, [%s]", i, v, i, strconv.Itoa(i))
		}
	}
}

// TestEmbedBatchCounts: each batch must hold one embedding per input of
// its own: a short batch beside a long one, whose counts add up to the
// inputs', is a protocol error, not vectors each placed one off.
func TestEmbedBatchCounts(t *testing.T) {
	vectors := func(n int) []byte {
		return []byte(`{"embeddings":[` + strings.TrimSuffix(strings.Repeat(`{"values":[1]},`, n), ",") + `]}`)
	}
	up := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply { return pt.JSON(vectors(99 + 2*n)) })
	t.Setenv("LLMRELAY_TEST_EMBED_KEY", "g-key")
	p, err := gemini.New(provider.Config{Name: "gemini", Kind: "gemini", BaseURL: up.URL, APIKeyEnv: "LLMRELAY_TEST_EMBED_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.(provider.Embedder).Embed(t.Context(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: slices.Repeat([]string{"x"}, 200)})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindProtocol {
		t.Fatalf("batches of 99 and 101 embeddings for 100 inputs each: %v, want a protocol error", err)
	}
}

// TestEmbedErrors: an error status goes through the adapter's error
// table, and a reply without one vector per input, or whose vectors are
// not of the length asked for, is a protocol error.
func TestEmbedErrors(t *testing.T) {
	replies := []pt.Reply{
		{Status: http.StatusServiceUnavailable, Body: []byte(`{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`)},
		pt.JSON([]byte(`{"embeddings":[{"values":[1,2]}]}`)),
		pt.JSON([]byte(`{"embeddings":[{"values":[1,2,3]},{"values":[4,5,6]}]}`)),
	}
	up := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply { return replies[n] })
	t.Setenv("LLMRELAY_TEST_EMBED_KEY", "g-key")
	p, err := gemini.New(provider.Config{Name: "gemini", Kind: "gemini", BaseURL: up.URL, APIKeyEnv: "LLMRELAY_TEST_EMBED_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	e := p.(provider.Embedder)
	req := &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: []string{"a", "b"}}
	_, err = e.Embed(t.Context(), req)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Status != 503 || !pe.FailureClass().Transient() {
		t.Errorf("a 503 UNAVAILABLE: %v, want a transient provider error", err)
	}
	if _, err = e.Embed(t.Context(), req); !errors.As(err, &pe) || pe.Kind != provider.KindProtocol {
		t.Errorf("one vector for two inputs: %v, want a protocol error", err)
	}
	if _, err = e.Embed(t.Context(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: []string{"a", "b"}, Dimensions: 2}); !errors.As(err, &pe) || pe.Kind != provider.KindProtocol {
		t.Errorf("vectors of 3 values when 2 were asked for: %v, want a protocol error", err)
	}
}

// TestEmbedReplyBounds: what a batch's answer holds is bounded as it is
// decoded: no more embeddings than the batch's requests, no more than
// provider.MaxEmbeddingDimensions values in one; past either, the attempt
// fails with a protocol error whose provider.EmbeddingBoundError names
// the bound, without reading further.
func TestEmbedReplyBounds(t *testing.T) {
	long := `[0` + strings.Repeat(`,0`, provider.MaxEmbeddingDimensions) + `]`
	t.Setenv("LLMRELAY_TEST_EMBED_KEY", "g-key")
	for _, tc := range []struct {
		name  string
		reply string
		bound provider.EmbeddingBound
		limit int
	}{
		{"an embedding more than requests", `{"embeddings":[{"values":[1]},{"values":[2]},{"values":[3]}]}`, provider.BoundVectors, 2},
		{"one value past the most dimensions", `{"embeddings":[{"values":[1]},{"values":` + long + `}]}`, provider.BoundDimensions, provider.MaxEmbeddingDimensions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := pt.Replay(t, pt.JSON([]byte(tc.reply)))
			p, err := gemini.New(provider.Config{Name: "gemini", Kind: "gemini", BaseURL: up.URL, APIKeyEnv: "LLMRELAY_TEST_EMBED_KEY"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.(provider.Embedder).Embed(t.Context(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: []string{"a", "b"}})
			pe, _ := errors.AsType[*provider.Error](err)
			be, _ := errors.AsType[*provider.EmbeddingBoundError](err)
			if pe == nil || pe.Kind != provider.KindProtocol || be == nil || be.Bound != tc.bound || be.Limit != tc.limit {
				t.Errorf("%v, want a protocol error past %d %s", err, tc.limit, tc.bound)
			}
		})
	}
}
