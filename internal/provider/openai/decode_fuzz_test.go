package openai

import (
	"strconv"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// FuzzDecode feeds the decoder arbitrary stream bodies, seeded with the
// fixtures in testdata; see providertest.FuzzDecode for what must hold.
// Generated call ids count from call_gen_0 per decoder, so that two
// decodings of a body compare equal.
func FuzzDecode(f *testing.F) {
	pt.FuzzDecode(f, "error", func() httpx.Decoder {
		n := 0
		return &decoder{newID: func() string { n++; return "call_gen_" + strconv.Itoa(n-1) }}
	})
}
