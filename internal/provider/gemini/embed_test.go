package gemini_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/gemini"
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
	var gotPath, gotKey string
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotKey = r.URL.Path, r.Header.Get("X-Goog-Api-Key")
		gotBody, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("LLMRELAY_TEST_EMBED_KEY", "g-key")
	p, err := gemini.New(provider.Config{Name: "gemini", Kind: "gemini", BaseURL: srv.URL + "/v1beta", APIKeyEnv: "LLMRELAY_TEST_EMBED_KEY"})
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
	if gotPath != "/v1beta/models/gemini-embedding-001:batchEmbedContents" || gotKey != "g-key" || string(gotBody) != want {
		t.Errorf("request %s (%s):\n%s\nwant /v1beta/models/gemini-embedding-001:batchEmbedContents (g-key):\n%s", gotPath, gotKey, gotBody, want)
	}
	if len(emb.Vectors) != 2 || !slices.Equal(emb.Vectors[0], []float32{-0.022374554, -0.004560777, 0.013309286}) ||
		!slices.Equal(emb.Vectors[1], []float32{0.0113491025, -0.0256703, -0.0022131556}) {
		t.Errorf("vectors %v, want the reply's, in order", emb.Vectors)
	}
	if emb.Reported {
		t.Errorf("usage reported %+v; batchEmbedContents reports none", emb.Usage)
	}
}

// TestEmbedErrors: an error status goes through the adapter's error
// table, and a reply without one vector per input is a protocol error.
func TestEmbedErrors(t *testing.T) {
	var status int
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("LLMRELAY_TEST_EMBED_KEY", "g-key")
	p, err := gemini.New(provider.Config{Name: "gemini", Kind: "gemini", BaseURL: srv.URL, APIKeyEnv: "LLMRELAY_TEST_EMBED_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	e := p.(provider.Embedder)
	req := &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: []string{"a", "b"}}
	status, body = http.StatusServiceUnavailable, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`
	_, err = e.Embed(t.Context(), req)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Status != 503 || !pe.FailureClass().Transient() {
		t.Errorf("a 503 UNAVAILABLE: %v, want a transient provider error", err)
	}
	status, body = http.StatusOK, `{"embeddings":[{"values":[1,2]}]}`
	if _, err = e.Embed(t.Context(), req); !errors.As(err, &pe) || pe.Kind != provider.KindProtocol {
		t.Errorf("one vector for two inputs: %v, want a protocol error", err)
	}
}
