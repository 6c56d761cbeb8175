package gemini

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// FuzzDecode feeds the decoder arbitrary stream bodies, seeded with the
// fixtures in testdata; see providertest.FuzzDecode for what must hold.
// Generated call ids count from call_0 per decoder (numberedIDs), so that
// two decodings of a body compare equal.
func FuzzDecode(f *testing.F) {
	pt.FuzzDecode(f, "", func() httpx.Decoder { return &decoder{newID: numberedIDs()} })
}
