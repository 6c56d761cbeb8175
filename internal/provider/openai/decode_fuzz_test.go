package openai

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// FuzzDecode feeds the decoder arbitrary stream bodies, seeded with the
// fixtures in testdata; see providertest.FuzzDecode for what must hold.
func FuzzDecode(f *testing.F) {
	pt.FuzzDecode(f, "error", func() httpx.Decoder { return &decoder{} })
}
