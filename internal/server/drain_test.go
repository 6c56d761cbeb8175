package server_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// TestDrainDelayServesNewCallsWhileNotServing: during the drain delay the
// health service says NOT_SERVING (what a load balancer or kubelet reads),
// yet new calls, on old and new connections, are still served in full; the
// server stops accepting only when the delay is over.
func TestDrainDelayServesNewCallsWhileNotServing(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.DrainDelay = time.Hour // ended by the test through Shutdown's context
	in := servertest.Start(t, cfg)
	health := healthpb.NewHealthClient(in.Conn)
	watchCtx, stopWatch := context.WithCancel(t.Context())
	defer stopWatch()
	watch, err := health.Watch(watchCtx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := watch.Recv(); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health before shutdown: %v, %v", st.GetStatus(), err)
	}

	endDrain, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		in.Server.Shutdown(endDrain)
		close(done)
	}()
	if st, err := watch.Recv(); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health once shutdown began: %v, %v; want NOT_SERVING", st.GetStatus(), err)
	}
	for _, svc := range []string{"", llmrelayv1.LLMService_ServiceDesc.ServiceName} {
		if resp, err := health.Check(t.Context(), &healthpb.HealthCheckRequest{Service: svc}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("Check(%q) during the drain delay: %v, %v; want NOT_SERVING", svc, resp.GetStatus(), err)
		}
	}
	for name, conn := range map[string]*grpc.ClientConn{"existing": in.Conn, "new": in.Dial(t)} {
		events, err := servertest.Collect(t.Context(), llmrelayv1.NewLLMServiceClient(conn), echoRequest("still here"))
		if err != nil || len(events) == 0 || events[len(events)-1].GetFinal().GetMessage().GetContent() != "still here" {
			t.Errorf("a call on a %s connection during the drain delay: %v after %d events, want its final", name, err, len(events))
		}
	}
	select {
	case <-done:
		t.Fatal("Shutdown returned before its drain delay ended")
	default:
	}

	cancel()
	<-done
	_, err = servertest.Collect(t.Context(), in.Client, echoRequest("late"))
	if status.Code(err) != codes.Unavailable {
		t.Errorf("a call after the drain: %v, want UNAVAILABLE", err)
	}
}

// acceptCounter reports each connection the server accepts.
type acceptCounter struct {
	net.Listener
	accepted chan struct{}
}

func (l *acceptCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted <- struct{}{}
	}
	return c, err
}

// TestMaxConnectionAgeMakesClientsReconnect: once its connection is older
// than limits.max_connection_age, the server sends GOAWAY; the client's next
// call opens a new connection (which an L4 balancer may send to another
// replica), and the call already running on the old one still completes.
func TestMaxConnectionAgeMakesClientsReconnect(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = config.DefaultProviders()
	cfg.Limits.MaxConnectionAge = 200 * time.Millisecond // grace: deadlines.max
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lis := &acceptCounter{Listener: tcp, accepted: make(chan struct{}, 16)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Shutdown(context.Background())
		<-served
	})
	conn, err := grpc.NewClient(tcp.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	client := llmrelayv1.NewLLMServiceClient(conn)

	// A call long enough to outlive the connection's age.
	long, err := client.Generate(t.Context(), slowEcho(t, 100, 20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := long.Recv(); err != nil {
		t.Fatal(err)
	}
	<-lis.accepted

	// The GOAWAY takes the channel out of READY. The deadline only guards
	// against a hang; the age is 200ms.
	guard, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for st := conn.GetState(); st == connectivity.Ready; st = conn.GetState() {
		if !conn.WaitForStateChange(guard, st) {
			t.Fatal("the server never sent GOAWAY: the connection stayed READY past max_connection_age")
		}
	}

	events, err := servertest.Collect(t.Context(), client, echoRequest("on a new connection"))
	if err != nil || events[len(events)-1].GetFinal() == nil {
		t.Fatalf("a call after GOAWAY: %v", err)
	}
	select {
	case <-lis.accepted:
	case <-guard.Done():
		t.Fatal("the call after GOAWAY did not open a new connection")
	}

	var final *llmrelayv1.Final
	for final == nil {
		ev, err := long.Recv()
		if err != nil {
			t.Fatalf("the call on the aged connection ended with %v before its final", err)
		}
		final = ev.GetFinal()
	}
	if got := len(final.GetMessage().GetContent()); got != 200 {
		t.Errorf("the call on the aged connection got %d bytes, want the whole 200-byte echo", got)
	}
}

// TestShutdownEndsHealthWatches: a health watch (gRPC client-side health
// checking keeps one open per connection) sees NOT_SERVING during the
// drain delay and is ended when it is over, so that it does not hold the
// shutdown for the whole grace period.
func TestShutdownEndsHealthWatches(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.DrainDelay = time.Millisecond
	cfg.ShutdownGrace = time.Hour
	in := servertest.Start(t, cfg)
	watch, err := healthpb.NewHealthClient(in.Conn).Watch(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := watch.Recv(); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health before shutdown: %v, %v", st.GetStatus(), err)
	}
	done := make(chan struct{})
	go func() {
		in.Server.Shutdown(context.Background())
		close(done)
	}()
	if st, err := watch.Recv(); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health once shutdown began: %v, %v; want NOT_SERVING", st.GetStatus(), err)
	}
	select {
	case <-done:
	case <-time.After(time.Minute): // a guard against hangs; the grace is an hour
		t.Fatal("an open health watch held the shutdown")
	}
	if _, err := watch.Recv(); err == nil {
		t.Error("the watch went on after the shutdown")
	}
}
