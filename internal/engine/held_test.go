package engine

import (
	"testing"
	"unsafe"

	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// TestHeldCallsObjectsStaySmall: the objects a call keeps for as long as
// its stream is held stay within the size classes docs/performance.md
// measured ("Smaller objects for what a held call keeps"). A field added
// to one of them moves it to the next class, which every held stream pays:
// make room for it, or measure and update the figures and this test.
func TestHeldCallsObjectsStaySmall(t *testing.T) {
	for _, o := range []struct {
		name       string
		size, most uintptr
	}{
		{"engine.call", unsafe.Sizeof(call{}), 288},
		{"engine.attemptResult", unsafe.Sizeof(attemptResult{}), 240},
		{"retry.Plan", unsafe.Sizeof(retry.Plan{}), 240},
		{"retry.Attempt", unsafe.Sizeof(retry.Attempt{}), 144},
		{"callinfo.Info", unsafe.Sizeof(callinfo.Info{}), 192},
		{"httpx.JSONDecoder", unsafe.Sizeof(httpx.JSONDecoder{}), 8},
	} {
		if o.size > o.most {
			t.Errorf("%s is %d bytes, more than the %d of its size class", o.name, o.size, o.most)
		}
	}
}
