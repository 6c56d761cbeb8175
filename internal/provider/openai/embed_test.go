package openai_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/provider/openai"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestEmbedWire: Embed sends OpenAI's embeddings request, byte for byte,
// to {base_url}/embeddings with the key, asking for base64 vectors, and
// places each vector of a recorded-shape reply by its index, with the
// reply's prompt_tokens: base64 strings as OpenAI sends them, or arrays of
// numbers from a server that ignores encoding_format.
func TestEmbedWire(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		want        [2][]float32
	}{
		{"base64", "testdata/embeddings_base64.json",
			[2][]float32{{-0.006968617, -0.0052718227, 0.011901081}, {-0.024984878, -0.024554798, 0.039674748}}},
		{"floats from a server that ignores encoding_format", "testdata/embeddings.json",
			[2][]float32{{-0.0069292834, -0.005336422, 0.024047505}, {0.0023064255, -0.009327292, 0.015797347}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reply, err := os.ReadFile(tc.reply)
			if err != nil {
				t.Fatal(err)
			}
			up := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.JSON(reply) })
			t.Setenv("LLMRELAY_TEST_EMBED_KEY", "sk-test")
			p, err := openai.New(provider.Config{Name: "openai", Kind: openai.Kind, BaseURL: up.URL + "/v1", APIKeyEnv: "LLMRELAY_TEST_EMBED_KEY"})
			if err != nil {
				t.Fatal(err)
			}
			emb, err := p.(provider.Embedder).Embed(t.Context(), &provider.EmbedRequest{
				Model: "text-embedding-3-small", Inputs: []string{"first", "second"}, Dimensions: 3, Options: map[string]any{"user": "u-1"}, Attempt: 1})
			if err != nil {
				t.Fatal(err)
			}
			const want = `{"dimensions":3,"encoding_format":"base64","input":["first","second"],"model":"text-embedding-3-small","user":"u-1"}`
			if reqs := up.Requests(); len(reqs) != 1 || reqs[0].URI != "/v1/embeddings" ||
				reqs[0].Header.Get("Authorization") != "Bearer sk-test" || string(reqs[0].Body) != want {
				t.Errorf("requests %+v\nwant one to /v1/embeddings (Bearer sk-test):\n%s", reqs, want)
			}
			if len(emb.Vectors) != 2 || !slices.Equal(emb.Vectors[0], tc.want[0]) || !slices.Equal(emb.Vectors[1], tc.want[1]) {
				t.Errorf("vectors %v, want %v: data[] placed by index", emb.Vectors, tc.want)
			}
			if !emb.Reported || emb.Usage.InputTokens != 5 {
				t.Errorf("usage %+v (reported %v), want 5 input tokens", emb.Usage, emb.Reported)
			}
		})
	}
}

// TestEmbedBase64Refused: a server that refuses base64 (vLLM's 400 of
// 2024, a FastAPI server's 422 naming encoding_format) is asked again for
// floats within the same call, and for floats only from then on; a 400
// about something else is the call's error, not asked again.
func TestEmbedBase64Refused(t *testing.T) {
	floats := pt.JSON([]byte(`{"data":[{"index":0,"embedding":[0.5,0.25]}],"usage":{"prompt_tokens":1}}`))
	for _, tc := range []struct {
		name    string
		refusal pt.Reply
	}{
		{"vLLM's 400", pt.Reply{Status: http.StatusBadRequest, Body: []byte(
			`{"object":"error","message":"base64 encoding is not currently supported","type":"BadRequestError","param":null,"code":400}`)}},
		{"a FastAPI 422 naming encoding_format", pt.Reply{Status: http.StatusUnprocessableEntity, Body: []byte(
			`{"detail":[{"type":"literal_error","loc":["body","encoding_format"],"msg":"Input should be 'float'","input":"base64"}]}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
				if n == 0 {
					return tc.refusal
				}
				return floats
			})
			p, err := openai.New(provider.Config{Name: "openai", Kind: openai.Kind, BaseURL: up.URL})
			if err != nil {
				t.Fatal(err)
			}
			req := &provider.EmbedRequest{Model: "m", Inputs: []string{"a"}}
			for call := range 2 {
				if emb, err := p.(provider.Embedder).Embed(t.Context(), req); err != nil || !slices.Equal(emb.Vectors[0], []float32{0.5, 0.25}) {
					t.Fatalf("call %d: %v, %v; want the floats", call+1, emb, err)
				}
			}
			var formats []string
			for _, r := range up.Requests() {
				var body struct {
					EncodingFormat string `json:"encoding_format"`
				}
				_ = json.Unmarshal(r.Body, &body)
				formats = append(formats, body.EncodingFormat)
			}
			if want := []string{"base64", "float", "float"}; !slices.Equal(formats, want) {
				t.Errorf("encoding_format of the requests %q, want %q", formats, want)
			}
		})
	}

	up := pt.Replay(t, pt.Reply{Status: http.StatusBadRequest, Body: []byte(
		`{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":null}}`)})
	p, err := openai.New(provider.Config{Name: "openai", Kind: openai.Kind, BaseURL: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.(provider.Embedder).Embed(t.Context(), &provider.EmbedRequest{Model: "m", Inputs: []string{"a"}})
	if pe, _ := errors.AsType[*provider.Error](err); pe == nil || pe.Status != http.StatusBadRequest || len(up.Requests()) != 1 {
		t.Errorf("a 400 not about base64: %v after %d requests, want its error after one", err, len(up.Requests()))
	}
}

// TestEmbedErrors: an error status goes through the adapter's error
// table; an owned key in provider_options is refused before any request;
// a reply that leaves an input without its vector, whose vectors are not
// of one length, or not of the length asked for, is a protocol error.
func TestEmbedErrors(t *testing.T) {
	replies := []pt.Reply{
		{Status: http.StatusTooManyRequests, Body: []byte(`{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`)},
		pt.JSON([]byte(`{"data":[{"index":0,"embedding":[1]}],"usage":{"prompt_tokens":1}}`)),
		// A server that does not shorten vectors (and does not say so).
		pt.JSON([]byte(`{"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[4,5,6]}],"usage":{"prompt_tokens":1}}`)),
	}
	up := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply { return replies[n] })
	p, err := openai.New(provider.Config{Name: "openai", Kind: openai.Kind, BaseURL: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := p.(provider.Embedder)
	req := &provider.EmbedRequest{Model: "m", Inputs: []string{"a", "b"}}

	_, err = e.Embed(t.Context(), req)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Status != 429 || pe.FailureClass() != provider.ClassQuotaExhausted {
		t.Errorf("a 429 insufficient_quota: %v, want a provider error of class quota exhausted", err)
	}

	if _, err = e.Embed(t.Context(), req); !errors.As(err, &pe) || pe.Kind != provider.KindProtocol {
		t.Errorf("one vector for two inputs: %v, want a protocol error", err)
	}

	if _, err = e.Embed(t.Context(), &provider.EmbedRequest{Model: "m", Inputs: []string{"a", "b"}, Dimensions: 2}); !errors.As(err, &pe) || pe.Kind != provider.KindProtocol {
		t.Errorf("vectors of 3 values when 2 were asked for: %v, want a protocol error", err)
	}

	n := len(up.Requests())
	_, err = e.Embed(t.Context(), &provider.EmbedRequest{Model: "m", Inputs: []string{"a"}, Options: map[string]any{"input": "x"}})
	var fe *provider.FieldError
	if more := len(up.Requests()) - n; !errors.As(err, &fe) || fe.Field != "provider_options.input" || more != 0 {
		t.Errorf("provider_options.input: %v after %d requests, want a FieldError and no request", err, more)
	}
}

// TestEmbedReplyBounds: what an embeddings reply holds is bounded as it
// is decoded: no more entries than inputs, no more than
// provider.MaxEmbeddingDimensions values in a vector; past either, the
// attempt fails with a protocol error whose provider.EmbeddingBoundError
// names the bound, without reading further.
func TestEmbedReplyBounds(t *testing.T) {
	long := `[0` + strings.Repeat(`,0`, provider.MaxEmbeddingDimensions) + `]`
	longBase64 := base64.StdEncoding.EncodeToString(make([]byte, 4*(provider.MaxEmbeddingDimensions+1)))
	for _, tc := range []struct {
		name   string
		inputs int
		reply  string
		bound  provider.EmbeddingBound
		limit  int
	}{
		{"an entry more than inputs", 2, `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[2]},{"index":2,"embedding":[3]}]}`,
			provider.BoundVectors, 2},
		{"a vector of one value past the most dimensions", 1, `{"data":[{"index":0,"embedding":` + long + `}]}`,
			provider.BoundDimensions, provider.MaxEmbeddingDimensions},
		{"a base64 vector of one value past the most dimensions", 1, `{"data":[{"index":0,"embedding":"` + longBase64 + `"}]}`,
			provider.BoundDimensions, provider.MaxEmbeddingDimensions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := pt.Replay(t, pt.JSON([]byte(tc.reply)))
			p, err := openai.New(provider.Config{Name: "openai", Kind: openai.Kind, BaseURL: up.URL})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.(provider.Embedder).Embed(t.Context(), &provider.EmbedRequest{Model: "m", Inputs: make([]string, tc.inputs)})
			pe, _ := errors.AsType[*provider.Error](err)
			be, _ := errors.AsType[*provider.EmbeddingBoundError](err)
			if pe == nil || pe.Kind != provider.KindProtocol || be == nil || be.Bound != tc.bound || be.Limit != tc.limit {
				t.Errorf("%v, want a protocol error past %d %s", err, tc.limit, tc.bound)
			}
		})
	}
}

// TestEmbedMalformedReplies: a reply that is not OpenAI's JSON, or is cut
// short, fails the attempt: a protocol error (ErrMalformed) for what the
// provider sent, a transport error (retried as a dropped connection is)
// when the connection dropped mid-reply.
func TestEmbedMalformedReplies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply pt.Reply
		kind  provider.ErrorKind
	}{
		{"not JSON", pt.JSON([]byte(`<html>Bad gateway</html>`)), provider.KindProtocol},
		{"cut mid-vector", pt.JSON([]byte(`{"data":[{"index":0,"embedding":[0.1,`)), provider.KindProtocol},
		{"a string for a value", pt.JSON([]byte(`{"data":[{"index":0,"embedding":[0.1,"0.2"]}]}`)), provider.KindProtocol},
		{"a value past float32's range", pt.JSON([]byte(`{"data":[{"index":0,"embedding":[1e39]}]}`)), provider.KindProtocol},
		{"a fractional index", pt.JSON([]byte(`{"data":[{"index":0.5,"embedding":[1]}]}`)), provider.KindProtocol},
		{"data after the reply", pt.JSON([]byte(`{"data":[{"index":0,"embedding":[1]}]} {}`)), provider.KindProtocol},
		{"the connection dropped mid-vector", pt.Reply{Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte("{\"data\":[{\"index\":0,\n\n\"embedding\":[0.1,\n\n0.2]}]}"), After: 1, Fault: pt.FaultDrop}, provider.KindTransport},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := pt.Replay(t, tc.reply)
			p, err := openai.New(provider.Config{Name: "openai", Kind: openai.Kind, BaseURL: up.URL})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.(provider.Embedder).Embed(t.Context(), &provider.EmbedRequest{Model: "m", Inputs: []string{"a"}})
			pe, _ := errors.AsType[*provider.Error](err)
			if pe == nil || pe.Kind != tc.kind || (tc.kind == provider.KindProtocol && !errors.Is(err, httpx.ErrMalformed)) {
				t.Errorf("%v, want a provider error of kind %v", err, tc.kind)
			}
		})
	}
}

// TestEmbedBase64Checks: a base64 vector ("AACAPwAAAEA=", [1, 2]) decodes;
// one beside it that is not base64, not a whole number of float32s, holds
// a NaN (which JSON, the HTTP door's reply, cannot carry) or is cut short
// is a reply that does not decode (ErrMalformed), and one of another
// length than the others or than asked for a protocol error too.
func TestEmbedBase64Checks(t *testing.T) {
	const good = `"AACAPwAAAEA="`
	reply := func(second string) pt.Reply {
		return pt.JSON([]byte(`{"data":[{"index":0,"embedding":` + good + `},{"index":1,"embedding":` + second + `}]}`))
	}
	for _, tc := range []struct {
		name      string
		second    string
		dims      int
		malformed bool
	}{
		{"not base64", `"AAC*PwAAAEA="`, 0, true},
		{"3 bytes", `"AACA"`, 0, true},
		{"6 bytes", `"AACAPwAA"`, 0, true},
		{"a NaN", `"AACAPwAAwH8="`, 0, true},
		{"an infinity", `"AACAPwAAgH8="`, 0, true},
		{"data after the padding", `"AACAPwAAAEA=AAAA"`, 0, true},
		{"cut short", `"AACAPwAA`, 0, true},
		{"one value beside two", `"AACAPw=="`, 0, false},
		{"two values when three were asked for", good, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
				if n == 0 {
					return reply(good)
				}
				return reply(tc.second)
			})
			p, err := openai.New(provider.Config{Name: "openai", Kind: openai.Kind, BaseURL: up.URL})
			if err != nil {
				t.Fatal(err)
			}
			e := p.(provider.Embedder)
			emb, err := e.Embed(t.Context(), &provider.EmbedRequest{Model: "m", Inputs: []string{"a", "b"}})
			if err != nil || !slices.Equal(emb.Vectors[0], []float32{1, 2}) || !slices.Equal(emb.Vectors[1], []float32{1, 2}) {
				t.Fatalf("two of %s: %v, %v; want [1 2] twice", good, emb, err)
			}
			_, err = e.Embed(t.Context(), &provider.EmbedRequest{Model: "m", Inputs: []string{"a", "b"}, Dimensions: tc.dims})
			pe, _ := errors.AsType[*provider.Error](err)
			if pe == nil || pe.Kind != provider.KindProtocol || errors.Is(err, httpx.ErrMalformed) != tc.malformed {
				t.Errorf("%s beside %s: %v, want a protocol error (malformed: %v)", tc.second, good, err, tc.malformed)
			}
		})
	}
}
