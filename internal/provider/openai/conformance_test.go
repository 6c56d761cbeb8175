package openai_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/openai"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

// fixtures plays every conformance scenario from testdata/, in the wire
// format of OpenAI's Chat Completions streaming API.
var fixtures = map[pt.Scenario]pt.Fixture{
	pt.Text:      {File: "text.sse"},
	pt.ToolCalls: {File: "tool_calls.sse"},
	pt.RateLimited: {File: "error_429.json", Status: 429, Header: map[string]string{
		"Retry-After-Ms": "2000", "Retry-After": "2", "X-Should-Retry": "true",
		"X-Ratelimit-Limit-Requests": "3", "X-Ratelimit-Remaining-Requests": "0", "X-Ratelimit-Reset-Requests": "20s",
	}},
	pt.ServerError:       {File: "error_500.json", Status: 500},
	pt.Overloaded:        {File: "error_503.json", Status: 503},
	pt.BadRequest:        {File: "error_400.json", Status: 400},
	pt.Unauthorized:      {File: "error_401.json", Status: 401},
	pt.InStreamError:     {File: "in_stream_error.sse"},
	pt.Drop:              {File: "text.sse", After: 3, Fault: pt.FaultDrop},
	pt.Malformed:         {File: "malformed.sse"},
	pt.Cut:               {File: "cut_mid_event.sse"},
	pt.MissingTerminator: {File: "missing_terminator.sse"},
	pt.Stall:             {File: "text.sse", After: 3, Fault: pt.FaultStall},
}

func newProvider(t *testing.T, baseURL string) provider.Provider {
	return pt.HTTPProvider(t, openai.New, provider.Config{Name: "openai", Kind: openai.Kind, BaseURL: baseURL, APIKeyEnv: "LLMRELAY_TEST_OPENAI_KEY"}, testKey)
}

const testKey = "sk-test-0123456789abcdef"

func TestConformance(t *testing.T) {
	pt.Run(t, pt.FixtureHarness(fixtures, newProvider))
}
