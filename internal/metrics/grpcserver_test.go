package metrics

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
)

// serverMetrics is what the test needs of both implementations.
type serverMetrics interface {
	prometheus.Collector
	InitializeMetrics(s interface {
		GetServiceInfo() map[string]grpc.ServiceInfo
	})
	interceptors() (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor)
}

type ours struct{ *ServerMetrics }

func (o ours) InitializeMetrics(s interface {
	GetServiceInfo() map[string]grpc.ServiceInfo
}) {
	o.ServerMetrics.InitializeMetrics(s)
}

func (o ours) interceptors() (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	return o.UnaryServerInterceptor(), o.StreamServerInterceptor()
}

type theirs struct{ *grpcprom.ServerMetrics }

func (t theirs) InitializeMetrics(s interface {
	GetServiceInfo() map[string]grpc.ServiceInfo
}) {
	t.ServerMetrics.InitializeMetrics(s)
}

func (t theirs) interceptors() (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	return t.UnaryServerInterceptor(), t.StreamServerInterceptor()
}

var buckets = []float64{.001, .005, .01, .05, .1, .5, 1, 2.5, 5, 10, 30, 60, 120}

// TestServerMetricsMatchMiddleware runs the same calls (unary OK and
// NotFound, a stream that sends two messages and is cancelled) through
// go-grpc-middleware's Prometheus server metrics, which these replaced,
// and through ours, with and without the methods initialised first, and
// holds the two to the same families, help, series and values (the
// histograms by their counts: the times differ).
func TestServerMetricsMatchMiddleware(t *testing.T) {
	for _, initialize := range []bool{true, false} {
		t.Run(fmt.Sprintf("initialized=%v", initialize), func(t *testing.T) {
			want := exercise(t, theirs{grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(grpcprom.WithHistogramBuckets(buckets)))}, initialize)
			got := exercise(t, ours{newServerMetrics(buckets)}, initialize)
			if len(want) == 0 {
				t.Fatal("the middleware's metrics are empty")
			}
			if !slices.Equal(got, want) {
				t.Errorf("metrics differ from the middleware's:\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// exercise serves grpc.health.v1 with m's interceptors, makes the calls
// and returns m's metrics as sorted lines.
func exercise(t *testing.T, m serverMetrics, initialize bool) []string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	unary, stream := m.interceptors()
	s := grpc.NewServer(grpc.UnaryInterceptor(unary), grpc.StreamInterceptor(stream))
	hs := health.NewServer()
	hs.SetServingStatus("known", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	if initialize {
		m.InitializeMetrics(s)
	}
	lis := bufconn.Listen(1 << 20)
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := healthpb.NewHealthClient(conn)
	ctx := context.Background()
	for range 3 {
		if _, err := c.Check(ctx, &healthpb.HealthCheckRequest{Service: "known"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Check(ctx, &healthpb.HealthCheckRequest{Service: "unknown"}); status.Code(err) != codes.NotFound {
		t.Fatalf("Check(unknown) = %v, want NotFound", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	w, err := c.Watch(wctx, &healthpb.HealthCheckRequest{Service: "known"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	hs.SetServingStatus("known", healthpb.HealthCheckResponse_NOT_SERVING)
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := w.Recv(); status.Code(err) != codes.Canceled {
		t.Fatalf("Watch after cancel: %v, want Canceled", err)
	}
	// The server ends the watch after the client's cancellation; wait for
	// its handled count rather than for time.
	deadline := time.Now().Add(30 * time.Second)
	for {
		lines := gather(t, reg)
		if slices.ContainsFunc(lines, func(l string) bool {
			return strings.HasPrefix(l, "grpc_server_handled_total") && strings.Contains(l, `grpc_method="Watch"`) && strings.Contains(l, `grpc_code="Canceled"`) && strings.HasSuffix(l, " 1")
		}) {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled watch was not counted within 30s:\n%s", strings.Join(lines, "\n"))
		}
		time.Sleep(time.Millisecond)
	}
}

// gather returns reg's metrics as sorted lines: "# HELP" lines, then one
// line per series with its value (a histogram's count).
func gather(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, mf := range mfs {
		lines = append(lines, fmt.Sprintf("# HELP %s %s %s", mf.GetName(), mf.GetType(), mf.GetHelp()))
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			v := m.GetCounter().GetValue()
			if h := m.GetHistogram(); h != nil {
				v = float64(h.GetSampleCount())
				labels = append(labels, fmt.Sprintf("buckets=%d", len(h.GetBucket())))
			}
			lines = append(lines, fmt.Sprintf("%s{%s} %v", mf.GetName(), strings.Join(labels, ","), v))
		}
	}
	slices.Sort(lines)
	return lines
}
