package metrics

import (
	"context"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
)

// ServerMetrics is the per-RPC server metrics (grpc_server_*: started,
// handled by code, messages received and sent, handling time) with the
// names, help, labels and values of go-grpc-middleware's Prometheus
// provider (grpcprom), whose ServerMetrics it replaced. It differs in one
// thing: the series of every registered method are looked up once, when
// the server's services are known (InitializeMetrics), not by their label
// values for every message; a streamed call of 21 messages made 23 lookups
// (and as many label slices) and now makes one map read. The interceptors
// are still go-grpc-middleware's (interceptors.StreamServerInterceptor and
// UnaryServerInterceptor), with this as their reporter.
type ServerMetrics struct {
	started, handled, received, sent *prometheus.CounterVec
	handling                         *prometheus.HistogramVec

	// methods are the registered methods' series; written by
	// InitializeMetrics before the server serves, read-only afterwards.
	methods map[methodKey]*methodSeries
}

type methodKey struct{ service, method string }

// methodSeries are one method's series.
type methodSeries struct {
	started, received, sent prometheus.Counter
	handling                prometheus.Observer
	// handled is by code, resolved for a registered method; otherwise
	// looked up in handledVec by labels and the code when the call ends.
	handled    [codes.Unauthenticated + 1]prometheus.Counter
	handledVec *prometheus.CounterVec
	labels     [3]string // grpc_type, grpc_service, grpc_method
}

var serverLabels = []string{"grpc_type", "grpc_service", "grpc_method"}

func newServerMetrics(buckets []float64) *ServerMetrics {
	return &ServerMetrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_started_total",
			Help: "Total number of RPCs started on the server.",
		}, serverLabels),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_handled_total",
			Help: "Total number of RPCs completed on the server, regardless of success or failure.",
		}, append(serverLabels[:3:3], "grpc_code")),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_received_total",
			Help: "Total number of RPC stream messages received on the server.",
		}, serverLabels),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_sent_total",
			Help: "Total number of gRPC stream messages sent by the server.",
		}, serverLabels),
		handling: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "grpc_server_handling_seconds",
			Help:    "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
			Buckets: buckets,
		}, serverLabels),
		methods: map[methodKey]*methodSeries{},
	}
}

// Describe implements prometheus.Collector.
func (m *ServerMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.started.Describe(ch)
	m.handled.Describe(ch)
	m.received.Describe(ch)
	m.sent.Describe(ch)
	m.handling.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *ServerMetrics) Collect(ch chan<- prometheus.Metric) {
	m.started.Collect(ch)
	m.handled.Collect(ch)
	m.received.Collect(ch)
	m.sent.Collect(ch)
	m.handling.Collect(ch)
}

// InitializeMetrics creates the series of every method registered on
// server, at zero (every code of handled), and resolves them for the
// interceptors. Call it once, after registering the services and before
// serving.
func (m *ServerMetrics) InitializeMetrics(server reflection.ServiceInfoProvider) {
	for service, info := range server.GetServiceInfo() {
		for _, mi := range info.Methods {
			typ := string(methodType(mi.IsClientStream, mi.IsServerStream))
			s := &methodSeries{
				started:    m.started.WithLabelValues(typ, service, mi.Name),
				received:   m.received.WithLabelValues(typ, service, mi.Name),
				sent:       m.sent.WithLabelValues(typ, service, mi.Name),
				handling:   m.handling.WithLabelValues(typ, service, mi.Name),
				handledVec: m.handled,
				labels:     [3]string{typ, service, mi.Name},
			}
			for _, c := range interceptors.AllCodes {
				s.handled[c] = m.handled.WithLabelValues(typ, service, mi.Name, c.String())
			}
			m.methods[methodKey{service, mi.Name}] = s
		}
	}
}

// methodType is grpcprom's grpc_type of a method.
func methodType(clientStream, serverStream bool) interceptors.GRPCType {
	switch {
	case clientStream && serverStream:
		return interceptors.BidiStream
	case clientStream:
		return interceptors.ClientStream
	case serverStream:
		return interceptors.ServerStream
	}
	return interceptors.Unary
}

// UnaryServerInterceptor records the metrics of unary calls.
func (m *ServerMetrics) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return interceptors.UnaryServerInterceptor(m)
}

// StreamServerInterceptor records the metrics of streaming calls.
func (m *ServerMetrics) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return interceptors.StreamServerInterceptor(m)
}

// ServerReporter implements interceptors.ServerReportable: the call's
// method's resolved series, or (a method not registered when the metrics
// were initialised) series looked up by label values now.
func (m *ServerMetrics) ServerReporter(ctx context.Context, meta interceptors.CallMeta) (interceptors.Reporter, context.Context) {
	s, ok := m.methods[methodKey{meta.Service, meta.Method}]
	if !ok {
		s = m.lookup(meta)
	}
	s.started.Inc()
	return (*serverReporter)(s), ctx
}

// lookup resolves meta's series by label values (handled, per code, only
// when the call ends: an unregistered method gets no zero series).
func (m *ServerMetrics) lookup(meta interceptors.CallMeta) *methodSeries {
	typ := string(meta.Typ)
	return &methodSeries{
		started:    m.started.WithLabelValues(typ, meta.Service, meta.Method),
		received:   m.received.WithLabelValues(typ, meta.Service, meta.Method),
		sent:       m.sent.WithLabelValues(typ, meta.Service, meta.Method),
		handling:   m.handling.WithLabelValues(typ, meta.Service, meta.Method),
		handledVec: m.handled,
		labels:     [3]string{typ, meta.Service, meta.Method},
	}
}

// serverReporter reports one call to its method's series.
type serverReporter methodSeries

func (r *serverReporter) PostCall(err error, d time.Duration) {
	// As grpcprom: a non-status error is classified as gRPC classifies it
	// (context errors by their kind, anything else Unknown).
	s, ok := status.FromError(err)
	if !ok {
		s = status.FromContextError(err)
	}
	(*methodSeries)(r).handledFor(s.Code()).Inc()
	r.handling.Observe(d.Seconds())
}

func (r *serverReporter) PostMsgSend(_ any, err error, _ time.Duration) {
	if err == nil {
		r.sent.Inc()
	}
}

func (r *serverReporter) PostMsgReceive(_ any, err error, _ time.Duration) {
	if err == nil {
		r.received.Inc()
	}
}

// handledFor returns the handled series for code.
func (s *methodSeries) handledFor(code codes.Code) prometheus.Counter {
	if int(code) < len(s.handled) && s.handled[code] != nil {
		return s.handled[code]
	}
	return s.handledVec.WithLabelValues(s.labels[0], s.labels[1], s.labels[2], code.String())
}
