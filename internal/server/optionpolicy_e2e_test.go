package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// TestOperatorRefusesProviderOptions: an Anthropic provider whose
// configuration denies mcp_servers and container (the operator's account
// would connect to the tenant's MCP servers, or reuse a code-execution
// container by its id) refuses them through gRPC and the Anthropic door
// alike, PERMISSION_DENIED PROVIDER_OPTION_NOT_ALLOWED naming the option
// and the provider (the door's 403 permission_error), before any upstream
// request; a route one of whose targets refuses the option is refused
// whole, up front; an option the policy leaves alone reaches the upstream.
func TestOperatorRefusesProviderOptions(t *testing.T) {
	text, err := os.ReadFile("../provider/anthropic/testdata/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	strict := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: text} })
	open := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: text} })
	t.Setenv("LLMRELAY_TEST_UP_KEY", "sk-test")
	cfg := config.Default()
	cfg.Providers = []provider.Config{
		{Name: "claude", Kind: "anthropic", BaseURL: strict.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY",
			ProviderOptions: provider.OptionsPolicy{Deny: []string{"mcp_servers", "container"}}},
		{Name: "open", Kind: "anthropic", BaseURL: open.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY"},
	}
	// The provider that takes every option first: the call would start
	// there, and could fall back to the one that refuses.
	cfg.Routes = []route.Config{{Name: "smart", Targets: []route.TargetConfig{{Model: "open/claude-x"}, {Model: "claude/claude-x"}}}}
	in := servertest.Start(t, cfg)
	base := in.HTTP(t)
	mcp := []any{map[string]any{"type": "url", "url": "https://tenant.example/mcp", "name": "theirs"}}

	grpcRefuses := func(t *testing.T, model, option string, value any) {
		t.Helper()
		opts, err := structpb.NewStruct(map[string]any{"top_k": 5, option: value})
		if err != nil {
			t.Fatal(err)
		}
		req := &llmrelayv1.GenerateRequest{Model: model, Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "go"}}, ProviderOptions: opts}
		events, err := servertest.Collect(t.Context(), in.Client, req)
		optionRefused(t, events, err, "provider_options."+option, map[string]string{"option": option, "provider": "claude"})
	}
	t.Run("gRPC: mcp_servers", func(t *testing.T) { grpcRefuses(t, "claude/claude-x", "mcp_servers", mcp) })
	t.Run("gRPC: container", func(t *testing.T) { grpcRefuses(t, "claude/claude-x", "container", "container_011CQ") })
	t.Run("gRPC: a route, one of whose targets refuses", func(t *testing.T) { grpcRefuses(t, "smart", "mcp_servers", mcp) })

	t.Run("the Anthropic door: mcp_servers", func(t *testing.T) {
		status, body := postMessagesBody(t, base, `{"model":"claude/claude-x","max_tokens":64,`+
			`"mcp_servers":[{"type":"url","url":"https://tenant.example/mcp","name":"theirs"}],"messages":[{"role":"user","content":"hi"}]}`)
		typ, msg := anthropicError(t, status, body)
		if status != http.StatusForbidden || typ != "permission_error" || !strings.HasPrefix(msg, "mcp_servers: not allowed with provider \"claude\"") {
			t.Errorf("%d %s %q, want 403 permission_error naming mcp_servers", status, typ, msg)
		}
	})
	if n, m := len(strict.Requests()), len(open.Requests()); n != 0 || m != 0 {
		t.Fatalf("upstream requests %d and %d, want the refused calls to make none", n, m)
	}

	t.Run("the Anthropic door: an option the policy leaves alone", func(t *testing.T) {
		status, body := postMessagesBody(t, base, `{"model":"claude/claude-x","max_tokens":64,"top_k":5,"messages":[{"role":"user","content":"hi"}]}`)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		reqs := strict.Requests()
		if len(reqs) != 1 {
			t.Fatalf("the upstream got %d requests, want 1", len(reqs))
		}
		var sent map[string]any
		if err := json.Unmarshal(reqs[0].Body, &sent); err != nil {
			t.Fatal(err)
		}
		if sent["top_k"] != 5.0 {
			t.Errorf("upstream top_k %v, want 5", sent["top_k"])
		}
	})
}

// postMessagesBody posts a Messages request body to the Anthropic door, as
// an Anthropic SDK does (anthropic-version, and the given anthropic-beta
// header values), and returns the response's status and body.
func postMessagesBody(t *testing.T, base, body string, betas ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	for _, b := range betas {
		req.Header.Add("anthropic-beta", b)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// anthropicError returns the type and message of an error body in
// Anthropic's shape ({"error": {"type", "message"}}).
func anthropicError(t *testing.T, status int, body string) (typ, message string) {
	t.Helper()
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("%d %s: %v", status, body, err)
	}
	return e.Error.Type, e.Error.Message
}

// optionRefused checks that a Generate failed, before any event, with
// PERMISSION_DENIED PROVIDER_OPTION_NOT_ALLOWED on field, its ErrorInfo's
// metadata holding want.
func optionRefused(t *testing.T, events []*llmrelayv1.GenerateEvent, err error, field string, want map[string]string) {
	t.Helper()
	code, info, _ := errorInfo(err)
	md := info.GetMetadata()
	ok := code == codes.PermissionDenied && info.GetReason() == "PROVIDER_OPTION_NOT_ALLOWED" && fieldOf(status.Convert(err)) == field && len(events) == 0
	for k, v := range want {
		ok = ok && md[k] == v
	}
	if !ok {
		t.Errorf("error %v (field %q, metadata %v) after %d events, want PERMISSION_DENIED PROVIDER_OPTION_NOT_ALLOWED on %s with %v before any",
			err, fieldOf(status.Convert(err)), md, len(events), field, want)
	}
}
