package interceptors

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/state"
)

func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

// anyModel is a provider kind that serves every model; its Stream is never
// called (fakeService stands in for the handler).
type anyModel struct{}

func (anyModel) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	return nil, errors.New("anyModel does not stream")
}

func init() {
	provider.Register("interceptors-test", func(provider.Config) (provider.Provider, error) { return anyModel{}, nil })
}

// testProviders returns a provider set with the named providers, each
// serving every model.
func testProviders(t testing.TB, names ...string) *provider.Set {
	t.Helper()
	cfgs := make([]provider.Config, len(names))
	for i, n := range names {
		cfgs[i] = provider.Config{Name: n, Kind: "interceptors-test"}
	}
	set, err := provider.NewSet(cfgs)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// testRoutes returns a route table over testProviders(names...).
func testRoutes(t testing.TB, routes []route.Config, names ...string) *route.Table {
	t.Helper()
	tb, err := route.NewTable(routes, testProviders(t, names...), route.Options{Policy: state.DefaultOutlierPolicy})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// fakeService stands in for internal/service: the links are under test, not
// the handlers. Unset funcs answer with a one-event stream and an empty list.
type fakeService struct {
	llmrelayv1.UnimplementedLLMServiceServer
	generate   func(*llmrelayv1.GenerateRequest, llmrelayv1.LLMService_GenerateServer) error
	listModels func(context.Context, *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error)
	resume     func(*llmrelayv1.ResumeRequest, llmrelayv1.LLMService_ResumeServer) error
}

func (f *fakeService) Resume(req *llmrelayv1.ResumeRequest, s llmrelayv1.LLMService_ResumeServer) error {
	if f.resume != nil {
		return f.resume(req, s)
	}
	return s.Send(&llmrelayv1.GenerateEvent{Sequence: 1, Attempt: 1, Event: &llmrelayv1.GenerateEvent_Final{Final: &llmrelayv1.Final{Attempts: 1}}})
}

func (f *fakeService) Generate(req *llmrelayv1.GenerateRequest, s llmrelayv1.LLMService_GenerateServer) error {
	if f.generate != nil {
		return f.generate(req, s)
	}
	return s.Send(&llmrelayv1.GenerateEvent{Sequence: 1, Attempt: 1, Event: &llmrelayv1.GenerateEvent_Final{Final: &llmrelayv1.Final{Attempts: 1}}})
}

func (f *fakeService) ListModels(ctx context.Context, req *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
	if f.listModels != nil {
		return f.listModels(ctx, req)
	}
	return &llmrelayv1.ListModelsResponse{}, nil
}

// testConn is a client connection to a bufconn server running links
// around svc, with the health service registered.
type testConn struct {
	conn   *grpc.ClientConn
	llm    llmrelayv1.LLMServiceClient
	health healthpb.HealthClient
}

func serve(t testing.TB, svc *fakeService, links ...Link) testConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(Chain(links...)...)
	llmrelayv1.RegisterLLMServiceServer(srv, svc)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		<-done
	})
	return testConn{conn: conn, llm: llmrelayv1.NewLLMServiceClient(conn), health: healthpb.NewHealthClient(conn)}
}

// generate runs a Generate call to its end and returns the events and the
// final error (nil on a clean end).
func (c testConn) generate(ctx context.Context, req *llmrelayv1.GenerateRequest) ([]*llmrelayv1.GenerateEvent, error) {
	stream, err := c.llm.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	var events []*llmrelayv1.GenerateEvent
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
}

func withKey(ctx context.Context, key string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func validRequest() *llmrelayv1.GenerateRequest {
	return &llmrelayv1.GenerateRequest{
		Model:    "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}},
	}
}

// wantStatus fails the test unless err is a status with code and an
// ErrorInfo of domain llmrelay with reason, and returns the status.
func wantStatus(t *testing.T, err error, code codes.Code, reason string) *status.Status {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != code {
		t.Fatalf("error = %v, want code %v", err, code)
	}
	ei := findDetail[*errdetails.ErrorInfo](st)
	if ei == nil {
		t.Fatalf("status %v has no ErrorInfo", st)
	}
	if diff := cmp.Diff([]string{"llmrelay", reason}, []string{ei.GetDomain(), ei.GetReason()}); diff != "" {
		t.Fatalf("ErrorInfo (-want +got):\n%s", diff)
	}
	return st
}

func findDetail[T any](st *status.Status) T {
	var zero T
	for _, d := range st.Details() {
		if v, ok := d.(T); ok {
			return v
		}
	}
	return zero
}

func testKeys(t testing.TB, cfgs ...auth.KeyConfig) *auth.Keyring {
	t.Helper()
	k, err := auth.NewKeyring(cfgs)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// keyAuth is the engine's authenticator over keys, without a throttle
// (none when keys is empty: every call passes).
func keyAuth(keys *auth.Keyring) *engine.Authenticator {
	if keys.Len() == 0 {
		return &engine.Authenticator{}
	}
	return &engine.Authenticator{Keys: keys}
}
