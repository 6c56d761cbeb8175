package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The GenAI conventions' attributes of a tool execution span, and
// llmrelay's own.
const (
	AttrToolName   = attribute.Key("gen_ai.tool.name")
	AttrToolCallID = attribute.Key("gen_ai.tool.call.id")
	AttrToolType   = attribute.Key("gen_ai.tool.type")
	// AttrToolServer is the configured MCP server the tool belongs to.
	AttrToolServer = attribute.Key("llmrelay.tool.server")
	// AttrToolAttempts counts the tries of a tool call (more than 1 when
	// an idempotent tool was called again).
	AttrToolAttempts = attribute.Key("llmrelay.tool.attempts")
	// AttrToolTruncated says the tool's result was cut at
	// tools.max_tool_result_bytes.
	AttrToolTruncated = attribute.Key("llmrelay.tool.truncated")
	// AttrTurn is the turn of the call a span belongs to, from 1.
	AttrTurn = attribute.Key("llmrelay.turn")
)

// OperationExecuteTool is the gen_ai.operation.name of a tool execution.
const OperationExecuteTool = "execute_tool"

// Tool is what a tool execution span starts with.
type Tool struct {
	// Name is the server tool's name ("everything/echo"), CallID the id
	// of the model's tool call.
	Name, CallID string
	// Server is its MCP server.
	Server string
	// Turn is the call's turn that called it.
	Turn int
}

// StartTool starts the span of one server tool call, a child of the call's
// span in ctx: the conventions' "execute_tool <name>" span, of the kind
// internal (llmrelay runs the tool for the model, through its MCP client).
func StartTool(ctx context.Context, t Tool) Span {
	if !Recording(ctx) {
		return Span{}
	}
	_, s := start(ctx, OperationExecuteTool+" "+t.Name, trace.SpanKindInternal,
		AttrOperationName.String(OperationExecuteTool),
		AttrToolName.String(t.Name),
		AttrToolCallID.String(t.CallID),
		// The conventions' "extension": a tool the agent side runs to
		// reach an external system.
		AttrToolType.String("extension"),
		AttrToolServer.String(t.Server),
		AttrTurn.Int(t.Turn),
	)
	return s
}

// ToolEnd is how a tool call ended.
type ToolEnd struct {
	// Outcome is the call's result as the metrics count it ("ok",
	// "tool_error", "timeout", ...); anything but "ok" is an error.type.
	Outcome  string
	Attempts int
	// Truncated says the result was cut.
	Truncated bool
}

// EndTool ends a tool execution span.
func (s Span) EndTool(e ToolEnd) {
	if s.span == nil {
		return
	}
	s.span.SetAttributes(AttrToolAttempts.Int(e.Attempts), AttrToolTruncated.Bool(e.Truncated))
	if e.Outcome != "ok" {
		s.span.SetAttributes(AttrErrorType.String(e.Outcome))
		s.span.SetStatus(codes.Error, e.Outcome)
	}
	s.span.End()
}
