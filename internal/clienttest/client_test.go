package clienttest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

func echoRequest(text string) *llmrelayv1.GenerateRequest {
	return &llmrelayv1.GenerateRequest{
		Model:    "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: text}},
	}
}

// withFaults sets the mock provider's fault plan, a short backoff and at
// most maxAttempts attempts.
func withFaults(t *testing.T, req *llmrelayv1.GenerateRequest, maxAttempts uint32, faults ...any) *llmrelayv1.GenerateRequest {
	t.Helper()
	opts, err := structpb.NewStruct(map[string]any{"faults": faults})
	if err != nil {
		t.Fatal(err)
	}
	req.ProviderOptions = opts
	req.Retry = &llmrelayv1.RetryPolicy{MaxAttempts: maxAttempts, InitialBackoff: durationpb.New(10 * time.Millisecond)}
	return req
}

func TestCollectAgainstTheServer(t *testing.T) {
	const text = "the quick brown fox jumps"
	c := client.FromConn(servertest.Start(t, nil).Conn)
	unknownModel := echoRequest(text)
	unknownModel.Model = "nosuch/model"
	badRole := echoRequest(text)
	badRole.Messages[0].Role = 0
	tests := []struct {
		name          string
		req           *llmrelayv1.GenerateRequest
		wantDiscarded []string
		wantCauses    []string // the ErrorInfo reasons of the will_retry causes
		// for failed calls
		wantCode   codes.Code
		wantReason string
		wantDelay  time.Duration
		wantField  string
	}{
		{name: "one attempt", req: echoRequest(text)},
		{
			name:          "a restart mid-stream takes back the first attempt's text",
			req:           withFaults(t, echoRequest(text), 3, map[string]any{"drop_after": 2}),
			wantDiscarded: []string{"the quick "}, wantCauses: []string{"PROVIDER_TRANSPORT_ERROR"},
		},
		{
			name:          "a retry before any delta discards nothing",
			req:           withFaults(t, echoRequest(text), 3, map[string]any{"status": 503}),
			wantDiscarded: []string{""}, wantCauses: []string{"PROVIDER_OVERLOADED"},
		},
		{
			name:       "a rate limit with a hint, no retries left",
			req:        withFaults(t, echoRequest(text), 1, map[string]any{"status": 429, "retry_after_ms": 700}),
			wantCode:   codes.ResourceExhausted,
			wantReason: "RETRIES_EXHAUSTED",
			wantDelay:  700 * time.Millisecond,
		},
		{
			name:       "a refused request",
			req:        unknownModel,
			wantCode:   codes.InvalidArgument,
			wantReason: "UNKNOWN_PROVIDER",
			wantField:  "model",
		},
		{
			name:       "a request that breaks a rule of the proto",
			req:        badRole,
			wantCode:   codes.InvalidArgument,
			wantReason: "INVALID_REQUEST",
			wantField:  "messages[0].role",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream, err := c.Generate(t.Context(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var screen strings.Builder
			var discarded, causes []string
			final, err := client.Collect(stream, &client.Hooks{
				OnDelta: func(d *llmrelayv1.Delta) { screen.WriteString(d.GetText()) },
				OnWillRetry: func(w *llmrelayv1.WillRetry, gone string) {
					discarded = append(discarded, gone)
					causes = append(causes, client.CauseOf(w).Reason)
					shown := screen.String()
					screen.Reset()
					screen.WriteString(strings.TrimSuffix(shown, gone))
				},
			})
			if tt.wantCode != codes.OK {
				var e *client.Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %T %v, want *client.Error", err, err)
				}
				if e.Code != tt.wantCode || e.Reason != tt.wantReason || e.Domain != client.Domain || e.RetryDelay != tt.wantDelay || e.HasRetryDelay != (tt.wantDelay > 0) {
					t.Errorf("error = %+v", e)
				}
				if tt.wantField != "" && (len(e.FieldViolations) != 1 || e.FieldViolations[0].GetField() != tt.wantField) {
					t.Errorf("field violations = %v, want one for %q", e.FieldViolations, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatalf("Collect: %v", err)
			}
			// After the retries' erasures, the screen shows what the final says.
			if final.GetMessage().GetContent() != text || screen.String() != text {
				t.Errorf("final %q, screen %q; want both %q", final.GetMessage().GetContent(), screen.String(), text)
			}
			if fmt.Sprintf("%q", discarded) != fmt.Sprintf("%q", tt.wantDiscarded) || fmt.Sprint(causes) != fmt.Sprint(tt.wantCauses) {
				t.Errorf("will_retry discarded %q with causes %v, want %q with %v", discarded, causes, tt.wantDiscarded, tt.wantCauses)
			}
		})
	}
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

func (f *fakeRelay) Embed(ctx context.Context, req *llmrelayv1.EmbedRequest) (*llmrelayv1.EmbedResponse, error) {
	if fail, code := f.begin(ctx); fail {
		return nil, status.Error(code, "not now")
	}
	resp := &llmrelayv1.EmbedResponse{Attempts: 1}
	for range req.GetInputs() {
		resp.Embeddings = append(resp.Embeddings, &llmrelayv1.Embedding{Values: []float32{1, 0}})
	}
	return resp, nil
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
		embed     bool
		wantErr   codes.Code
		wantCalls int
	}{
		{name: "ListModels after UNAVAILABLE", fake: &fakeRelay{failFirst: 2}, wantCalls: 3},
		{name: "ListModels not after RESOURCE_EXHAUSTED", fake: &fakeRelay{failFirst: 1, failCode: codes.ResourceExhausted}, wantErr: codes.ResourceExhausted, wantCalls: 1},
		{name: "Embed after UNAVAILABLE", fake: &fakeRelay{failFirst: 2}, embed: true, wantCalls: 3},
		{name: "Embed not after RESOURCE_EXHAUSTED", fake: &fakeRelay{failFirst: 1, failCode: codes.ResourceExhausted}, embed: true, wantErr: codes.ResourceExhausted, wantCalls: 1},
		{name: "Generate after UNAVAILABLE before its first event", fake: &fakeRelay{failFirst: 2}, generate: true, wantCalls: 3},
		{name: "Generate not once events flowed", fake: &fakeRelay{midstream: true}, generate: true, wantErr: codes.Unavailable, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, tt.fake)
			var err error
			switch {
			case tt.generate:
				var stream *client.Stream
				if stream, err = c.Generate(t.Context(), echoRequest("ok")); err == nil {
					_, err = client.Collect(stream, nil)
				}
			case tt.embed:
				var resp *llmrelayv1.EmbedResponse
				resp, err = c.Embed(t.Context(), &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: []string{"a", "b"}})
				if err == nil && len(resp.GetEmbeddings()) != 2 {
					t.Errorf("%d embeddings, want 2", len(resp.GetEmbeddings()))
				}
				var e *client.Error
				if err != nil && !errors.As(err, &e) {
					t.Errorf("Embed's error is a %T, want a *client.Error", err)
				}
			default:
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
	published, err := os.ReadFile("../../docs/service-config.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(published, []byte(client.ServiceConfig)) {
		t.Error("docs/service-config.json differs from client/service_config.json: copy one over the other")
	}
}
