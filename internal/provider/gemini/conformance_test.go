package gemini_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/gemini"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

// fixtures plays every conformance scenario from testdata/, in the wire
// format of the Gemini API's streamGenerateContent?alt=sse: "\r\n" line
// ends, no terminator (the stream ends at EOF after a finishReason), and
// errors as google.rpc.Status bodies with RetryInfo and no rate-limit
// headers.
var fixtures = map[pt.Scenario]pt.Fixture{
	pt.Text:              {File: "text.sse"},
	pt.ToolCalls:         {File: "tool_calls.sse"},
	pt.RateLimited:       {File: "error_429.json", Status: 429},
	pt.ServerError:       {File: "error_500.json", Status: 500},
	pt.Overloaded:        {File: "error_503.json", Status: 503},
	pt.BadRequest:        {File: "error_400.json", Status: 400},
	pt.Unauthorized:      {File: "error_401.json", Status: 401},
	pt.InStreamError:     {File: "in_stream_error.sse"},
	pt.Drop:              {File: "text.sse", After: 2, Fault: pt.FaultDrop},
	pt.Malformed:         {File: "malformed.sse"},
	pt.Cut:               {File: "cut_mid_event.sse"},
	pt.MissingTerminator: {File: "missing_terminator.sse"},
	pt.Stall:             {File: "text.sse", After: 2, Fault: pt.FaultStall},
}

const (
	testKey    = "AIzaSyTest0123456789abcdef"
	testKeyEnv = "LLMRELAY_TEST_GEMINI_KEY"
)

func newProvider(t *testing.T, baseURL string) provider.Provider {
	return pt.HTTPProvider(t, gemini.New, provider.Config{Name: "gemini", Kind: gemini.Kind, BaseURL: baseURL, APIKeyEnv: testKeyEnv}, testKey)
}

func TestConformance(t *testing.T) {
	pt.Run(t, pt.FixtureHarness(fixtures, newProvider))
}
