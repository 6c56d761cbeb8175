package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of the HTTP doors (internal/httpapi). A generation through
// them is also a Generate call: the call metrics count it with its
// interface label.
const (
	// NameHTTPResponses counts the HTTP doors' responses, by interface
	// ("openai", "openai-responses", "anthropic"), endpoint and HTTP status (a streamed reply
	// that ended with an error event counts with the 200 it began with).
	NameHTTPResponses = "llmrelay_http_responses_total"
	// NameHTTPDuration observes the HTTP doors' requests from their
	// arrival to their response's end, by interface and endpoint.
	NameHTTPDuration = "llmrelay_http_request_duration_seconds"
)

// EndpointUnknown is the endpoint label of a request no endpoint serves
// (a path the doors do not serve: 404; a door's path with another
// method: 405), whatever its path: the paths clients send are theirs to
// choose, and would grow the label without end.
const EndpointUnknown = "unknown"

// httpMetrics are the HTTP doors' collectors.
type httpMetrics struct {
	responses *prometheus.CounterVec
	duration  *prometheus.HistogramVec
}

func newHTTPMetrics(reg *prometheus.Registry) httpMetrics {
	h := httpMetrics{
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameHTTPResponses,
			Help: "Responses of the OpenAI- and Anthropic-compatible HTTP endpoints, by interface, endpoint and HTTP status.",
		}, []string{"interface", "endpoint", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameHTTPDuration,
			Help:    "Time from an HTTP endpoint's request to the end of its response, by interface and endpoint.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 14),
		}, []string{"interface", "endpoint"}),
	}
	reg.MustRegister(h.responses, h.duration)
	return h
}

// HTTPResponse records one response of an HTTP door.
func (m *Metrics) HTTPResponse(iface, endpoint string, status int, d time.Duration) {
	if m == nil {
		return
	}
	m.http.responses.WithLabelValues(iface, endpoint, strconv.Itoa(status)).Inc()
	m.http.duration.WithLabelValues(iface, endpoint).Observe(d.Seconds())
}
