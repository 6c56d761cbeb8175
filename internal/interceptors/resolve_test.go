package interceptors

import (
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/route"
)

func TestResolveModel(t *testing.T) {
	targets := make(chan string, 1)
	svc := &fakeService{generate: func(_ *llmrelayv1.GenerateRequest, s llmrelayv1.LLMService_GenerateServer) error {
		target, ok := callinfo.From(s.Context()).Target()
		if !ok {
			targets <- "<none>"
			return nil
		}
		targets <- target.Entry.Config.Name + " " + target.Model
		return nil
	}}
	c := serve(t, svc, Guard(discardLogger()), ResolveModel(testRoutes(t, nil, "mock", "secret-upstream")))

	req := validRequest()
	req.Model = "mock/org/model:tag"
	if _, err := c.generate(testCtx(t), req); err != nil {
		t.Fatal(err)
	}
	if got := <-targets; got != "mock org/model:tag" {
		t.Errorf("the handler saw target %q, want the provider mock and the model after the first /", got)
	}

	tests := []struct {
		name, model, reason string
	}{
		{"unknown provider", "nope/x", "UNKNOWN_PROVIDER"},
		{"not <provider>/<model>", "mock/", "UNKNOWN_PROVIDER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := validRequest()
			req.Model = tt.model
			_, err := c.generate(testCtx(t), req)
			st := wantStatus(t, err, codes.InvalidArgument, tt.reason)
			br := findDetail[*errdetails.BadRequest](st)
			if v := br.GetFieldViolations(); len(v) != 1 || v[0].GetField() != "model" {
				t.Errorf("BadRequest = %v, want one violation of model", br)
			}
			// The configured providers are not the caller's business.
			if strings.Contains(st.Message(), "secret-upstream") {
				t.Errorf("the message lists the configured providers: %q", st.Message())
			}
			select {
			case got := <-targets:
				t.Errorf("the handler ran (target %s) for a model that does not resolve", got)
			default:
			}
		})
	}

	// Calls without a model (ListModels) pass.
	if _, err := c.llm.ListModels(testCtx(t), &llmrelayv1.ListModelsRequest{}); err != nil {
		t.Errorf("ListModels: %v", err)
	}
}

func TestResolveModelRoutesAndFallbacks(t *testing.T) {
	got := make(chan string, 1)
	svc := &fakeService{generate: func(_ *llmrelayv1.GenerateRequest, s llmrelayv1.LLMService_GenerateServer) error {
		res, ok := callinfo.From(s.Context()).Resolved()
		if !ok {
			got <- "<none>"
			return nil
		}
		var ts []string
		for _, t := range res.Targets {
			ts = append(ts, t.String())
		}
		route := ""
		if res.Route != nil {
			route = res.Route.Name + ": "
		}
		got <- route + strings.Join(ts, " ")
		return nil
	}}
	routes := testRoutes(t, []route.Config{{Name: "smart", Targets: []route.TargetConfig{{Model: "a/x"}, {Model: "b/y"}}}}, "a", "b")
	c := serve(t, svc, Guard(discardLogger()), ResolveModel(routes))

	req := validRequest()
	req.Model, req.FallbackModels = "smart", []string{"b/z", "a/x"}
	if _, err := c.generate(testCtx(t), req); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g != "smart: a/x b/y b/z" {
		t.Errorf("the handler saw %q, want the route's targets then the new fallback", g)
	}

	req.Model, req.FallbackModels = "a/w", []string{"b/z", "c/none"}
	_, err := c.generate(testCtx(t), req)
	st := wantStatus(t, err, codes.InvalidArgument, "UNKNOWN_PROVIDER")
	if v := findDetail[*errdetails.BadRequest](st).GetFieldViolations(); len(v) != 1 || v[0].GetField() != "fallback_models[1]" {
		t.Errorf("BadRequest = %v, want one violation of fallback_models[1]", v)
	}
	req.Model, req.FallbackModels = "clever", nil
	_, err = c.generate(testCtx(t), req)
	st = wantStatus(t, err, codes.InvalidArgument, "UNKNOWN_MODEL")
	if !strings.Contains(st.Message(), `"clever" is not a route`) || strings.Contains(st.Message(), "smart") {
		t.Errorf("message %q, want the unknown route named and the configured ones not", st.Message())
	}
}
