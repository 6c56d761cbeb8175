package anthropic_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/anthropic"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

// fixtures plays every conformance scenario from testdata/, in the wire
// format of Anthropic's Messages streaming API: named events, pings, JSON
// with padding whitespace, `event: error` under HTTP 200, 529 overloaded.
var fixtures = map[pt.Scenario]pt.Fixture{
	pt.Text:      {File: "text.sse"},
	pt.ToolCalls: {File: "tool_calls.sse"},
	pt.RateLimited: {File: "error_429.json", Status: 429, Header: map[string]string{
		"Retry-After": "2", "X-Should-Retry": "true", "Request-Id": "req_011CUzK9tq3PcYb5gq6Zg1Rp",
		"Anthropic-Ratelimit-Input-Tokens-Limit": "50", "Anthropic-Ratelimit-Input-Tokens-Remaining": "0",
	}},
	pt.ServerError:       {File: "error_500.json", Status: 500},
	pt.Overloaded:        {File: "error_529.json", Status: 529, Header: map[string]string{"X-Should-Retry": "true"}},
	pt.BadRequest:        {File: "error_400.json", Status: 400},
	pt.Unauthorized:      {File: "error_401.json", Status: 401},
	pt.InStreamError:     {File: "in_stream_error.sse"},
	pt.Drop:              {File: "text.sse", After: 5, Fault: pt.FaultDrop},
	pt.Malformed:         {File: "malformed.sse"},
	pt.Cut:               {File: "cut_mid_event.sse"},
	pt.MissingTerminator: {File: "missing_terminator.sse"},
	pt.Stall:             {File: "text.sse", After: 5, Fault: pt.FaultStall},
}

const (
	testKey    = "sk-ant-test-0123456789abcdef"
	testKeyEnv = "LLMRELAY_TEST_ANTHROPIC_KEY"
)

func newProvider(t *testing.T, baseURL string) provider.Provider {
	return pt.HTTPProvider(t, anthropic.New, provider.Config{Name: "claude", Kind: anthropic.Kind, BaseURL: baseURL, APIKeyEnv: testKeyEnv}, testKey)
}

func TestConformance(t *testing.T) {
	pt.Run(t, pt.FixtureHarness(fixtures, newProvider))
}
