package client_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

func echoRequest(text string) *llmrelayv1.GenerateRequest {
	return &llmrelayv1.GenerateRequest{
		Model:    "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: text}},
	}
}

func TestAgainstTheServer(t *testing.T) {
	c := client.FromConn(servertest.Start(t, nil).Conn)

	t.Run("Generate and Collect", func(t *testing.T) {
		stream, err := c.Generate(t.Context(), echoRequest("the quick brown fox"))
		if err != nil {
			t.Fatal(err)
		}
		var shown strings.Builder
		final, err := client.Collect(stream, &client.Hooks{OnDelta: func(d *llmrelayv1.Delta) { shown.WriteString(d.GetText()) }})
		if err != nil {
			t.Fatal(err)
		}
		if final.GetMessage().GetContent() != "the quick brown fox" || shown.String() != "the quick brown fox" {
			t.Errorf("final %q, shown %q", final.GetMessage().GetContent(), shown.String())
		}
	})

	t.Run("a refused call is an *Error with its details", func(t *testing.T) {
		req := echoRequest("hi")
		req.Model = "nosuch/model"
		stream, err := c.Generate(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.Collect(stream, nil)
		var e *client.Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %T %v, want *client.Error", err, err)
		}
		if e.Code != codes.InvalidArgument || e.Reason != "UNKNOWN_PROVIDER" || e.Domain != client.Domain ||
			len(e.FieldViolations) != 1 || e.FieldViolations[0].GetField() != "model" {
			t.Errorf("error = %+v", e)
		}
	})
}

// fakeRelay is an LLMService whose first calls fail, for testing what the
// client does around the server rather than the server.
type fakeRelay struct {
	llmrelayv1.UnimplementedLLMServiceServer
	failFirst int        // calls that fail with failCode before sending anything
	failCode  codes.Code // UNAVAILABLE unless set
	midstream bool       // Generate fails with UNAVAILABLE after one delta

	mu    sync.Mutex
	calls int
	auth  []string
}

func (f *fakeRelay) begin(ctx context.Context) (fail bool, code codes.Code) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	md, _ := metadata.FromIncomingContext(ctx)
	f.auth = append(f.auth, strings.Join(md.Get("authorization"), ";"))
	code = f.failCode
	if code == codes.OK {
		code = codes.Unavailable
	}
	return f.calls <= f.failFirst, code
}

func (f *fakeRelay) ListModels(ctx context.Context, _ *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
	if fail, code := f.begin(ctx); fail {
		return nil, status.Error(code, "not now")
	}
	return &llmrelayv1.ListModelsResponse{Models: []*llmrelayv1.Model{{Id: "mock/echo"}}}, nil
}

func (f *fakeRelay) Generate(_ *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	if fail, code := f.begin(stream.Context()); fail {
		return status.Error(code, "not now")
	}
	if err := stream.Send(&llmrelayv1.GenerateEvent{Sequence: 1, Attempt: 1, Event: &llmrelayv1.GenerateEvent_Delta{Delta: &llmrelayv1.Delta{Text: "ok"}}}); err != nil {
		return err
	}
	if f.midstream {
		return status.Error(codes.Unavailable, "dropped")
	}
	return stream.Send(&llmrelayv1.GenerateEvent{Sequence: 2, Attempt: 1, Event: &llmrelayv1.GenerateEvent_Final{Final: &llmrelayv1.Final{
		Message: &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: "ok"}, Attempts: 1,
	}}})
}

func (f *fakeRelay) seen() (int, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, append([]string(nil), f.auth...)
}

// serve starts f on a free loopback port and returns a Client for it made
// by New, so with the recommended service config.
func serve(t *testing.T, f *fakeRelay, opts ...client.Option) *client.Client {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	llmrelayv1.RegisterLLMServiceServer(srv, f)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	c, err := client.New(lis.Addr().String(), append([]client.Option{client.WithInsecure()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestServiceConfigRetries(t *testing.T) {
	tests := []struct {
		name      string
		fake      *fakeRelay
		generate  bool
		wantErr   codes.Code
		wantCalls int
	}{
		{name: "ListModels after UNAVAILABLE", fake: &fakeRelay{failFirst: 2}, wantCalls: 3},
		{name: "ListModels not after RESOURCE_EXHAUSTED", fake: &fakeRelay{failFirst: 1, failCode: codes.ResourceExhausted}, wantErr: codes.ResourceExhausted, wantCalls: 1},
		{name: "Generate after UNAVAILABLE before its first event", fake: &fakeRelay{failFirst: 2}, generate: true, wantCalls: 3},
		{name: "Generate not once events flowed", fake: &fakeRelay{midstream: true}, generate: true, wantErr: codes.Unavailable, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, tt.fake)
			var err error
			if tt.generate {
				var stream *client.Stream
				if stream, err = c.Generate(t.Context(), echoRequest("ok")); err == nil {
					_, err = client.Collect(stream, nil)
				}
			} else {
				_, err = c.ListModels(t.Context(), &llmrelayv1.ListModelsRequest{})
			}
			if status.Code(err) != tt.wantErr {
				t.Errorf("err = %v, want code %v", err, tt.wantErr)
			}
			if calls, _ := tt.fake.seen(); calls != tt.wantCalls {
				t.Errorf("the server saw %d calls, want %d", calls, tt.wantCalls)
			}
		})
	}
}

func TestWithAPIKeySendsABearerToken(t *testing.T) {
	f := &fakeRelay{}
	c := serve(t, f, client.WithAPIKey("s3cret"))
	if _, err := c.ListModels(t.Context(), &llmrelayv1.ListModelsRequest{}); err != nil {
		t.Fatal(err)
	}
	stream, err := c.Generate(t.Context(), echoRequest("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Collect(stream, nil); err != nil {
		t.Fatal(err)
	}
	if _, auth := f.seen(); strings.Join(auth, ",") != "Bearer s3cret,Bearer s3cret" {
		t.Errorf("authorization headers = %q", auth)
	}
}

func TestNewRejectsTLSWithInsecure(t *testing.T) {
	if _, err := client.New("127.0.0.1:1", client.WithInsecure(), client.WithTLS(nil)); err == nil {
		t.Error("New accepted both WithInsecure and WithTLS")
	}
}

func TestPublishedServiceConfigIsTheOneInUse(t *testing.T) {
	published, err := os.ReadFile("../docs/service-config.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(published, []byte(client.ServiceConfig)) {
		t.Error("docs/service-config.json differs from client/service_config.json: copy one over the other")
	}
}
