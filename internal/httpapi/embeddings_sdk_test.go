package httpapi_test

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/mock"
)

// TestOpenAISDKEmbeddings drives POST /v1/embeddings with openai-go's
// client.Embeddings.New, unchanged but for base URL and key: float and
// base64 vectors come out the same (the mock's, in order, of the
// dimensions asked for), with the usage; a token array is a typed 400;
// a model that cannot embed is a 400 naming the reason.
func TestOpenAISDKEmbeddings(t *testing.T) {
	base, _ := doors(t, nil)
	client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey))
	inputs := []string{"the quick brown fox", "jumps"}
	for _, enc := range []openai.EmbeddingNewParamsEncodingFormat{openai.EmbeddingNewParamsEncodingFormatFloat, openai.EmbeddingNewParamsEncodingFormatBase64} {
		t.Run(string(enc), func(t *testing.T) {
			resp, err := client.Embeddings.New(ctxOf(t), openai.EmbeddingNewParams{
				Model:          "mock/echo",
				Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs},
				Dimensions:     openai.Int(12),
				EncodingFormat: enc,
				User:           openai.String("u-7"),
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Data) != 2 || resp.Model != "mock/echo" || resp.Usage.PromptTokens != 5 || resp.Usage.TotalTokens != 5 {
				t.Fatalf("reply: %d embeddings of %s, usage %+v", len(resp.Data), resp.Model, resp.Usage)
			}
			for i, d := range resp.Data {
				want := mock.Vector(inputs[i], 12)
				if d.Index != int64(i) || len(d.Embedding) != 12 {
					t.Fatalf("data[%d]: index %d, %d values", i, d.Index, len(d.Embedding))
				}
				// The wire form asked for: a JSON string of the float32
				// values' bytes for base64, an array for float.
				wire := "["
				if enc == openai.EmbeddingNewParamsEncodingFormatBase64 {
					wire = `"`
				}
				if raw := d.JSON.Embedding.Raw(); !strings.HasPrefix(raw, wire) {
					t.Fatalf("data[%d].embedding went as %.20s, want %s...", i, raw, wire)
				}
				for j, v := range d.Embedding {
					if float32(v) != want[j] || math.IsNaN(v) {
						t.Fatalf("data[%d].embedding[%d] = %v, want %v", i, j, v, want[j])
					}
				}
			}
		})
	}
	t.Run("a single string", func(t *testing.T) {
		resp, err := client.Embeddings.New(ctxOf(t), openai.EmbeddingNewParams{
			Model: "mock/echo", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello")}})
		if err != nil || len(resp.Data) != 1 || len(resp.Data[0].Embedding) != mock.DefaultEmbedDimensions {
			t.Fatalf("%v, %v", resp, err)
		}
	})
	for _, tt := range []struct {
		name   string
		params openai.EmbeddingNewParams
		status int
		code   string
		param  string
	}{
		{"token arrays", openai.EmbeddingNewParams{Model: "mock/echo", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokens: []int64{1, 2}}},
			http.StatusBadRequest, "invalid_request", "input[0]"},
		{"an empty input", openai.EmbeddingNewParams{Model: "mock/echo", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", ""}}},
			http.StatusBadRequest, "invalid_request", "input[1]"},
		{"a model that cannot embed", openai.EmbeddingNewParams{Model: "claude/claude-x", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("a")}},
			http.StatusBadRequest, "embeddings_not_supported", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("EMBED_SDK_ANTHROPIC_KEY", "k")
			base, _ := doors(t, func(cfg *config.Config) {
				// Never reached: the engine refuses the call first.
				cfg.Providers = append(cfg.Providers, provider.Config{Name: "claude", Kind: "anthropic", BaseURL: "http://127.0.0.1:9",
					APIKeyEnv: "EMBED_SDK_ANTHROPIC_KEY", Models: []string{"claude-x"}})
			})
			c := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))
			_, err := c.Embeddings.New(ctxOf(t), tt.params)
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.status || apiErr.Code != tt.code || apiErr.Param != tt.param {
				t.Fatalf("%v, want %d %s on %q", err, tt.status, tt.code, tt.param)
			}
			if tt.code == "embeddings_not_supported" && !strings.Contains(apiErr.Message, "anthropic") {
				t.Errorf("message %q does not name the provider's kind", apiErr.Message)
			}
		})
	}
}
