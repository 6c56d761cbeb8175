// Package servertest runs llmrelay's production server wiring in-process
// over bufconn, for tests: the same server.New that cmd/server uses, with a
// client connection to it.
package servertest

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
)

// Instance is a running in-process server and a client connected to it.
type Instance struct {
	Server *server.Server
	Conn   *grpc.ClientConn
	Client llmrelayv1.LLMServiceClient
	lis    *bufconn.Listener
	served chan error
	// httpServed reports the end of the HTTP doors' serving, once HTTP
	// started them.
	httpServed chan error
}

// Start builds the server from cfg (config.Default() with the mock provider
// when nil), serves it over bufconn and connects a client. Cleanup shuts
// both down.
func Start(t testing.TB, cfg *config.Config, opts ...server.Option) *Instance {
	t.Helper()
	if cfg == nil {
		cfg = config.Default()
	}
	if len(cfg.Providers) == 0 {
		cfg.Providers = config.DefaultProviders()
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("servertest: invalid config: %v", err)
	}
	srv, err := server.New(cfg, opts...)
	if err != nil {
		t.Fatalf("servertest: server.New: %v", err)
	}
	in := &Instance{Server: srv, lis: bufconn.Listen(1 << 20), served: make(chan error, 1)}
	go func() { in.served <- srv.Serve(in.lis) }()
	in.Conn = in.Dial(t)
	in.Client = llmrelayv1.NewLLMServiceClient(in.Conn)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-in.served
		if in.httpServed != nil {
			<-in.httpServed
		}
	})
	return in
}

// HTTP serves the server's HTTP doors (OpenAI's and Anthropic's APIs) on a
// free loopback port and returns their base URL, http://127.0.0.1:PORT.
// They stop with the server.
func (in *Instance) HTTP(t testing.TB) string {
	t.Helper()
	if in.httpServed != nil {
		t.Fatal("servertest: HTTP called twice")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("servertest: listen: %v", err)
	}
	in.httpServed = make(chan error, 1)
	go func() { in.httpServed <- in.Server.ServeHTTPDoors(lis) }()
	return "http://" + lis.Addr().String()
}

// Listen builds the server from cfg as Start does, but serves it on a free
// loopback TCP port, for tests that need a real network in between (a
// proxy, a client library's own dialing). It returns the address;
// cleanup shuts the server down.
func Listen(t testing.TB, cfg *config.Config, opts ...server.Option) (addr string, srv *server.Server) {
	t.Helper()
	srv, err := server.New(cfg, opts...)
	if err != nil {
		t.Fatalf("servertest: server.New: %v", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("servertest: listen: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-served
	})
	return lis.Addr().String(), srv
}

// Dial opens another client connection to the server, closed at cleanup.
func (in *Instance) Dial(t testing.TB, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts = append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return in.lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, opts...)
	conn, err := grpc.NewClient("passthrough:///bufnet", opts...)
	if err != nil {
		t.Fatalf("servertest: dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Collect runs Generate and returns every event received and the status
// error that ended the stream (nil after a clean end).
func Collect(ctx context.Context, c llmrelayv1.LLMServiceClient, req *llmrelayv1.GenerateRequest) ([]*llmrelayv1.GenerateEvent, error) {
	stream, err := c.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	return ReadAll(stream)
}

// Receiver is a stream of events: Generate's or Resume's.
type Receiver interface {
	Recv() (*llmrelayv1.GenerateEvent, error)
}

// ReadAll reads s to its end and returns every event received and the
// status error that ended it (nil after a clean end).
func ReadAll(s Receiver) ([]*llmrelayv1.GenerateEvent, error) {
	var events []*llmrelayv1.GenerateEvent
	for {
		ev, err := s.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return events, nil
			}
			return events, err
		}
		events = append(events, ev)
	}
}

// CheckWholeReply fails t unless events are one call's events numbered 1,
// 2, 3, ... with no gap and no duplicate (as a client that resumed a call
// has them, its streams put together), whose deltas are reply, once, and
// whose last event is the final with reply as its message.
func CheckWholeReply(t testing.TB, events []*llmrelayv1.GenerateEvent, reply string) {
	t.Helper()
	var text strings.Builder
	for i, ev := range events {
		if ev.GetSequence() != uint64(i+1) {
			t.Fatalf("event %d has sequence %d: a gap or a duplicate", i, ev.GetSequence())
		}
		text.WriteString(ev.GetDelta().GetText())
	}
	if text.String() != reply {
		t.Fatalf("the deltas read %q, want the reply once: %q", text.String(), reply)
	}
	if len(events) == 0 || events[len(events)-1].GetFinal().GetMessage().GetContent() != reply {
		t.Fatalf("the last event is not the final with the reply: %v", events[len(events)-1:])
	}
}
