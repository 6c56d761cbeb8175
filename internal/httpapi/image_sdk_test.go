package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// imagePNG is the inline image the SDKs send: PNG's signature.
var imagePNG = []byte("\x89PNG\r\n\x1a\n")

// imageUpstreams starts an openai and an anthropic upstream that reply
// with their text fixtures, and llmrelay's doors with them as providers
// "oai" and "claude".
func imageUpstreams(t *testing.T) (base string, oai, claude *pt.Upstream) {
	t.Helper()
	reply := func(path string) *pt.Upstream {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: body} })
	}
	oai, claude = reply("../provider/openai/testdata/text.sse"), reply("../provider/anthropic/testdata/text.sse")
	t.Setenv("LLMRELAY_TEST_UP_KEY", "sk-test")
	base, _ = doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers,
			provider.Config{Name: "oai", Kind: "openai", BaseURL: oai.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY"},
			provider.Config{Name: "claude", Kind: "anthropic", BaseURL: claude.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY"})
	})
	return base, oai, claude
}

// upstreamMessages returns the messages member of the only request u got.
func upstreamMessages(t *testing.T, u *pt.Upstream) string {
	t.Helper()
	reqs := u.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the upstream got %d requests, want 1", len(reqs))
	}
	var body struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	return string(body.Messages)
}

// TestSDKImages: openai-go's image_url content parts (a data: URL and an
// https URL, with detail) and anthropic-sdk-go's image blocks (base64 and
// url sources), between text, go through their doors to an upstream of
// their format as that format's image parts, in the order the
// application wrote them; and the mock's echo shows them in place.
func TestSDKImages(t *testing.T) {
	base, oai, claude := imageUpstreams(t)
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(imagePNG)

	oclient := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))
	oparams := func(model string) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{
			openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
				openai.TextContentPart("Compare "),
				openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL, Detail: "low"}),
				openai.TextContentPart(" with "),
				openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "https://example.com/cat.jpg"}),
				openai.TextContentPart("."),
			}),
		}}
	}
	t.Run("openai-go to an openai upstream", func(t *testing.T) {
		if _, err := oclient.Chat.Completions.New(ctxOf(t), oparams("oai/gpt-4o-mini")); err != nil {
			t.Fatal(err)
		}
		const want = `[{"role":"user","content":[{"type":"text","text":"Compare "},` +
			`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}},` +
			`{"type":"text","text":" with "},{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}},` +
			`{"type":"text","text":"."}]}]`
		if got := upstreamMessages(t, oai); got != want {
			t.Errorf("upstream messages\n %s\nwant\n %s", got, want)
		}
	})
	t.Run("openai-go to the mock's echo", func(t *testing.T) {
		c, err := oclient.Chat.Completions.New(ctxOf(t), oparams("mock/echo"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := c.Choices[0].Message.Content, "Compare [image image/png 8 bytes] with [image https://example.com/cat.jpg]."; got != want {
			t.Errorf("echo %q, want %q", got, want)
		}
	})

	t.Run("anthropic-sdk-go to an anthropic upstream", func(t *testing.T) {
		aclient := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0))
		_, err := aclient.Messages.New(ctxOf(t), anthropic.MessageNewParams{
			Model: "claude/claude-sonnet-4-5", MaxTokens: 256,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(
				anthropic.NewTextBlock("Compare "),
				anthropic.NewImageBlockBase64("image/png", base64.StdEncoding.EncodeToString(imagePNG)),
				anthropic.NewTextBlock(" with "),
				anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: "https://example.com/cat.jpg"}),
				anthropic.NewTextBlock("."),
			)},
		})
		if err != nil {
			t.Fatal(err)
		}
		const want = `[{"role":"user","content":[{"type":"text","text":"Compare "},` +
			`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},` +
			`{"type":"text","text":" with "},{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},` +
			`{"type":"text","text":"."}]}]`
		if got := upstreamMessages(t, claude); got != want {
			t.Errorf("upstream messages\n %s\nwant\n %s", got, want)
		}
	})

	t.Run("an http image URL is a 400 naming the content part", func(t *testing.T) {
		p := oparams("mock/echo")
		p.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("Look: "),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "http://example.com/cat.jpg"}),
		})}
		_, err := oclient.Chat.Completions.New(ctxOf(t), p)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != "messages[0].content[1].image_url.url" {
			t.Fatalf("error %v, want a 400 naming messages[0].content[1].image_url.url", err)
		}
	})
}

// TestOpenAIResponsesSDKImages: openai-go's Responses client, unchanged
// but for its base URL, sends input_image parts (a data: URL and an https
// URL, with detail) between input_text parts; they reach an openai
// upstream as image_url parts in the application's order, exactly as the
// Chat Completions door sends them, and the mock's echo shows them in
// place. An image by file_id, and an http URL, are 400s naming the part's
// member.
func TestOpenAIResponsesSDKImages(t *testing.T) {
	base, oai, _ := imageUpstreams(t)
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(imagePNG)
	client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))
	image := func(url string, detail responses.ResponseInputImageDetail) responses.ResponseInputContentUnionParam {
		p := responses.ResponseInputContentParamOfInputImage(detail)
		p.OfInputImage.ImageURL = openai.String(url)
		return p
	}
	params := func(model string, content ...responses.ResponseInputContentUnionParam) responses.ResponseNewParams {
		return responses.ResponseNewParams{Model: model, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam(content), responses.EasyInputMessageRoleUser),
		}}}
	}
	compare := []responses.ResponseInputContentUnionParam{
		responses.ResponseInputContentParamOfInputText("Compare "),
		image(dataURL, responses.ResponseInputImageDetailLow),
		responses.ResponseInputContentParamOfInputText(" with "),
		image("https://example.com/cat.jpg", responses.ResponseInputImageDetailAuto),
		responses.ResponseInputContentParamOfInputText("."),
	}

	t.Run("to an openai upstream", func(t *testing.T) {
		if _, err := client.Responses.New(ctxOf(t), params("oai/gpt-4o-mini", compare...)); err != nil {
			t.Fatal(err)
		}
		const want = `[{"role":"user","content":[{"type":"text","text":"Compare "},` +
			`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}},` +
			`{"type":"text","text":" with "},{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg","detail":"auto"}},` +
			`{"type":"text","text":"."}]}]`
		if got := upstreamMessages(t, oai); got != want {
			t.Errorf("upstream messages\n %s\nwant\n %s", got, want)
		}
	})
	t.Run("to the mock's echo", func(t *testing.T) {
		r, err := client.Responses.New(ctxOf(t), params("mock/echo", compare...))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := r.OutputText(), "Compare [image image/png 8 bytes] with [image https://example.com/cat.jpg]."; got != want {
			t.Errorf("echo %q, want %q", got, want)
		}
	})

	byFile := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
	byFile.OfInputImage.FileID = openai.String("file-abc")
	for _, tc := range []struct {
		name, param string
		image       responses.ResponseInputContentUnionParam
	}{
		{"an image by file_id", "input[0].content[1].file_id", byFile},
		{"an http image URL", "input[0].content[1].image_url", image("http://example.com/cat.jpg", responses.ResponseInputImageDetailAuto)},
		{"an https image URL without a host", "input[0].content[1].image_url", image("https:///cat.jpg", responses.ResponseInputImageDetailAuto)},
		{"a data: URL of a BMP", "input[0].content[1].image_url", image("data:image/bmp;base64,Qk0=", responses.ResponseInputImageDetailAuto)},
	} {
		t.Run(tc.name+" is a 400 naming the part's member", func(t *testing.T) {
			_, err := client.Responses.New(ctxOf(t), params("mock/echo", responses.ResponseInputContentParamOfInputText("Look: "), tc.image))
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Type != "invalid_request_error" || apiErr.Param != tc.param {
				t.Fatalf("error %v, want a 400 invalid_request_error naming %s", err, tc.param)
			}
		})
	}
}

// TestAnthropicSDKImageOfAnotherType: PNG bytes labelled image/jpeg,
// which Anthropic refuses with a 400 after a round trip, are refused by
// llmrelay before any upstream request: a 400 naming the message (the
// door names an engine field by its message) and both types.
func TestAnthropicSDKImageOfAnotherType(t *testing.T) {
	base, _, claude := imageUpstreams(t)
	aclient := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0))
	_, err := aclient.Messages.New(ctxOf(t), anthropic.MessageNewParams{
		Model: "claude/claude-sonnet-4-5", MaxTokens: 256,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(
			anthropic.NewTextBlock("What is this?"),
			anthropic.NewImageBlockBase64("image/jpeg", base64.StdEncoding.EncodeToString(imagePNG)))},
	})
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		t.Fatalf("error %v, want a 400", err)
	}
	body := apiErr.RawJSON()
	for _, want := range []string{`"messages[0]: holds image/png data, but media_type says image/jpeg"`} {
		if !strings.Contains(body, want) {
			t.Errorf("error %s does not say %q", body, want)
		}
	}
	if n := len(claude.Requests()); n != 0 {
		t.Errorf("the upstream got %d requests, want none", n)
	}
}

// TestOpenAISDKImageDetailOriginal: openai-go's detail "original" (an
// image_url part's, an input_image part's) goes through both OpenAI doors
// to an openai upstream as detail "original"; an anthropic upstream, whose
// API has no detail, gets the image without it.
func TestOpenAISDKImageDetailOriginal(t *testing.T) {
	chat := func(base, model string) error {
		client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))
		_, err := client.Chat.Completions.New(ctxOf(t), openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{
			openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
				openai.TextContentPart("Read "),
				openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "https://example.com/scan.png", Detail: "original"}),
			}),
		}})
		return err
	}
	respond := func(base, model string) error {
		client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))
		image := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailOriginal)
		image.OfInputImage.ImageURL = openai.String("https://example.com/scan.png")
		_, err := client.Responses.New(ctxOf(t), responses.ResponseNewParams{Model: model, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
				responses.ResponseInputContentParamOfInputText("Read "), image,
			}, responses.EasyInputMessageRoleUser),
		}}})
		return err
	}
	const toOpenAI = `[{"role":"user","content":[{"type":"text","text":"Read "},` +
		`{"type":"image_url","image_url":{"url":"https://example.com/scan.png","detail":"original"}}]}]`
	const toAnthropic = `[{"role":"user","content":[{"type":"text","text":"Read "},` +
		`{"type":"image","source":{"type":"url","url":"https://example.com/scan.png"}}]}]`
	for _, door := range []struct {
		name string
		call func(base, model string) error
	}{{"chat completions", chat}, {"responses", respond}} {
		t.Run(door.name+" to an openai upstream", func(t *testing.T) {
			base, oai, _ := imageUpstreams(t)
			if err := door.call(base, "oai/gpt-5.4"); err != nil {
				t.Fatal(err)
			}
			if got := upstreamMessages(t, oai); got != toOpenAI {
				t.Errorf("upstream messages\n %s\nwant\n %s", got, toOpenAI)
			}
		})
		t.Run(door.name+" to an anthropic upstream", func(t *testing.T) {
			base, _, claude := imageUpstreams(t)
			if err := door.call(base, "claude/claude-sonnet-4-5"); err != nil {
				t.Fatal(err)
			}
			if got := upstreamMessages(t, claude); got != toAnthropic {
				t.Errorf("upstream messages\n %s\nwant\n %s", got, toAnthropic)
			}
		})
	}
}
