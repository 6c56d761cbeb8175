package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of server tools (internal/servertools): the MCP tools
// llmrelay runs inside a call. Their server label is bounded by the
// config; their tool label by MaxToolNames: the tools a server offers are
// the names it lists that its `allow` patterns match, and with a pattern
// (allow ["*"]) a server that renames its tools, or makes up names, would
// grow it without end.
const (
	// NameToolCalls counts server tool calls by MCP server, tool (its name
	// at the server) and result: "ok", "tool_error" (the tool returned
	// isError), "refused" (the server refused the call: unknown tool, bad
	// arguments), "timeout", "transport" (the server could not be reached
	// or dropped the call), "too_large" (the server's answer was longer
	// than its max_response_bytes), "malformed" (its result is not an MCP
	// tool result), "canceled" (the Generate call ended first).
	// One per call, whatever its retries.
	NameToolCalls = "llmrelay_tool_calls_total"
	// NameToolCallDuration observes each server tool call's duration,
	// retries included, by MCP server, tool and result.
	NameToolCallDuration = "llmrelay_tool_call_duration_seconds"
	// NameToolRetries counts the tries of idempotent tools made again
	// after a transport failure or a timeout, by MCP server and tool.
	NameToolRetries = "llmrelay_tool_retries_total"
	// NameMCPServerUp is 1 while llmrelay is connected to an MCP server and
	// has listed its tools, 0 while it is not, by server.
	NameMCPServerUp = "llmrelay_mcp_server_up"
)

// MaxToolNames bounds the tool label per MCP server: a server's first
// MaxToolNames tool names keep their label, later ones are counted as
// OtherTool.
const MaxToolNames = 100

// OtherTool is the tool label of the tools beyond MaxToolNames. It is no
// name MCP allows a tool (ASCII letters, digits, '_', '-' and '.'), so that
// a server's tool named "other" keeps a series of its own; llmrelay still
// offers a tool whose name breaks that rule (internal/servertools refuses
// only an empty name or one with control characters), so only a tool
// named "(other)" itself would share it.
const OtherTool = "(other)"

// toolMetrics are the collectors of server tools.
type toolMetrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	retries  *prometheus.CounterVec
	up       *prometheus.GaugeVec
	// names bounds the tool label, per server.
	names *labelBound
}

func newToolMetrics(reg *prometheus.Registry) toolMetrics {
	t := toolMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameToolCalls,
			Help: "Server tool calls, by MCP server, tool and result (ok, tool_error, refused, timeout, transport, too_large, malformed, canceled).",
		}, []string{"server", "tool", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameToolCallDuration,
			Help:    "Duration of server tool calls, retries included, by MCP server, tool and result.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"server", "tool", "result"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameToolRetries,
			Help: "Tries of idempotent server tools made again after a transport failure or a timeout, by MCP server and tool.",
		}, []string{"server", "tool"}),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: NameMCPServerUp,
			Help: "1 while llmrelay is connected to the MCP server and has listed its tools, 0 while it is not.",
		}, []string{"server"}),
		names: newLabelBound(MaxToolNames, OtherTool),
	}
	reg.MustRegister(t.calls, t.duration, t.retries, t.up)
	return t
}

// ToolCall records one server tool call's result and duration; tool is
// bounded per server (MaxToolNames).
func (m *Metrics) ToolCall(server, tool, result string, d time.Duration) {
	if m != nil {
		tool = m.tools.names.bound(server, tool)
		m.tools.calls.WithLabelValues(server, tool, result).Inc()
		m.tools.duration.WithLabelValues(server, tool, result).Observe(d.Seconds())
	}
}

// ToolRetry counts one more try of an idempotent tool, bounded as
// ToolCall's.
func (m *Metrics) ToolRetry(server, tool string) {
	if m != nil {
		tool = m.tools.names.bound(server, tool)
		m.tools.retries.WithLabelValues(server, tool).Inc()
	}
}

// MCPServerUp records whether an MCP server answers.
func (m *Metrics) MCPServerUp(server string, up bool) {
	if m == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	m.tools.up.WithLabelValues(server).Set(v)
}

// MCPServerRemoved drops a server that left the config from the up gauge.
func (m *Metrics) MCPServerRemoved(server string) {
	if m != nil {
		m.tools.up.DeleteLabelValues(server)
	}
}
