package httpapi_test

import (
	"encoding/base64"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// TestAnthropicSDKToolResultImages: anthropic-sdk-go's tool_result block
// with text and image content (a computer-use tool's screenshot: a base64
// source and a url source) goes through the Anthropic door to an
// anthropic upstream as a tool_result whose content is the same blocks,
// in order; the user's text after it stays in the same user turn.
func TestAnthropicSDKToolResultImages(t *testing.T) {
	base, _, claude := imageUpstreams(t)
	aclient := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0))
	result := anthropic.ToolResultBlockParam{ToolUseID: "toolu_1", Content: []anthropic.ToolResultBlockParamContentUnion{
		{OfText: &anthropic.TextBlockParam{Text: "Screen: "}},
		{OfImage: &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{
			OfBase64: &anthropic.Base64ImageSourceParam{MediaType: "image/png", Data: base64.StdEncoding.EncodeToString(imagePNG)}}}},
		{OfText: &anthropic.TextBlockParam{Text: " and "}},
		{OfImage: &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{
			OfURL: &anthropic.URLImageSourceParam{URL: "https://example.com/cat.jpg"}}}},
	}}
	_, err := aclient.Messages.New(ctxOf(t), anthropic.MessageNewParams{
		Model: "claude/claude-sonnet-4-5", MaxTokens: 256,
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "screenshot", InputSchema: anthropic.ToolInputSchemaParam{}}}},
		Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("Open the page")),
			anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("toolu_1", map[string]any{}, "screenshot")),
			anthropic.NewUserMessage(anthropic.ContentBlockParamUnion{OfToolResult: &result}, anthropic.NewTextBlock("What changed?")),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"role":"user","content":[{"type":"text","text":"Open the page"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"screenshot","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"Screen: "},` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},` +
		`{"type":"text","text":" and "},{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}}]},` +
		`{"type":"text","text":"What changed?"}]}]`
	if got := upstreamMessages(t, claude); got != want {
		t.Errorf("upstream messages\n %s\nwant\n %s", got, want)
	}
}

// TestOpenAIResponsesSDKToolResultImages: openai-go's function_call_output
// with a list output of input_text and input_image items goes through the
// Responses door and, Chat Completions' tool messages taking text only,
// reaches an openai upstream as the tool message's text and a user message
// after it with the images, in order, each with its detail.
func TestOpenAIResponsesSDKToolResultImages(t *testing.T) {
	base, oai, _ := imageUpstreams(t)
	client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))
	image := func(url string, detail responses.ResponseInputImageContentDetail) responses.ResponseFunctionCallOutputItemUnionParam {
		return responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: openai.String(url), Detail: detail}}
	}
	output := responses.ResponseFunctionCallOutputItemListParam{
		responses.ResponseFunctionCallOutputItemParamOfInputText("Screen: "),
		image("data:image/png;base64,"+base64.StdEncoding.EncodeToString(imagePNG), responses.ResponseInputImageContentDetailLow),
		image("https://example.com/cat.jpg", ""),
	}
	_, err := client.Responses.New(ctxOf(t), responses.ResponseNewParams{
		Model: "oai/gpt-4o-mini",
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "screenshot", Parameters: map[string]any{"type": "object"}}}},
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Open the page", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfFunctionCall("{}", "call_1", "screenshot"),
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String("call_1"),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfResponseFunctionCallOutputItemArray: output}}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"role":"user","content":"Open the page"},` +
		`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"screenshot","arguments":"{}"}}]},` +
		`{"role":"tool","content":"Screen: ","tool_call_id":"call_1"},` +
		`{"role":"user","content":[{"type":"text","text":"Images in the result of tool call call_1:"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}},` +
		`{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}}]}]`
	if got := upstreamMessages(t, oai); got != want {
		t.Errorf("upstream messages\n %s\nwant\n %s", got, want)
	}
}
