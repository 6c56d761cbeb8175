package interceptors

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
)

func TestDeadline(t *testing.T) {
	const def, maxD = 2 * time.Minute, 10 * time.Minute
	deadlines := make(chan time.Time, 1)
	record := func(ctx context.Context) {
		d, ok := ctx.Deadline()
		if !ok {
			d = time.Time{}
		}
		deadlines <- d
	}
	svc := &fakeService{
		generate: func(_ *llmrelayv1.GenerateRequest, s llmrelayv1.LLMService_GenerateServer) error {
			record(s.Context())
			return nil
		},
		listModels: func(ctx context.Context, _ *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
			record(ctx)
			return &llmrelayv1.ListModelsResponse{}, nil
		},
	}
	c := serve(t, svc, APIOnly(Deadline(def, maxD)))
	tests := []struct {
		name   string
		client time.Duration // 0: no client deadline
		want   time.Duration // the server-side deadline, from the call's start
	}{
		{"no client deadline gets the default", 0, def},
		{"a longer one is clamped to the max", time.Hour, maxD},
		{"a shorter one is kept, less the status margin", 5 * time.Minute, 5*time.Minute - StatusMargin},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name
			if stream {
				name += ", stream"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				if tt.client > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.client)
					defer cancel()
				}
				before := time.Now()
				var err error
				if stream {
					_, err = c.generate(ctx, validRequest())
				} else {
					_, err = c.llm.ListModels(ctx, &llmrelayv1.ListModelsRequest{})
				}
				after := time.Now()
				if err != nil {
					t.Fatal(err)
				}
				got := <-deadlines
				// The deadline is set between the call's start and its end.
				if got.Before(before.Add(tt.want).Add(-time.Second)) || got.After(after.Add(tt.want)) {
					t.Errorf("deadline %v from the start, want %v", got.Sub(before), tt.want)
				}
			})
		}
	}
}

func TestAPIOnlySkipsInfrastructure(t *testing.T) {
	link := APIOnly(Deadline(time.Hour, time.Hour))
	for method, wantDeadline := range map[string]bool{
		"/grpc.health.v1.Health/Watch":                              false,
		"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo": false,
		llmrelayv1.LLMService_Generate_FullMethodName:               true,
	} {
		var got bool
		err := link.StreamInterceptor()(nil, &ctxStream{ctx: context.Background()}, &grpc.StreamServerInfo{FullMethod: method},
			func(_ any, ss grpc.ServerStream) error {
				_, got = ss.Context().Deadline()
				return nil
			})
		if err != nil || got != wantDeadline {
			t.Errorf("%s: deadline set = %v (err %v), want %v", method, got, err, wantDeadline)
		}
	}
}

// ctxStream is a grpc.ServerStream with only a context, for calling stream
// interceptors directly.
type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

// TestDeadlineStatusBeatsTheReset: a call that ends at its client's own
// deadline gets its DEADLINE_EXCEEDED status, ErrorInfo included, to the
// client, even from a handler that takes a while to notice and answer (a
// loaded machine): grpc-go's server resets the stream at the very
// deadline the client sent, and a client that sees the reset first gets
// no ErrorInfo (grpc-go's own client turns it into DEADLINE_EXCEEDED;
// others, Python's among them, report CANCELLED). The link ends the call
// StatusMargin early, and no earlier.
func TestDeadlineStatusBeatsTheReset(t *testing.T) {
	const wait = 5 * time.Second // its twentieth is more than the margin
	const slow = 20 * time.Millisecond
	ended := make(chan time.Time, 1)
	svc := &fakeService{
		generate: func(_ *llmrelayv1.GenerateRequest, s llmrelayv1.LLMService_GenerateServer) error {
			<-s.Context().Done()
			ended <- time.Now()
			time.Sleep(slow)
			return apierr.FromError(context.Cause(s.Context()))
		},
	}
	c := serve(t, svc, APIOnly(Deadline(time.Minute, time.Hour)))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	clientDeadline, _ := ctx.Deadline()
	_, err := c.generate(ctx, validRequest())
	wantStatus(t, err, codes.DeadlineExceeded, apierr.ReasonDeadlineExceeded)
	// The server's deadline counts from when the request arrived: never
	// before the client's, less the margin.
	if early := clientDeadline.Sub(<-ended); early > StatusMargin {
		t.Errorf("the call ended %v before the client's deadline, want at most %v", early, StatusMargin)
	}
}
