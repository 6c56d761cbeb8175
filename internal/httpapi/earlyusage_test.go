package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/llmrelay/llmrelay/internal/config"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/retry/retrytest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// Anthropic's API reports the prompt's tokens in message_start, before the
// reply, and the reply's total in message_delta. Clients that read the
// input from message_start (LangChain's ChatAnthropic usage_metadata,
// dashboards, Claude Code's context accounting) saw 0 from llmrelay,
// which wrote message_start before anything and the usage only at the
// end.

// anthropicStart is an Anthropic upstream's stream up to its first text:
// its message_start reports 25 input tokens not cached and 5 read from
// the cache (and, as the real API does, a few output tokens already).
const anthropicStart = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","content":[],"model":"claude-up","stop_reason":null,"stop_sequence":null,` +
	`"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":1,"service_tier":"standard"}}}` + "\n\n" +
	"event: content_block_start\n" +
	`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: ping\n" + `data: {"type":"ping"}` + "\n\n"

// anthropicReply is a whole Anthropic stream: anthropicStart, two texts,
// and 12 output tokens in message_delta.
const anthropicReply = anthropicStart +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello "}}` + "\n\n" +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"there."}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: message_delta\n" +
	`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}` + "\n\n" +
	"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"

// anthropicOverloaded is an Anthropic stream that reports its usage, then
// fails before any text: an attempt the client never sees, whose usage
// counts.
const anthropicOverloaded = anthropicStart +
	"event: error\n" +
	`data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n"

// openAIReply is an OpenAI-format stream, which reports its usage in its
// last chunk only: 17 prompt tokens, 4 of them cached, 2 completion tokens.
const openAIReply = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-up","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello "},"finish_reason":null}]}` + "\n\n" +
	`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-up","choices":[{"index":0,"delta":{"content":"there."},"finish_reason":"stop"}]}` + "\n\n" +
	`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-up","choices":[],"usage":{"prompt_tokens":17,"completion_tokens":2,"total_tokens":19,"prompt_tokens_details":{"cached_tokens":4}}}` + "\n\n" +
	"data: [DONE]\n\n"

// upstreams starts llmrelay with an anthropic provider "claude" on claude
// and an openai provider "gpt" on gpt (either may be nil), the route
// "claude-then-gpt" over the two, instant waits between attempts, and its
// HTTP doors; it returns their base URL.
func upstreams(t *testing.T, claude, gpt *pt.Upstream) string {
	t.Helper()
	t.Setenv("LLMRELAY_TEST_ANTHROPIC_KEY", "sk-ant-test")
	t.Setenv("LLMRELAY_TEST_OPENAI_KEY", "sk-test")
	var b strings.Builder
	b.WriteString("providers:\n")
	if claude != nil {
		fmt.Fprintf(&b, "  - {name: claude, kind: anthropic, base_url: %q, api_key_env: LLMRELAY_TEST_ANTHROPIC_KEY, models: [claude-up]}\n", claude.URL)
	}
	if gpt != nil {
		fmt.Fprintf(&b, "  - {name: gpt, kind: openai, base_url: %q, api_key_env: LLMRELAY_TEST_OPENAI_KEY, models: [gpt-up]}\n", gpt.URL)
	}
	if claude != nil && gpt != nil {
		b.WriteString("routes:\n  - {name: claude-then-gpt, targets: [{model: claude/claude-up}, {model: gpt/gpt-up}]}\n")
	}
	cfg, err := config.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return servertest.Start(t, cfg, server.WithRetryTimer(retrytest.Instant{})).HTTP(t)
}

// sseEvent is one server-sent event of a door's stream, its data decoded.
type sseEvent struct {
	name string
	data map[string]any
}

// streamMessages posts a streamed Messages request for model and returns
// its events.
func streamMessages(t *testing.T, base, model string) []sseEvent {
	t.Helper()
	r := call(t, base, request{path: "/v1/messages", headers: map[string]string{"Anthropic-Version": "2023-06-01"},
		body: `{"model":"` + model + `","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`})
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var events []sseEvent
	sc := bufio.NewScanner(strings.NewReader(r.body))
	var name string
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			name = n
			continue
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			ev := sseEvent{name: name}
			if err := json.Unmarshal([]byte(d), &ev.data); err != nil {
				t.Fatalf("%s: %v", d, err)
			}
			events = append(events, ev)
		}
	}
	return events
}

// usageOf returns the usage object of a stream's message_start
// (message.usage) and of its message_delta (usage), as JSON.
func usageOf(t *testing.T, events []sseEvent) (start, end string) {
	t.Helper()
	for _, ev := range events {
		var u any
		switch ev.name {
		case "message_start":
			u = path(ev.data, "message.usage")
		case "message_delta":
			u = path(ev.data, "usage")
		default:
			continue
		}
		b, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if ev.name == "message_start" {
			start = string(b)
		} else {
			end = string(b)
		}
	}
	if start == "" || end == "" {
		t.Fatalf("no message_start or message_delta in %v", events)
	}
	return start, end
}

// TestMessageStartCarriesTheInputReportedSoFar: behind an Anthropic
// upstream, the door's message_start reports the input tokens the
// upstream's own message_start did (cache reads apart, as Anthropic counts
// them); message_delta reports the call's total, as the Final does.
func TestMessageStartCarriesTheInputReportedSoFar(t *testing.T) {
	t.Run("one attempt", func(t *testing.T) {
		up := pt.Replay(t, pt.Reply{Body: []byte(anthropicReply)})
		start, end := usageOf(t, streamMessages(t, upstreams(t, up, nil), "claude/claude-up"))
		// Output is message_delta's alone: a client that adds the two
		// (LangChain) counts it once.
		if want := `{"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"input_tokens":25,"output_tokens":0}`; start != want {
			t.Errorf("message_start usage %s, want %s", start, want)
		}
		if want := `{"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"input_tokens":25,"output_tokens":12}`; end != want {
			t.Errorf("message_delta usage %s, want %s", end, want)
		}
	})

	// An attempt that failed before the reply started is retried unseen:
	// message_start reports the attempt that answers; message_delta the
	// call's usage, both attempts', which is what was billed (the Final's).
	t.Run("after an invisible retry", func(t *testing.T) {
		up := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
			if n == 0 {
				return pt.Reply{Body: []byte(anthropicOverloaded)}
			}
			return pt.Reply{Body: []byte(anthropicReply)}
		})
		start, end := usageOf(t, streamMessages(t, upstreams(t, up, nil), "claude/claude-up"))
		if want := `{"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"input_tokens":25,"output_tokens":0}`; start != want {
			t.Errorf("message_start usage %s, want %s", start, want)
		}
		if want := `{"cache_creation_input_tokens":0,"cache_read_input_tokens":10,"input_tokens":50,"output_tokens":13}`; end != want {
			t.Errorf("message_delta usage %s, want %s (both attempts)", end, want)
		}
		if n := len(up.Requests()); n != 2 {
			t.Errorf("%d upstream requests, want 2", n)
		}
	})
}

// TestMessageStartWithoutEarlyUsage: a provider that reports its usage
// only at the end (OpenAI's format, Gemini's) has nothing for
// message_start, which says 0; message_delta has the count. Nor does an
// attempt that failed before the reply started lend message_start its
// usage when another provider answers.
func TestMessageStartWithoutEarlyUsage(t *testing.T) {
	const zero = `{"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"input_tokens":0,"output_tokens":0}`
	t.Run("an OpenAI-format upstream", func(t *testing.T) {
		gpt := pt.Replay(t, pt.Reply{Body: []byte(openAIReply)})
		start, end := usageOf(t, streamMessages(t, upstreams(t, nil, gpt), "gpt/gpt-up"))
		if start != zero {
			t.Errorf("message_start usage %s, want %s", start, zero)
		}
		if want := `{"cache_creation_input_tokens":0,"cache_read_input_tokens":4,"input_tokens":13,"output_tokens":2}`; end != want {
			t.Errorf("message_delta usage %s, want %s", end, want)
		}
	})
	t.Run("falling back from an Anthropic upstream that failed", func(t *testing.T) {
		claude := pt.Replay(t, pt.Reply{Body: []byte(anthropicOverloaded)})
		gpt := pt.Replay(t, pt.Reply{Body: []byte(openAIReply)})
		start, end := usageOf(t, streamMessages(t, upstreams(t, claude, gpt), "claude-then-gpt"))
		if start != zero {
			t.Errorf("message_start usage %s, want %s: the failed attempts' usage is not the answer's", start, zero)
		}
		// Every attempt's usage: claude's (25 + 5 cached, 1 output each)
		// and gpt's.
		n := uint64(len(claude.Requests()))
		want := fmt.Sprintf(`{"cache_creation_input_tokens":0,"cache_read_input_tokens":%d,"input_tokens":%d,"output_tokens":%d}`, 5*n+4, 25*n+13, n+2)
		if n == 0 || end != want {
			t.Errorf("message_delta usage %s, want %s (%d attempts on claude)", end, want, n)
		}
	})
}

// TestAnthropicSDKReadsTheInputFromMessageStart: the official Go SDK,
// reading the stream event by event, has the input in message_start; the
// message it accumulates ends with the whole usage.
func TestAnthropicSDKReadsTheInputFromMessageStart(t *testing.T) {
	up := pt.Replay(t, pt.Reply{Body: []byte(anthropicReply)})
	client := anthropic.NewClient(aoption.WithBaseURL(upstreams(t, up, nil)), aoption.WithAPIKey("sk-any"))
	stream := client.Messages.NewStreaming(ctxOf(t), anthropic.MessageNewParams{
		Model: "claude/claude-up", MaxTokens: 64, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	var msg anthropic.Message
	var started bool
	for stream.Next() {
		ev := stream.Current()
		if start, ok := ev.AsAny().(anthropic.MessageStartEvent); ok {
			started = true
			if u := start.Message.Usage; u.InputTokens != 25 || u.CacheReadInputTokens != 5 || u.OutputTokens != 0 {
				t.Errorf("message_start usage %s, want 25 input tokens, 5 read from the cache, no output yet", u.RawJSON())
			}
		}
		if err := msg.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if u := msg.Usage; !started || u.InputTokens != 25 || u.CacheReadInputTokens != 5 || u.OutputTokens != 12 || msg.Content[0].Text != "Hello there." {
		t.Errorf("message %s", msg.RawJSON())
	}
}
