package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/freeport"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/servertools"
	"github.com/llmrelay/llmrelay/internal/servertools/mcptest"
	"github.com/llmrelay/llmrelay/internal/telemetry/otlptest"
)

// The server-tool tests run llmrelay in-process against real MCP servers
// on loopback: @modelcontextprotocol/server-everything (npm, pinned) and
// a go-sdk server whose tools the test drives (mcptest.GoServer).

// everythingServer is the config of server-everything, at e's
// address.
func everythingServer(e *mcptest.Everything) servertools.ServerConfig {
	return servertools.ServerConfig{Name: "everything", URL: e.URL, Allow: []string{"*"}, Timeout: 2 * time.Minute, MaxConcurrency: 16}
}

// goServer is the config of a GoServer, named go.
func goServer(g *mcptest.GoServer) servertools.ServerConfig {
	return servertools.ServerConfig{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: 2 * time.Minute}
}

func toolsConfig(servers ...servertools.ServerConfig) *config.Config {
	cfg := config.Default()
	cfg.Providers = config.DefaultProviders()
	cfg.Tools.MCPServers = servers
	return cfg
}

// scripted is a request to mock/echo offering the server tools, with the
// mock's provider options (a script, faults) as JSON.
func scripted(t *testing.T, tools []string, options string) *llmrelayv1.GenerateRequest {
	t.Helper()
	opts := &structpb.Struct{}
	if err := opts.UnmarshalJSON([]byte(options)); err != nil {
		t.Fatal(err)
	}
	return &llmrelayv1.GenerateRequest{
		Model:           "mock/echo",
		Messages:        []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "use the tool"}},
		ServerTools:     tools,
		ProviderOptions: opts,
		Retry:           &llmrelayv1.RetryPolicy{MaxAttempts: 3, InitialBackoff: durationpb.New(time.Millisecond), MaxBackoff: durationpb.New(time.Millisecond)},
	}
}

// eventLines writes each event on a line the tests compare: its turn, its
// attempt and what it carries.
func eventLines(events []*llmrelayv1.GenerateEvent) []string {
	var out []string
	for _, ev := range events {
		at := fmt.Sprintf("t%d a%d ", ev.GetTurn(), ev.GetAttempt())
		switch e := ev.GetEvent().(type) {
		case *llmrelayv1.GenerateEvent_Delta:
			if tc := e.Delta.GetToolCall(); tc != nil {
				out = append(out, at+fmt.Sprintf("call %d %s %s %s", tc.GetIndex(), tc.GetId(), tc.GetName(), tc.GetArgumentsDelta()))
			} else {
				out = append(out, at+fmt.Sprintf("text %q", e.Delta.GetText()))
			}
		case *llmrelayv1.GenerateEvent_ToolProgress:
			out = append(out, at+fmt.Sprintf("progress %s %s %v/%v", e.ToolProgress.GetToolCallId(), e.ToolProgress.GetName(), e.ToolProgress.GetProgress(), e.ToolProgress.GetTotal()))
		case *llmrelayv1.GenerateEvent_ToolResult:
			r := e.ToolResult
			s := at + fmt.Sprintf("result %s %s %q", r.GetToolCallId(), r.GetName(), r.GetContent())
			if r.GetIsError() {
				s += " error"
			}
			if r.GetAttempts() != 1 {
				s += fmt.Sprintf(" attempts=%d", r.GetAttempts())
			}
			out = append(out, s)
		case *llmrelayv1.GenerateEvent_WillRetry:
			out = append(out, at+fmt.Sprintf("will_retry next=%d discard=%v", e.WillRetry.GetNextAttempt(), e.WillRetry.GetDiscardPartial()))
		case *llmrelayv1.GenerateEvent_Final:
			f := e.Final
			out = append(out, at+fmt.Sprintf("final turns=%d attempts=%d %s %q", f.GetTurns(), f.GetAttempts(), f.GetFinishReason(), f.GetMessage().GetContent()))
		default:
			out = append(out, at+fmt.Sprintf("%T", e))
		}
	}
	return out
}

func checkEvents(t *testing.T, events []*llmrelayv1.GenerateEvent, want []string) {
	t.Helper()
	got := eventLines(events)
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for i, ev := range events {
		if ev.GetSequence() != uint64(i+1) {
			t.Fatalf("event %d has sequence %d", i, ev.GetSequence())
		}
	}
}

// transcript writes a Final's transcript, one message a line.
func transcript(f *llmrelayv1.Final) []string {
	var out []string
	for _, m := range f.GetTranscript() {
		s := strings.TrimPrefix(m.GetRole().String(), "ROLE_") + " " + fmt.Sprintf("%q", m.GetContent())
		for _, tc := range m.GetToolCalls() {
			s += fmt.Sprintf(" call(%s %s %s)", tc.GetId(), tc.GetName(), tc.GetArguments())
		}
		if m.GetToolCallId() != "" {
			s += " for " + m.GetToolCallId() + " by " + m.GetServerTool()
		}
		if m.GetToolError() {
			s += " error"
		}
		out = append(out, s)
	}
	return out
}

func checkTranscript(t *testing.T, f *llmrelayv1.Final, want []string) {
	t.Helper()
	if got := transcript(f); !slices.Equal(got, want) {
		t.Fatalf("transcript:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func final(t *testing.T, events []*llmrelayv1.GenerateEvent) *llmrelayv1.Final {
	t.Helper()
	if len(events) == 0 || events[len(events)-1].GetFinal() == nil {
		t.Fatalf("the call did not end with a final: %v", eventLines(events))
	}
	return events[len(events)-1].GetFinal()
}

// TestServerToolEchoWithTheMockScript: the mock, scripted to call
// everything/echo of a real server-everything, streams the tool call,
// then llmrelay's tool_result with the echo, then the second turn's text
// built from it, then one Final with both turns in its transcript and the
// usage of both.
func TestServerToolEchoWithTheMockScript(t *testing.T) {
	e := mcptest.StartEverything(t)
	in := servertest.Start(t, toolsConfig(everythingServer(e)))
	events, err := servertest.Collect(t.Context(), in.Client, scripted(t, []string{"everything/echo"}, `{
		"script": [{"tool_calls": [{"name": "everything__echo", "arguments": {"message": "hello"}}]}],
		"faults": [{"usage": {"input_tokens": 5, "output_tokens": 3}}, {"usage": {"input_tokens": 9, "output_tokens": 2}}]}`))
	if err != nil {
		t.Fatalf("Generate: %v (events %v)", err, eventLines(events))
	}
	checkEvents(t, events, []string{
		`t1 a1 call 0 mock_1_0 everything__echo {"message`,
		`t1 a1 call 0   ":"hello"}`,
		`t1 a1 result mock_1_0 everything/echo "Echo: hello"`,
		`t2 a2 text "Echo: "`,
		`t2 a2 text "hello"`,
		`t2 a2 final turns=2 attempts=2 FINISH_REASON_STOP "Echo: hello"`,
	})
	f := final(t, events)
	checkTranscript(t, f, []string{
		`ASSISTANT "" call(mock_1_0 everything__echo {"message":"hello"})`,
		`TOOL "Echo: hello" for mock_1_0 by everything/echo`,
		`ASSISTANT "Echo: hello"`,
	})
	if u := f.GetUsage(); u.GetInputTokens() != 14 || u.GetOutputTokens() != 5 {
		t.Errorf("usage %v, want both turns' (14 in, 5 out)", u)
	}
}

// TestServerToolEchoWithAnOpenAIUpstream: the same loop with an
// OpenAI-compatible upstream that streams a real tool call: the upstream
// is offered everything__echo with the server's schema, and its second
// request carries the assistant's tool call and the tool's result.
func TestServerToolEchoWithAnOpenAIUpstream(t *testing.T) {
	e := mcptest.StartEverything(t)
	up := startToolModel(t, `{"message":"hi from the model"}`)
	cfg := toolsConfig(everythingServer(e))
	cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL(), Models: []string{"gpt-4o-mini"}}}
	// One event per upstream chunk, however fast the test reads: the
	// expected stream shows each fragment of the tool call.
	cfg.Streaming.CoalesceDeltas = false
	in := servertest.Start(t, cfg)
	req := &llmrelayv1.GenerateRequest{
		Model:       "up/gpt-4o-mini",
		Messages:    []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "echo something"}},
		ServerTools: []string{"everything/echo"},
	}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v (events %v)", err, eventLines(events))
	}
	checkEvents(t, events, []string{
		`t1 a1 text "Let me"`,
		`t1 a1 text " check."`,
		`t1 a1 call 0 call_1 everything__echo `,
		`t1 a1 call 0   {"message":"hi `,
		`t1 a1 call 0   from the model"}`,
		`t1 a1 result call_1 everything/echo "Echo: hi from the model"`,
		`t2 a2 text "The "`,
		`t2 a2 text "tool "`,
		`t2 a2 text "said: "`,
		`t2 a2 text "Echo: "`,
		`t2 a2 text "hi "`,
		`t2 a2 text "from "`,
		`t2 a2 text "the "`,
		`t2 a2 text "model"`,
		`t2 a2 final turns=2 attempts=2 FINISH_REASON_STOP "The tool said: Echo: hi from the model"`,
	})
	checkTranscript(t, final(t, events), []string{
		`ASSISTANT "Let me check." call(call_1 everything__echo {"message":"hi from the model"})`,
		`TOOL "Echo: hi from the model" for call_1 by everything/echo`,
		`ASSISTANT "The tool said: Echo: hi from the model"`,
	})
	reqs := up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the upstream got %d requests, want 2", len(reqs))
	}
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Function.Name != "everything__echo" || !strings.Contains(string(reqs[0].Tools[0].Function.Parameters), `"message"`) {
		t.Errorf("the first request offers %+v, want everything__echo with its schema", reqs[0].Tools)
	}
	second := reqs[1].Messages
	if len(second) != 3 || second[1].Role != "assistant" || len(second[1].ToolCalls) != 1 || second[1].ToolCalls[0].ID != "call_1" ||
		second[2].Role != "tool" || second[2].ToolCallID != "call_1" || second[2].Content != "Echo: hi from the model" {
		b, _ := json.Marshal(second)
		t.Errorf("the second request's messages: %s", b)
	}
}

// TestServerToolProgress: trigger-long-running-operation with 2 steps
// streams at least 2 tool_progress events before its tool_result.
func TestServerToolProgress(t *testing.T) {
	e := mcptest.StartEverything(t)
	in := servertest.Start(t, toolsConfig(everythingServer(e)))
	events, err := servertest.Collect(t.Context(), in.Client, scripted(t, []string{"everything/trigger-long-running-operation"}, `{
		"script": [{"tool_calls": [{"name": "everything__trigger-long-running-operation", "arguments": {"duration": 0.2, "steps": 2}}]}]}`))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var progress []*llmrelayv1.ToolProgress
	result := -1
	for i, ev := range events {
		if p := ev.GetToolProgress(); p != nil {
			if result >= 0 {
				t.Fatalf("progress after the result: %v", eventLines(events))
			}
			progress = append(progress, p)
		}
		if ev.GetToolResult() != nil {
			result = i
		}
	}
	if len(progress) < 2 || result < 0 {
		t.Fatalf("%d progress events, then the result at %d: %v", len(progress), result, eventLines(events))
	}
	if last := progress[len(progress)-1]; last.GetProgress() != 2 || last.GetTotal() != 2 || last.GetToolCallId() != "mock_1_0" || events[result].GetTurn() != 1 {
		t.Errorf("last progress %v", last)
	}
}

// TestServerToolScope: a key without the tool is refused before any
// upstream request; ListTools shows each key only the tools it may use.
func TestServerToolScope(t *testing.T) {
	e := mcptest.StartEverything(t)
	up := startToolModel(t, `{"message":"x"}`)
	cfg := toolsConfig(everythingServer(e))
	cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL(), Models: []string{"m"}}}
	key := func(name, secret string, tools ...string) auth.KeyConfig {
		return auth.KeyConfig{Name: name, SHA256: auth.HashKey(secret), Scopes: []string{"generate"}, Models: []string{"*"}, Tools: tools}
	}
	cfg.Auth.Keys = []config.APIKey{key("echo", "key-echo-0123456789", "everything/echo"), key("none", "key-none-0123456789")}
	in := servertest.Start(t, cfg)
	req := &llmrelayv1.GenerateRequest{
		Model: "up/m", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "x"}},
		ServerTools: []string{"everything/echo"},
	}
	_, err := servertest.Collect(bearer(t.Context(), "key-none-0123456789"), in.Client, req)
	st := wantError(t, err, codes.PermissionDenied, "SERVER_TOOL_NOT_PERMITTED")
	if !strings.Contains(st.Message(), "everything/echo") {
		t.Errorf("message %q does not name the tool", st.Message())
	}
	if n := len(up.Requests()); n != 0 {
		t.Fatalf("the upstream got %d requests before the refusal", n)
	}
	req.ServerTools = []string{"everything/get-sum"}
	_, err = servertest.Collect(bearer(t.Context(), "key-echo-0123456789"), in.Client, req)
	wantError(t, err, codes.PermissionDenied, "SERVER_TOOL_NOT_PERMITTED")

	// Each key sees the servers it may use a tool of, counting only those
	// tools: a key without tools learns nothing of the MCP servers.
	list := func(secret string) (names, servers []string) {
		resp, err := in.Client.ListTools(bearer(t.Context(), secret), &llmrelayv1.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range resp.GetTools() {
			names = append(names, tl.GetName())
		}
		for _, sv := range resp.GetServers() {
			servers = append(servers, fmt.Sprintf("%s available=%v tools=%d", sv.GetName(), sv.GetAvailable(), sv.GetTools()))
		}
		return names, servers
	}
	if names, servers := list("key-echo-0123456789"); !slices.Equal(names, []string{"everything/echo"}) || !slices.Equal(servers, []string{"everything available=true tools=1"}) {
		t.Errorf("ListTools for the echo key: tools %v, servers %v", names, servers)
	}
	if names, servers := list("key-none-0123456789"); len(names) != 0 || len(servers) != 0 {
		t.Errorf("ListTools for a key without tools: tools %v, servers %v", names, servers)
	}
	resp, err := in.Client.ListTools(bearer(t.Context(), "key-echo-0123456789"), &llmrelayv1.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	echo := resp.GetTools()[0]
	if echo.GetModelName() != "everything__echo" || !echo.GetAvailable() || !echo.GetIdempotent() || echo.GetInputSchema().GetFields()["properties"].GetStructValue().GetFields()["message"] == nil {
		t.Errorf("echo = %v", echo)
	}
}

// TestServerToolError: a tool's error reaches the model and the client as
// an error result, and the call still ends with a Final.
func TestServerToolError(t *testing.T) {
	g := mcptest.NewGoServer(t)
	in := servertest.Start(t, toolsConfig(goServer(g)))
	events, err := servertest.Collect(t.Context(), in.Client, scripted(t, []string{"go/fail"}, `{
		"script": [{"tool_calls": [{"name": "go__fail", "arguments": {"message": "no such city"}}]}]}`))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkEvents(t, events, []string{
		`t1 a1 call 0 mock_1_0 go__fail {"message":"n`,
		`t1 a1 call 0   o such city"}`,
		`t1 a1 result mock_1_0 go/fail "no such city" error`,
		`t2 a2 text "no "`,
		`t2 a2 text "such "`,
		`t2 a2 text "city"`,
		`t2 a2 final turns=2 attempts=2 FINISH_REASON_STOP "no such city"`,
	})
	checkTranscript(t, final(t, events), []string{
		`ASSISTANT "" call(mock_1_0 go__fail {"message":"no such city"})`,
		`TOOL "no such city" for mock_1_0 by go/fail error`,
		`ASSISTANT "no such city"`,
	})
}

// TestServerToolKilledMidCall: the MCP server is killed (and restarted)
// while a tool runs: an idempotent tool is called again on the restarted
// server, a non-idempotent one gives the model an error result.
func TestServerToolKilledMidCall(t *testing.T) {
	for _, tc := range []struct{ tool, result string }{
		{"block", `t1 a1 result mock_1_0 go/block "done on generation 2" attempts=2`},
		{"block_once", `t1 a1 result mock_1_0 go/block_once "llmrelay could not reach MCP server go, or it dropped the call" error`},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			g := mcptest.NewGoServer(t)
			in := servertest.Start(t, toolsConfig(goServer(g)))
			go func() {
				<-g.Started
				g.Kill()
			}()
			events, err := servertest.Collect(t.Context(), in.Client, scripted(t, []string{"go/" + tc.tool}, fmt.Sprintf(`{
				"script": [{"tool_calls": [{"name": "go__%s"}]}]}`, tc.tool)))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			got := eventLines(events)
			if !slices.Contains(got, tc.result) {
				t.Fatalf("events %v\nwant the result %s", got, tc.result)
			}
			if f := final(t, events); f.GetTurns() != 2 {
				t.Errorf("final %v", f)
			}
		})
	}
}

// TestServerToolDeadlineCancelsAtTheServer: the call's deadline passes
// while a tool hangs: the call ends DEADLINE_EXCEEDED and the tool call is
// cancelled at the MCP server.
func TestServerToolDeadlineCancelsAtTheServer(t *testing.T) {
	g := mcptest.NewGoServer(t)
	in := servertest.Start(t, toolsConfig(goServer(g)))
	// The deadline must pass while the tool hangs: a loaded machine may
	// spend it before the tool call reaches the MCP server (nothing to
	// cancel there, and the wait below failed after two minutes). Then the
	// call is made again with twice the time, until the tool started.
	for deadline := 2 * time.Second; ; deadline *= 2 {
		ctx, cancel := context.WithTimeout(t.Context(), deadline)
		_, err := servertest.Collect(ctx, in.Client, scripted(t, []string{"go/hang"}, `{"script": [{"tool_calls": [{"name": "go__hang"}]}]}`))
		cancel()
		if status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("Generate: %v, want DEADLINE_EXCEEDED", err)
		}
		select {
		case <-g.Started:
		default:
			if deadline >= time.Minute {
				t.Fatalf("the hanging tool never started within a deadline of %v", deadline)
			}
			t.Logf("the deadline (%v) passed before the tool started: again with %v", deadline, 2*deadline)
			continue
		}
		break
	}
	select {
	case <-g.Cancelled:
	case <-time.After(2 * time.Minute):
		t.Fatal("the hanging tool was not cancelled at the MCP server")
	}
}

// TestServerToolModelTurnRetry: the model's second turn fails with a 503,
// then succeeds: only that turn is retried (the tool ran once), the
// client sees will_retry in turn 2, and nothing of turn 1 is discarded.
func TestServerToolModelTurnRetry(t *testing.T) {
	g := mcptest.NewGoServer(t)
	in := servertest.Start(t, toolsConfig(goServer(g)))
	events, err := servertest.Collect(t.Context(), in.Client, scripted(t, []string{"go/echo"}, `{
		"script": [{"tool_calls": [{"name": "go__echo", "arguments": {"message": "once"}}]}],
		"faults": [{}, {"status": 503}, {}]}`))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkEvents(t, events, []string{
		`t1 a1 call 0 mock_1_0 go__echo {"message`,
		`t1 a1 call 0   ":"once"}`,
		`t1 a1 result mock_1_0 go/echo "Echo: once"`,
		`t2 a2 will_retry next=3 discard=false`,
		`t2 a3 text "Echo: "`,
		`t2 a3 text "once"`,
		`t2 a3 final turns=2 attempts=3 FINISH_REASON_STOP "Echo: once"`,
	})
	if n := g.Calls("echo"); n != 1 {
		t.Fatalf("the tool ran %d times, want once", n)
	}
}

// TestServerToolMaxTurns: a model that keeps calling tools is stopped
// after max_tool_turns turns ran them, with a typed finish reason and the
// transcript so far.
func TestServerToolMaxTurns(t *testing.T) {
	g := mcptest.NewGoServer(t)
	in := servertest.Start(t, toolsConfig(goServer(g)))
	call := `{"tool_calls": [{"name": "go__echo", "arguments": {"message": "again"}}]}`
	req := scripted(t, []string{"go/echo"}, `{"script": [`+call+`,`+call+`,`+call+`]}`)
	req.MaxToolTurns = proto.Uint32(2)
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	f := final(t, events)
	if f.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_MAX_TOOL_TURNS || f.GetTurns() != 3 || len(f.GetMessage().GetToolCalls()) != 1 {
		t.Fatalf("final %v", f)
	}
	checkTranscript(t, f, []string{
		`ASSISTANT "" call(mock_1_0 go__echo {"message":"again"})`,
		`TOOL "Echo: again" for mock_1_0 by go/echo`,
		`ASSISTANT "" call(mock_2_0 go__echo {"message":"again"})`,
		`TOOL "Echo: again" for mock_2_0 by go/echo`,
		`ASSISTANT "" call(mock_3_0 go__echo {"message":"again"})`,
	})
	if n := g.Calls("echo"); n != 2 {
		t.Fatalf("the tool ran %d times, want 2", n)
	}
}

// TestServerToolsWithAClientTool: a turn that calls a server tool and one
// of the request's own tools runs the server tool, then ends the call with
// FINISH_REASON_TOOL_CALLS, the server tool's result in the transcript.
func TestServerToolsWithAClientTool(t *testing.T) {
	g := mcptest.NewGoServer(t)
	in := servertest.Start(t, toolsConfig(goServer(g)))
	req := scripted(t, []string{"go/echo"}, `{"script": [{"tool_calls": [
		{"name": "go__echo", "arguments": {"message": "server"}}, {"name": "get_weather", "arguments": {"city": "Paris"}}]}]}`)
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Description: "The weather in a city"}}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	f := final(t, events)
	if f.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || f.GetTurns() != 1 || len(f.GetMessage().GetToolCalls()) != 2 {
		t.Fatalf("final %v", f)
	}
	checkTranscript(t, f, []string{
		`ASSISTANT "" call(mock_1_0 go__echo {"message":"server"}) call(mock_1_1 get_weather {"city":"Paris"})`,
		`TOOL "Echo: server" for mock_1_0 by go/echo`,
	})
}

// TestServerToolsRouteDefault: a route's defaults.server_tools offers its
// tools to requests that name none.
func TestServerToolsRouteDefault(t *testing.T) {
	g := mcptest.NewGoServer(t)
	cfg := toolsConfig(goServer(g))
	cfg.Routes = []route.Config{{Name: "agent", Targets: []route.TargetConfig{{Model: "mock/echo"}}, Defaults: route.Defaults{ServerTools: []string{"go/echo"}}}}
	in := servertest.Start(t, cfg)
	req := scripted(t, nil, `{"script": [{"tool_calls": [{"name": "go__echo", "arguments": {"message": "routed"}}]}]}`)
	req.Model = "agent"
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if f := final(t, events); f.GetMessage().GetContent() != "Echo: routed" || f.GetTurns() != 2 || f.GetAnnotations()["route.defaults"] != "server_tools" {
		t.Fatalf("final %v", f)
	}
}

// TestServerToolScopeCheckedEveryTurn: a reload that takes the tool from
// the key while its call runs the tool ends the call before the next turn,
// as not permitted whether the request named the tool or a pattern
// matched it: the tool is still there, the key may no longer use it.
func TestServerToolScopeCheckedEveryTurn(t *testing.T) {
	for _, entry := range []string{"go/gate", "go/ga*"} {
		t.Run(entry, func(t *testing.T) {
			g := mcptest.NewGoServer(t)
			cfg := toolsConfig(goServer(g))
			keyCfg := auth.KeyConfig{Name: "k", SHA256: auth.HashKey("key-k-0123456789"), Scopes: []string{"generate"}, Models: []string{"*"}, Tools: []string{"go/*"}}
			cfg.Auth.Keys = []config.APIKey{keyCfg}
			in := servertest.Start(t, cfg)
			done := make(chan error, 1)
			go func() {
				_, err := servertest.Collect(bearer(t.Context(), "key-k-0123456789"), in.Client,
					scripted(t, []string{entry}, `{"script": [{"tool_calls": [{"name": "go__gate"}]}]}`))
				done <- err
			}()
			<-g.Started
			reloaded := toolsConfig(goServer(g))
			keyCfg.Tools = []string{"go/echo"}
			reloaded.Auth.Keys = []config.APIKey{keyCfg}
			if _, err := in.Server.Reload(reloaded); err != nil {
				t.Fatal(err)
			}
			g.Release <- struct{}{}
			st := wantError(t, <-done, codes.PermissionDenied, "SERVER_TOOL_NOT_PERMITTED")
			if strings.Contains(st.Message(), "reload") {
				t.Errorf("message %q says a reload removed a tool that is still there", st.Message())
			}
		})
	}
}

// TestServerToolRemovedByReloadMidCall: a reload that removes the MCP
// server while its tool runs ends the call before the next turn with
// FAILED_PRECONDITION, SERVER_TOOL_REMOVED, not as a bad request: the
// request was valid when it was accepted.
func TestServerToolRemovedByReloadMidCall(t *testing.T) {
	g := mcptest.NewGoServer(t)
	in := servertest.Start(t, toolsConfig(goServer(g)))
	done := make(chan error, 1)
	go func() {
		_, err := servertest.Collect(t.Context(), in.Client, scripted(t, []string{"go/gate"}, `{"script": [{"tool_calls": [{"name": "go__gate"}]}]}`))
		done <- err
	}()
	<-g.Started
	if _, err := in.Server.Reload(toolsConfig()); err != nil {
		t.Fatal(err)
	}
	st := wantError(t, <-done, codes.FailedPrecondition, "SERVER_TOOL_REMOVED")
	if !strings.Contains(st.Message(), "reload") {
		t.Errorf("message %q does not say a reload removed it", st.Message())
	}
	for _, d := range st.Details() {
		if _, ok := d.(*errdetails.BadRequest); ok {
			t.Errorf("a tool removed mid-call is no bad request: %v", d)
		}
	}
}

// TestServerToolTracesAndMetrics: a tool call is an execute_tool span,
// child of the call's server span, with the GenAI conventions' tool
// attributes, and counts in the tool metrics by server, tool and result.
func TestServerToolTracesAndMetrics(t *testing.T) {
	g := mcptest.NewGoServer(t)
	recv, tr := otlpTracing(t)
	in := servertest.Start(t, toolsConfig(goServer(g)), server.WithTracing(tr))
	_, err := servertest.Collect(t.Context(), in.Client, scripted(t, []string{"go/*"}, `{"script": [{"tool_calls": [
		{"name": "go__echo", "arguments": {"message": "traced"}}, {"name": "go__fail", "arguments": {"message": "bad"}}]}]}`))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	spans := exported(t, tr, recv, 5) // the server span, two turns, two tools
	var srv otlptest.Span
	tools := map[string]otlptest.Span{}
	for _, s := range spans {
		switch {
		case s.GetName() == "llmrelay.v1.LLMService/Generate":
			srv = s
		case strings.HasPrefix(s.GetName(), "execute_tool "):
			tools[s.GetName()] = s
		}
	}
	echo, fail := tools["execute_tool go/echo"], tools["execute_tool go/fail"]
	if srv.Span == nil || echo.Span == nil || fail.Span == nil {
		t.Fatalf("spans %v", spans)
	}
	if echo.ParentID() != srv.SpanID() || echo.TraceID() != srv.TraceID() {
		t.Errorf("the tool span is not a child of the server span")
	}
	wantAttrs(t, "echo", echo, map[string]any{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "go/echo", "gen_ai.tool.call.id": "mock_1_0",
		"gen_ai.tool.type": "extension", "llmrelay.tool.server": "go", "llmrelay.turn": int64(1), "llmrelay.tool.attempts": int64(1),
	})
	wantAttrs(t, "fail", fail, map[string]any{"gen_ai.tool.call.id": "mock_1_1", "error.type": "tool_error"})

	body := in.Server.Metrics().Text()
	for _, want := range []string{
		`llmrelay_tool_calls_total{result="ok",server="go",tool="echo"} 1`,
		`llmrelay_tool_calls_total{result="tool_error",server="go",tool="fail"} 1`,
		`llmrelay_tool_call_duration_seconds_count{result="ok",server="go",tool="echo"} 1`,
		`llmrelay_mcp_server_up{server="go"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestServerToolResumableAcrossTurns: the client of a resumable call goes
// away while its tool runs; the call runs on, and Resume streams the rest
// of it: the tool's result, the next turn, the Final.
func TestServerToolResumableAcrossTurns(t *testing.T) {
	g := mcptest.NewGoServer(t)
	in := servertest.Start(t, toolsConfig(goServer(g)))
	req := scripted(t, []string{"go/gate"}, `{"script": [{"tool_calls": [{"name": "go__gate"}]}]}`)
	req.RequestId = uuid.NewString()
	req.Resumable = proto.Bool(true)
	ctx, cancel := context.WithCancel(t.Context())
	stream, err := in.Client.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var first []*llmrelayv1.GenerateEvent
	for len(first) < 2 { // the tool call's two fragments
		ev, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, ev)
	}
	<-g.Started
	cancel()
	g.Release <- struct{}{}
	rs, err := in.Client.Resume(t.Context(), &llmrelayv1.ResumeRequest{RequestId: req.GetRequestId(), AfterSequence: first[len(first)-1].GetSequence()})
	if err != nil {
		t.Fatal(err)
	}
	rest, err := servertest.ReadAll(rs)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	checkEvents(t, append(first, rest...), []string{
		`t1 a1 call 0 mock_1_0 go__gate {`,
		`t1 a1 call 0   }`,
		`t1 a1 result mock_1_0 go/gate "through"`,
		`t2 a2 text "through"`,
		`t2 a2 final turns=2 attempts=2 FINISH_REASON_STOP "through"`,
	})
}

// TestServerToolResultBounded: a result past tools.max_tool_result_bytes
// is cut, with a note the model reads and a flag on the event.
func TestServerToolResultBounded(t *testing.T) {
	g := mcptest.NewGoServer(t)
	cfg := toolsConfig(goServer(g))
	cfg.Tools.MaxResultBytes = 4096
	in := servertest.Start(t, cfg)
	events, err := servertest.Collect(t.Context(), in.Client, scripted(t, []string{"go/big"}, `{"script": [{"tool_calls": [{"name": "go__big", "arguments": {"bytes": 100000}}]}]}`))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var r *llmrelayv1.ToolResult
	for _, ev := range events {
		if ev.GetToolResult() != nil {
			r = ev.GetToolResult()
		}
	}
	if r == nil || !r.GetTruncated() || len(r.GetContent()) > 4096 || !strings.HasSuffix(r.GetContent(), "cut here, at 4096 of its 100000 bytes]") {
		t.Fatalf("result %d bytes, truncated %v", len(r.GetContent()), r.GetTruncated())
	}
	if got := final(t, events).GetTranscript()[1].GetContent(); got != r.GetContent() {
		t.Error("the transcript's result is not the one the model was sent")
	}
}

// TestServerToolMaxTurnsIsBounded: a request's max_tool_turns above the
// server's tools.max_tool_turns_limit is lowered to it.
func TestServerToolMaxTurnsIsBounded(t *testing.T) {
	g := mcptest.NewGoServer(t)
	cfg := toolsConfig(goServer(g))
	cfg.Tools.MaxToolTurns, cfg.Tools.MaxToolTurnsLimit = 1, 1
	in := servertest.Start(t, cfg)
	call := `{"tool_calls": [{"name": "go__echo", "arguments": {"message": "again"}}]}`
	req := scripted(t, []string{"go/echo"}, `{"script": [`+call+`,`+call+`,`+call+`]}`)
	req.MaxToolTurns = proto.Uint32(5)
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if f := final(t, events); f.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_MAX_TOOL_TURNS || f.GetTurns() != 2 || g.Calls("echo") != 1 {
		t.Fatalf("final %v, the tool ran %d times", f, g.Calls("echo"))
	}
}

// TestServerToolServerDownAtStart: llmrelay starts with an MCP server that
// does not answer: ListTools says so, and a call naming its tool is
// UNAVAILABLE, while the calls that need no tool are served.
func TestServerToolServerDownAtStart(t *testing.T) {
	down := servertools.ServerConfig{Name: "down", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", freeport.For(t)), Allow: []string{"*"}}
	in := servertest.Start(t, toolsConfig(down))
	resp, err := in.Client.ListTools(t.Context(), &llmrelayv1.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetServers()) != 1 || resp.GetServers()[0].GetAvailable() || resp.GetServers()[0].GetListedAt() != nil {
		t.Fatalf("servers %v", resp.GetServers())
	}
	_, err = servertest.Collect(t.Context(), in.Client, scripted(t, []string{"down/echo"}, `{}`))
	st := wantError(t, err, codes.Unavailable, "SERVER_TOOL_UNAVAILABLE")
	if detail[*errdetails.RetryInfo](st) == nil {
		t.Error("no RetryInfo")
	}
	if _, err := servertest.Collect(t.Context(), in.Client, scripted(t, nil, `{}`)); err != nil {
		t.Fatalf("a call without tools: %v", err)
	}
}

// TestServerToolsCallLogLine: a call's finish log line records its model
// turns and its server tool calls, the failed ones apart; a call without
// server tools has one turn and no tool counts.
func TestServerToolsCallLogLine(t *testing.T) {
	g := mcptest.NewGoServer(t)
	var logs servertest.LockedBuffer
	in := servertest.Start(t, toolsConfig(goServer(g)), server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	req := scripted(t, []string{"go/echo", "go/fail"}, `{"script": [{"tool_calls": [
		{"name": "go__echo", "arguments": {"message": "a"}}, {"name": "go__fail", "arguments": {"message": "b"}}]}]}`)
	req.RequestId = uuid.NewString()
	if _, err := servertest.Collect(t.Context(), in.Client, req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	plain := scripted(t, nil, `{}`)
	plain.RequestId = uuid.NewString()
	if _, err := servertest.Collect(t.Context(), in.Client, plain); err != nil {
		t.Fatalf("Generate without tools: %v", err)
	}
	// The line is written as the handler returns, which may be just after
	// the client saw the stream end: wait for it.
	line := func(id string) string {
		deadline := time.Now().Add(30 * time.Second)
		for {
			if l := grepLines(logs.String(), `msg="finished call" request_id=`+id); l != "" || time.Now().After(deadline) {
				return l
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if l := line(req.RequestId); !strings.Contains(l, " attempts=2 ") || !strings.Contains(l, " turns=2 tool_calls=2 tool_errors=1 ") {
		t.Errorf("the tool call's finish line lacks turns=2 tool_calls=2 tool_errors=1:\n%s", l)
	}
	if l := line(plain.RequestId); !strings.Contains(l, " turns=1 ") || strings.Contains(l, "tool_calls=") {
		t.Errorf("the plain call's finish line: want turns=1 and no tool counts:\n%s", l)
	}
}

// toolResults returns the tool_result events of events.
func toolResults(events []*llmrelayv1.GenerateEvent) []*llmrelayv1.ToolResult {
	var out []*llmrelayv1.ToolResult
	for _, ev := range events {
		if r := ev.GetToolResult(); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// TestServerToolResultsWithinTheOutputLimit: with server tools the output
// limit bounds the whole call, so that the final, which carries every
// turn's reply and every tool result (and the last reply twice), stays
// within it: tool results count against it, and the result that passes it
// ends the call, with a final cut at the limit under truncation. Five
// parallel results of 1 MiB each would make a 5 MiB final, which a client
// with gRPC's default 4 MiB receive limit (this test's) could not receive.
func TestServerToolResultsWithinTheOutputLimit(t *testing.T) {
	g := mcptest.NewGoServer(t)
	cfg := toolsConfig(goServer(g))
	cfg.Tools.MaxResultBytes = 1 << 20
	in := servertest.Start(t, cfg)
	const big = `{"name": "go__big", "arguments": {"bytes": 1048576}}`
	req := scripted(t, []string{"go/big"}, `{"script": [{"tool_calls": [`+strings.Repeat(big+",", 4)+big+`]}]}`)
	req.OutputLimit = &llmrelayv1.OutputLimit{OnLimit: llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_TRUNCATE}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	f := final(t, events)
	limit := int(config.Default().Limits.DefaultMaxOutputBytes)
	if f.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || f.GetTurns() != 1 || len(f.GetTranscript()) != 6 {
		t.Errorf("final: %v, %d turns, %d transcript messages; want FINISH_REASON_LENGTH, 1 turn, the reply and its 5 results",
			f.GetFinishReason(), f.GetTurns(), len(f.GetTranscript()))
	}
	if size := proto.Size(f); size > limit+4096 {
		t.Errorf("the final is %d bytes, past the output limit of %d", size, limit)
	}
	results, sum, cut := toolResults(events), 0, 0
	for _, r := range results {
		sum += len(r.GetContent())
		if r.GetTruncated() {
			cut++
		}
	}
	if len(results) != 5 || sum > limit || cut == 0 {
		t.Errorf("%d tool results of %d bytes in all, %d cut; want 5, within %d, some cut", len(results), sum, cut, limit)
	}
	if n := g.Calls("big"); n != 5 {
		t.Errorf("the tool ran %d times, want 5", n)
	}
}

// TestServerToolResultsPastTheOutputLimitFail: without truncation, tool
// results past the call's output limit end it with OUTPUT_TOO_LARGE, which
// names the turn; the model is not asked again.
func TestServerToolResultsPastTheOutputLimitFail(t *testing.T) {
	g := mcptest.NewGoServer(t)
	in := servertest.Start(t, toolsConfig(goServer(g)))
	const big = `{"name": "go__big", "arguments": {"bytes": 3000}}`
	req := scripted(t, []string{"go/big"}, `{"script": [{"tool_calls": [`+big+","+big+","+big+`]}]}`)
	req.OutputLimit = &llmrelayv1.OutputLimit{MaxBytes: 5000}
	stream, err := in.Client.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	events, err := servertest.ReadAll(stream)
	st := wantError(t, err, codes.ResourceExhausted, "OUTPUT_TOO_LARGE")
	info := detail[*errdetails.ErrorInfo](st)
	if md := info.GetMetadata(); md["max_output_bytes"] != "5000" || md["turn"] != "1" || md["attempts"] != "1" {
		t.Errorf("metadata %v, want max_output_bytes 5000, turn 1, attempts 1", md)
	}
	if !strings.Contains(st.Message(), "with server tools bounds the whole call") {
		t.Errorf("message %q does not say what the limit bounds", st.Message())
	}
	sum := 0
	for _, r := range toolResults(events) {
		sum += len(r.GetContent())
	}
	if n := len(toolResults(events)); n != 3 || sum > 5000 {
		t.Errorf("%d tool results of %d bytes in all; want 3, within the limit", n, sum)
	}
	for _, ev := range events {
		if ev.GetTurn() != 1 {
			t.Fatalf("an event of turn %d: the model was asked again", ev.GetTurn())
		}
	}
}

// TestServerToolTurnOutputLimit: a turn of a call with server tools may
// output half of what the turns before it left of the limit (the final
// carries the last turn's reply twice); a reply cut there ends the call,
// its tool calls unrun.
func TestServerToolTurnOutputLimit(t *testing.T) {
	g := mcptest.NewGoServer(t)
	in := servertest.Start(t, toolsConfig(goServer(g)))
	truncate := &llmrelayv1.OutputLimit{MaxBytes: 5000, OnLimit: llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_TRUNCATE}

	t.Run("an answer", func(t *testing.T) {
		req := scripted(t, []string{"go/echo"}, `{}`)
		req.Messages[0].Content = strings.Repeat("word ", 800) // 4000 bytes, echoed
		req.OutputLimit = truncate
		events, err := servertest.Collect(t.Context(), in.Client, req)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		f := final(t, events)
		if n := len(f.GetMessage().GetContent()); f.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || n != 2500 {
			t.Errorf("final: %v, %d bytes; want FINISH_REASON_LENGTH, cut at 2500", f.GetFinishReason(), n)
		}
		if size := proto.Size(f); size > 5000+512 {
			t.Errorf("the final is %d bytes, past the output limit of 5000", size)
		}
	})

	t.Run("a tool call cut at the limit is not run", func(t *testing.T) {
		req := scripted(t, []string{"go/echo"}, `{"script": [{"text": "`+strings.Repeat("word ", 480)+`",
			"tool_calls": [{"name": "go__echo", "arguments": {"message": "`+strings.Repeat("x", 200)+`"}}]}]}`)
		req.OutputLimit = truncate
		events, err := servertest.Collect(t.Context(), in.Client, req)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		f := final(t, events)
		if f.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || len(f.GetTranscript()) != 1 || len(toolResults(events)) != 0 {
			t.Errorf("final: %v, transcript %q, %d tool results; want FINISH_REASON_LENGTH, the cut reply alone, none",
				f.GetFinishReason(), transcript(f), len(toolResults(events)))
		}
		if n := g.Calls("echo"); n != 0 {
			t.Errorf("the tool ran %d times", n)
		}
	})
}

// TestServerToolContentForTheUserOnly: server-everything's
// get-annotated-message says its success message is for the user
// (audience ["user"]): the model (the mock, which answers with the tool
// results it was sent) is not sent it but told that the tool succeeded
// and its result went to the user; the tool_result event gives it to the
// client in user_content; the transcript, which a client sends back to
// go on, leaves it out.
func TestServerToolContentForTheUserOnly(t *testing.T) {
	e := mcptest.StartEverything(t)
	in := servertest.Start(t, toolsConfig(everythingServer(e)))
	events, err := servertest.Collect(t.Context(), in.Client, scripted(t, []string{"everything/get-annotated-message"}, `{
		"script": [{"tool_calls": [{"name": "everything__get-annotated-message", "arguments": {"messageType": "success"}}]}]}`))
	if err != nil {
		t.Fatalf("Generate: %v (events %v)", err, eventLines(events))
	}
	const note = "[llmrelay: the tool succeeded; its result, 1 content part, is meant for the user only: it went to the user, not to the model]"
	var result *llmrelayv1.ToolResult
	for _, ev := range events {
		if r := ev.GetToolResult(); r != nil {
			result = r
		}
	}
	if result.GetContent() != note || result.GetUserContent() != "Operation completed successfully" || result.GetIsError() {
		t.Fatalf("tool_result %v, want the note as its content, the message in user_content", result)
	}
	f := final(t, events)
	checkTranscript(t, f, []string{
		`ASSISTANT "" call(mock_1_0 everything__get-annotated-message {"messageType":"success"})`,
		`TOOL "` + note + `" for mock_1_0 by everything/get-annotated-message`,
		`ASSISTANT "` + note + `"`,
	})
}
