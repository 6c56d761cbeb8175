package client

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// deadlineStub records the deadline of each listing call it receives.
type deadlineStub struct {
	llmrelayv1.LLMServiceClient
	deadlines []time.Time // the zero time: none
}

func (s *deadlineStub) record(ctx context.Context) {
	d, _ := ctx.Deadline()
	s.deadlines = append(s.deadlines, d)
}

func (s *deadlineStub) ListModels(ctx context.Context, _ *llmrelayv1.ListModelsRequest, _ ...grpc.CallOption) (*llmrelayv1.ListModelsResponse, error) {
	s.record(ctx)
	return &llmrelayv1.ListModelsResponse{}, nil
}

func (s *deadlineStub) ListTools(ctx context.Context, _ *llmrelayv1.ListToolsRequest, _ ...grpc.CallOption) (*llmrelayv1.ListToolsResponse, error) {
	s.record(ctx)
	return &llmrelayv1.ListToolsResponse{}, nil
}

// TestListCallsAreBounded checks that ListModels and ListTools, called
// with a context without a deadline, send one of 30s (a silent connection
// does not hang the caller for ever, as in the TypeScript and Python
// clients), and keep a deadline of the caller's, longer ones included.
func TestListCallsAreBounded(t *testing.T) {
	list := map[string]func(c *Client, ctx context.Context) error{
		"ListModels": func(c *Client, ctx context.Context) error {
			_, err := c.ListModels(ctx, &llmrelayv1.ListModelsRequest{})
			return err
		},
		"ListTools": func(c *Client, ctx context.Context) error {
			_, err := c.ListTools(ctx, &llmrelayv1.ListToolsRequest{})
			return err
		},
	}
	for name, call := range list {
		t.Run(name, func(t *testing.T) {
			stub := &deadlineStub{}
			c := &Client{stub: stub}
			before := time.Now()
			if err := call(c, context.Background()); err != nil {
				t.Fatal(err)
			}
			long, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			if err := call(c, long); err != nil {
				t.Fatal(err)
			}
			want, _ := long.Deadline()
			if len(stub.deadlines) != 2 {
				t.Fatalf("calls = %d, want 2", len(stub.deadlines))
			}
			switch got := stub.deadlines[0]; {
			case got.IsZero():
				t.Error("without a deadline of the caller's: the call has none, want 30s")
			case got.Before(before.Add(30*time.Second)) || got.After(time.Now().Add(30*time.Second)):
				t.Errorf("without a deadline of the caller's: deadline %v after the call, want 30s", got.Sub(before))
			}
			if got := stub.deadlines[1]; !got.Equal(want) {
				t.Errorf("with the caller's 10m deadline: deadline %v, want the caller's %v", got, want)
			}
		})
	}
}
