package interceptors

import (
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

func TestRequestSize(t *testing.T) {
	const limit = 4 << 10
	c := serve(t, &fakeService{}, RequestSize(limit))
	big := validRequest()
	big.Messages[0].Content = strings.Repeat("x", limit)
	_, err := c.generate(testCtx(t), big)
	st := wantStatus(t, err, codes.ResourceExhausted, ReasonRequestTooLarge)
	if got := findDetail[*errdetails.ErrorInfo](st).GetMetadata()["max_bytes"]; got != "4096" {
		t.Errorf("max_bytes = %q", got)
	}
	if findDetail[*errdetails.RetryInfo](st) != nil {
		t.Error("RetryInfo on a request that never fits")
	}
	_, err = c.llm.ListModels(testCtx(t), &llmrelayv1.ListModelsRequest{Provider: strings.Repeat("p", limit)})
	wantStatus(t, err, codes.ResourceExhausted, ReasonRequestTooLarge)

	if _, err := c.generate(testCtx(t), validRequest()); err != nil {
		t.Fatalf("small request: %v", err)
	}
}
