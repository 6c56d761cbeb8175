package httpapi_test

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
)

// TestAnthropicSDKToolResultIsError: anthropic-sdk-go's tool_result with
// is_error goes through the Anthropic door as a tool message with
// tool_error, and reaches an anthropic upstream still marked is_error, so
// that Claude knows the tool failed; a result without it stays unmarked.
func TestAnthropicSDKToolResultIsError(t *testing.T) {
	base, _, claude := imageUpstreams(t)
	aclient := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0))
	_, err := aclient.Messages.New(ctxOf(t), anthropic.MessageNewParams{
		Model: "claude/claude-sonnet-4-5", MaxTokens: 256,
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "weather", InputSchema: anthropic.ToolInputSchemaParam{}}}},
		Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris and Rome?")),
			anthropic.NewAssistantMessage(
				anthropic.NewToolUseBlock("toolu_1", map[string]any{"city": "Paris"}, "weather"),
				anthropic.NewToolUseBlock("toolu_2", map[string]any{"city": "Rome"}, "weather")),
			anthropic.NewUserMessage(
				anthropic.NewToolResultBlock("toolu_1", "upstream timeout", true),
				anthropic.NewToolResultBlock("toolu_2", "18C", false)),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"role":"user","content":[{"type":"text","text":"Weather in Paris and Rome?"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris"}},` +
		`{"type":"tool_use","id":"toolu_2","name":"weather","input":{"city":"Rome"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"upstream timeout","is_error":true},` +
		`{"type":"tool_result","tool_use_id":"toolu_2","content":"18C"}]}]`
	if got := upstreamMessages(t, claude); got != want {
		t.Errorf("upstream messages\n %s\nwant\n %s", got, want)
	}
}
