package mock_test

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/mock"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// faults expresses every conformance scenario as the mock's fault for the
// first attempt. The mock runs in-process, with no wire to garble: a
// stream cut mid-event and a stream without its terminator are, for it,
// the dropped connection they are reported as, and a malformed event its
// malformed_after fault.
func faults(s pt.Scenario) map[string]any {
	text := map[string]any{"output": pt.WantText}
	switch s {
	case pt.Text:
		text["usage"] = usage(pt.WantTextUsage)
		return text
	case pt.ToolCalls:
		calls := make([]any, len(pt.WantToolCalls))
		for i, c := range pt.WantToolCalls {
			calls[i] = map[string]any{"id": c.ID, "name": c.Name, "arguments": c.Arguments}
		}
		return map[string]any{"output": pt.WantToolText, "tool_calls": calls, "usage": usage(pt.WantToolUsage)}
	case pt.RateLimited:
		return map[string]any{"status": 429.0, "retry_after_ms": float64(pt.WantRetryAfter.Milliseconds())}
	case pt.ServerError:
		return map[string]any{"status": 500.0}
	case pt.Overloaded:
		return map[string]any{"status": 529.0}
	case pt.BadRequest:
		return map[string]any{"status": 400.0}
	case pt.Unauthorized:
		return map[string]any{"status": 401.0}
	case pt.InStreamError:
		text["error_after"] = 2.0
	case pt.Drop, pt.Cut:
		text["drop_after"] = 2.0
	case pt.Malformed:
		text["malformed_after"] = 2.0
	case pt.MissingTerminator:
		text["drop_after"] = float64(len(mock.SplitWords(pt.WantText)))
	case pt.Stall:
		text["stall_after"] = 2.0
	}
	return text
}

func usage(u provider.Usage) map[string]any {
	return map[string]any{"input_tokens": float64(u.InputTokens), "output_tokens": float64(u.OutputTokens)}
}

func TestConformance(t *testing.T) {
	pt.Run(t, func(t *testing.T, s pt.Scenario) pt.Setup {
		req := pt.NewRequest(mock.ModelEcho)
		req.Options = map[string]any{"faults": []any{faults(s)}}
		return pt.Setup{Provider: mock.New(), Request: req}
	})
}
