package interceptors

import (
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/interceptors/callinfo"
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
	c := serve(t, svc, Guard(discardLogger()), ResolveModel(testProviders(t, "mock", "secret-upstream")))

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
