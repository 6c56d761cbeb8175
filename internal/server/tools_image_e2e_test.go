package server_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/servertools/mcptest"
)

// anthropicSSE is a Messages API stream of the given events, each a JSON
// object with its "type".
func anthropicSSE(events ...string) []byte {
	var b strings.Builder
	for _, ev := range events {
		typ := ev[len(`{"type":"`):]
		typ = typ[:strings.IndexByte(typ, '"')]
		b.WriteString("event: " + typ + "\ndata: " + ev + "\n\n")
	}
	return []byte(b.String())
}

// TestServerToolImageResultToAnAnthropicUpstream: server-everything's
// get-tiny-image returns text, a PNG and text; llmrelay sends the model
// the PNG as an image among the text (Anthropic: the tool_result block's
// content is text, image, text blocks, byte for byte as below), the
// transcript's ROLE_TOOL message carries it as an image part, and the
// tool_result event says where it is and what it is, without its bytes.
func TestServerToolImageResultToAnAnthropicUpstream(t *testing.T) {
	e := mcptest.StartEverything(t)
	u := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
		if n == 0 {
			return pt.Reply{Body: anthropicSSE(
				`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5-20251001","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"everything__get-tiny-image","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}`,
				`{"type":"message_stop"}`,
			)}
		}
		return pt.Reply{Body: anthropicSSE(
			`{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-haiku-4-5-20251001","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1650,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"A tiny MCP logo."}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":6}}`,
			`{"type":"message_stop"}`,
		)}
	})
	t.Setenv("LLMRELAY_TEST_ANTHROPIC_KEY", "sk-ant-test")
	cfg := toolsConfig(everythingServer(e))
	cfg.Providers = []provider.Config{{Name: "claude", Kind: "anthropic", BaseURL: u.URL, APIKeyEnv: "LLMRELAY_TEST_ANTHROPIC_KEY"}}
	cfg.Streaming.CoalesceDeltas = false // one event per upstream event, however fast the test reads
	in := servertest.Start(t, cfg)
	events, err := servertest.Collect(t.Context(), in.Client, &llmrelayv1.GenerateRequest{
		Model:       "claude/claude-haiku-4-5-20251001",
		Messages:    []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "Show me the MCP logo."}},
		ServerTools: []string{"everything/get-tiny-image"},
		Retry:       &llmrelayv1.RetryPolicy{MaxAttempts: 1},
	})
	if err != nil {
		t.Fatalf("Generate: %v (events %v)", err, eventLines(events))
	}
	const text = "Here's the image you requested:\nThe image above is the MCP logo."
	checkEvents(t, events, []string{
		`t1 a1 call 0 toolu_01 everything__get-tiny-image `,
		`t1 a1 call 0   {}`,
		`t1 a1 result toolu_01 everything/get-tiny-image "` + strings.ReplaceAll(text, "\n", `\n`) + `"`,
		`t2 a2 text "A tiny MCP logo."`,
		`t2 a2 final turns=2 attempts=2 FINISH_REASON_STOP "A tiny MCP logo."`,
	})

	// The transcript's result carries the image, in its place.
	tool := final(t, events).GetTranscript()[1]
	parts := tool.GetParts()
	if tool.GetContent() != text || len(parts) != 3 || parts[0].GetText() != "Here's the image you requested:" ||
		parts[1].GetImage().GetMediaType() != "image/png" || parts[2].GetText() != "\nThe image above is the MCP logo." {
		b, _ := protojson.Marshal(tool)
		t.Fatalf("the transcript's tool message: %.600s", b)
	}
	png := parts[1].GetImage().GetData()
	// server-everything's MCP_TINY_IMAGE (the pinned version's).
	if sum := sha256.Sum256(png); hex.EncodeToString(sum[:]) != tinyImageSHA256 {
		t.Errorf("the image's sha256 is %x, want server-everything's tiny image", sum)
	}

	// The event says where the image is and what it is, not its bytes.
	var result *llmrelayv1.ToolResult
	for _, ev := range events {
		if r := ev.GetToolResult(); r != nil {
			result = r
		}
	}
	want := &llmrelayv1.ToolResultImage{Offset: uint32(len("Here's the image you requested:")), MediaType: "image/png", Size: uint32(len(png))}
	if imgs := result.GetImages(); len(imgs) != 1 || !proto.Equal(imgs[0], want) {
		t.Errorf("the tool_result event's images: %v, want [%v]", imgs, want)
	}

	// The second turn sends it to the model as an image block of the
	// tool_result, between the text blocks.
	reqs := u.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the upstream got %d requests, want 2", len(reqs))
	}
	wantBody := `{"model":"claude-haiku-4-5-20251001","max_tokens":4096,"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"Show me the MCP logo."}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"everything__get-tiny-image","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":[` +
		`{"type":"text","text":"Here's the image you requested:"},` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + base64.StdEncoding.EncodeToString(png) + `"}},` +
		`{"type":"text","text":"\nThe image above is the MCP logo."}]}]}],` +
		`"stream":true,"tools":[{"name":"everything__get-tiny-image","description":"Returns a tiny MCP logo image.",` +
		`"input_schema":{"$schema":"http://json-schema.org/draft-07/schema#","properties":{},"type":"object"}}],"tool_choice":{"type":"auto"}}`
	if got := string(reqs[1].Body); got != wantBody {
		t.Errorf("the second turn's request:\n%s\nwant:\n%s", got, wantBody)
	}
}

// tinyImageSHA256 is the sha256 of server-everything's tiny image (PNG).
const tinyImageSHA256 = "4466be3b7a0e51778f8634f5e984197ec35c748caf4c3b32763f89c577d29614"
