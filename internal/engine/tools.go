package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/servertools"
	"github.com/llmrelay/llmrelay/internal/telemetry"
)

// Server tools: a call whose request names server_tools (or whose route
// does) is a loop of turns. Each turn is planned, run and numbered as the
// one turn of any call is (prepareTurn, run); when its reply calls server
// tools, the call runs them (runTools), appends the reply and their
// results to the conversation and starts the next turn, until the model
// answers without calling one or max_tool_turns turns have run tools.
// What a key may use is internal/servertools' decision (Host.Resolve),
// asked before the first turn and again before every later one.

// tools is the server-tool state of a call; nil for a call without server
// tools.
type tools struct {
	// offer is the tools offered in the current turn.
	offer *servertools.Offer
	// maxTurns is how many turns may run tools.
	maxTurns int
	// transcript is every message the call added to the conversation;
	// spent is its output, counted against the call's output limit
	// (output.go).
	transcript []*llmrelayv1.Message
	spent      int64
	// finish, when set, overrides the last turn's finish reason.
	finish llmrelayv1.FinishReason
	// dropped is the reasoning formats the earlier turns' answering
	// adapters left out (noteDroppedReasoning).
	dropped []string
}

// errNoToolHost is the cause of a request with server tools on an engine
// without a host (a door built without one).
var errNoToolHost = errors.New("engine: server tools asked for, but the engine has no tool host")

// newTools checks a request's server tools (after the hooks: a route's
// defaults may name them), before any attempt: every entry must be a
// tool the key may use, of an MCP server that answers (Host.Resolve);
// they cannot go with response_format, nor share a name with a request
// tool. nil without server tools.
func (s *Engine) newTools(c *call, req *llmrelayv1.GenerateRequest) (*tools, error) {
	if len(req.GetServerTools()) == 0 {
		return nil, nil
	}
	if req.GetResponseFormat() != nil {
		return nil, apierr.InvalidField(apierr.ReasonInvalidRequest, "server_tools",
			"cannot be combined with response_format: a structured-output call ends with its object, not with tool calls")
	}
	if s.tools == nil {
		return nil, errNoToolHost
	}
	offer, err := s.tools.Resolve(c.key(), req.GetServerTools(), nil)
	if err != nil {
		return nil, err
	}
	if err := checkToolNames(req, offer); err != nil {
		return nil, err
	}
	return &tools{offer: offer, maxTurns: s.maxToolTurns(req)}, nil
}

// checkToolNames refuses a request tool named as an offered server tool.
func checkToolNames(req *llmrelayv1.GenerateRequest, offer *servertools.Offer) error {
	for i, t := range req.GetTools() {
		if st, ok := offer.Lookup(t.GetName()); ok {
			return apierr.InvalidField(apierr.ReasonInvalidRequest, fmt.Sprintf("tools[%d].name", i),
				fmt.Sprintf("%q is the name the model is offered the server tool %s by: rename the request's tool", t.GetName(), st.Name))
		}
	}
	return nil
}

// maxToolTurns returns a request's max_tool_turns: the server's default
// when unset, lowered to the server's limit.
func (s *Engine) maxToolTurns(req *llmrelayv1.GenerateRequest) int {
	cfg := s.tools.Config()
	if req.MaxToolTurns == nil {
		return cfg.MaxToolTurns
	}
	return min(int(req.GetMaxToolTurns()), cfg.MaxToolTurnsLimit)
}

// offerTools adds the turn's server tools to its provider request. From
// the second turn on, a tool choice that forces a tool call becomes auto:
// the model must be free to answer with the results. At most one call per
// reply (DisableParallel) holds in every turn.
func (t *tools) offerTools(preq *provider.Request, n int) {
	for _, st := range t.offer.Tools() {
		preq.Tools = append(preq.Tools, provider.Tool{Name: st.ModelName, Description: st.Description, Parameters: st.InputSchema})
	}
	if n > 1 && preq.ToolChoice.Mode != provider.ToolChoiceNone {
		preq.ToolChoice = provider.ToolChoice{Mode: provider.ToolChoiceAuto, DisableParallel: preq.ToolChoice.DisableParallel}
	}
}

// runTurns runs the call's turns (one, without server tools) and returns
// the last turn's successful result.
func (c *call) runTurns(ctx context.Context) (*attemptResult, error) {
	for {
		res, err := c.run(ctx)
		if err != nil || c.tools == nil {
			return res, err
		}
		msg := finalMessage(res)
		c.tools.transcript = append(c.tools.transcript, msg)
		c.tools.spent += res.outputBytes
		if res.cut {
			// The reply reached the call's output limit: the call ends
			// with it, cut, its tool calls unrun.
			return res, nil
		}
		var calls []serverCall
		client := false
		for _, tc := range msg.GetToolCalls() {
			if st, ok := c.tools.offer.Lookup(tc.GetName()); ok {
				calls = append(calls, serverCall{call: tc, tool: st})
			} else {
				client = true
			}
		}
		switch {
		case len(calls) == 0:
			return res, nil
		case c.turn.n > c.tools.maxTurns, len(c.req.GetMessages())+len(c.tools.transcript)+len(msg.GetToolCalls())+1 > maxMessages:
			// The model asks for more than the call allows, or for more
			// than a request could send back: the request's messages and
			// the transcript, the results of every call of the reply and
			// the next turn's reply would be more messages than a
			// request holds. It ends here, with these calls unrun.
			c.tools.finish = llmrelayv1.FinishReason_FINISH_REASON_MAX_TOOL_TURNS
			return res, nil
		}
		budget := c.newToolBudget(res)
		results, err := c.runTools(ctx, res.attempt, calls, budget)
		if err != nil {
			return nil, err
		}
		c.tools.transcript = append(c.tools.transcript, results...)
		c.tools.spent += budget.used
		if budget.cut {
			// The results reached the call's output limit: the call ends
			// as a reply reaching it ends, here, with what was run.
			if !c.turn.output.truncate {
				return nil, apierr.CallOutputTooLarge(c.turn.output.call, c.providerName(), c.attempts(), c.turn.n)
			}
			c.tools.finish = llmrelayv1.FinishReason_FINISH_REASON_LENGTH
			return res, nil
		}
		if client {
			// The request's own tools are the client's to run: the call
			// ends with them (FINISH_REASON_TOOL_CALLS), the server tools
			// of the turn run and their results in the transcript.
			return res, nil
		}
		if err := c.nextTurn(ctx); err != nil {
			return nil, err
		}
	}
}

// nextTurn prepares the call's next turn: the key's tools are resolved
// again (a reload may have changed what it may use; a tool of the turn
// before stays offered while its server reconnects), the conversation is
// the request's messages and the transcript, and the turn starts at the
// target that answered the last one, followed by the targets after it.
func (c *call) nextTurn(ctx context.Context) error {
	offer, err := c.eng.tools.Resolve(c.key(), c.req.GetServerTools(), c.tools.offer)
	if err != nil {
		return err
	}
	if err := checkToolNames(c.req, offer); err != nil {
		return err
	}
	c.tools.offer = offer
	answered := c.turn.plan.Target()
	targets := c.resolved.Targets
	for i, t := range targets {
		if t == answered {
			targets = targets[i:]
			break
		}
	}
	tn := &turn{}
	if err := c.eng.prepareTurn(ctx, c, tn, c.req, c.turn.n+1, targets); err != nil {
		return err
	}
	c.attemptsBefore, c.hedgesBefore = int32(c.attempts()), int32(c.hedges())
	c.tools.dropped = mergeFormats(c.tools.dropped, c.turn.droppedReasoning())
	c.turn = tn
	c.out.setTurn(tn.n)
	return nil
}

// turnMessages returns the messages the provider request of a turn
// carries after the request's own (first of them: the request's
// messages[first]): the transcript so far.
func (t *tools) turnMessages(first int) ([]provider.Message, error) {
	if t == nil {
		return nil, nil
	}
	out := make([]provider.Message, len(t.transcript))
	for i, m := range t.transcript {
		pm, err := providerMessage(first+i, m)
		if err != nil {
			return nil, err
		}
		out[i] = pm
	}
	return out, nil
}

// serverCall is a tool call of the model's reply to a server tool.
type serverCall struct {
	call *llmrelayv1.ToolCall
	tool *servertools.Tool
}

// runTools runs the server tools the model called in the turn whose
// successful attempt was attempt, in parallel (each MCP server bounds its
// own concurrency): their progress and results go to the client as they
// come, each result counted against budget first (and cut there), and the
// results come back as ROLE_TOOL messages, in the order of the calls. The
// error is the call's end (the tools were cancelled at their servers) or
// a *sendError.
func (c *call) runTools(ctx context.Context, attempt int, calls []serverCall, budget *toolBudget) ([]*llmrelayv1.Message, error) {
	results := make([]*llmrelayv1.Message, len(calls))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sendErr error
	send := func(ev *llmrelayv1.GenerateEvent) {
		ev.Attempt = uint32(attempt)
		if err := c.out.send(ev); err != nil {
			mu.Lock()
			if sendErr == nil {
				sendErr = &sendError{err}
			}
			mu.Unlock()
		}
	}
	for i, sc := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, name := sc.call.GetId(), sc.tool.Name
			span := telemetry.StartTool(ctx, telemetry.Tool{Name: name, CallID: id, Server: sc.tool.Server, Turn: c.turn.n})
			r, err := c.eng.tools.Call(ctx, sc.tool, sc.call.GetArguments(), func(p servertools.Progress) {
				tp := &llmrelayv1.ToolProgress{ToolCallId: id, Name: name, Progress: p.Progress, Message: p.Message}
				if p.HasTotal {
					tp.Total = &p.Total
				}
				send(&llmrelayv1.GenerateEvent{Event: &llmrelayv1.GenerateEvent_ToolProgress{ToolProgress: tp}})
			})
			if err == nil {
				budget.take(&r, id, name)
			}
			span.EndTool(telemetry.ToolEnd{Outcome: string(r.Outcome), Attempts: r.Attempts, Truncated: r.Truncated})
			if err != nil {
				return // the call ended: runTools reports it
			}
			c.info.RecordToolCall(r.IsError)
			c.eng.log.Debug("server tool ran", "request_id", c.requestID, "tool", name, "tool_call_id", id,
				"outcome", r.Outcome, "attempts", r.Attempts, "truncated", r.Truncated)
			parts, images := toolResultParts(r.Parts)
			send(&llmrelayv1.GenerateEvent{Event: &llmrelayv1.GenerateEvent_ToolResult{ToolResult: &llmrelayv1.ToolResult{
				ToolCallId: id, Name: name, Content: r.Content, IsError: r.IsError, Truncated: r.Truncated, Attempts: uint32(r.Attempts),
				Images: images, UserContent: r.UserContent,
			}}})
			results[i] = &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, Content: r.Content, Parts: parts, ToolCallId: id, ServerTool: name, ToolError: r.IsError}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return results, sendErr
}

// toolResultParts converts a server tool result's parts (nil without
// images): the ROLE_TOOL message's parts, its images with their bytes,
// and the ToolResult event's account of the images, without them.
func toolResultParts(rp []servertools.Part) ([]*llmrelayv1.Part, []*llmrelayv1.ToolResultImage) {
	if len(rp) == 0 {
		return nil, nil
	}
	parts := make([]*llmrelayv1.Part, len(rp))
	var images []*llmrelayv1.ToolResultImage
	offset := 0
	for i, p := range rp {
		if p.Image == nil {
			parts[i] = &llmrelayv1.Part{Part: &llmrelayv1.Part_Text{Text: p.Text}}
			offset += len(p.Text)
			continue
		}
		parts[i] = &llmrelayv1.Part{Part: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
			Source: &llmrelayv1.Image_Data{Data: p.Image.Data}, MediaType: p.Image.MediaType,
		}}}
		images = append(images, &llmrelayv1.ToolResultImage{Offset: uint32(offset), MediaType: p.Image.MediaType, Size: uint32(len(p.Image.Data))})
	}
	return parts, images
}

// fillTools puts a call's server-tool outcome in its Final: the
// transcript, the number of turns and, when the loop ended it, the finish
// reason.
func (c *call) fillTools(final *llmrelayv1.Final) {
	final.Turns = uint32(c.turn.n)
	if c.tools == nil {
		return
	}
	final.Transcript = c.tools.transcript
	if c.tools.finish != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
		final.FinishReason = c.tools.finish
	}
}

// ListTools lists the server tools the caller's key may use, with their
// availability, and the MCP servers it may use a tool of (Host.List).
func (s *Engine) ListTools(ctx context.Context, req *llmrelayv1.ListToolsRequest) (*llmrelayv1.ListToolsResponse, error) {
	resp := &llmrelayv1.ListToolsResponse{}
	if s.tools == nil {
		return resp, nil
	}
	list, servers := s.tools.List(keyName(ctx), req.GetServer())
	for _, t := range list {
		st := &llmrelayv1.ServerTool{
			Name: t.Name, Server: t.Server, ModelName: t.ModelName, Title: t.Title, Description: t.Description,
			Available: t.Available, Idempotent: t.Idempotent,
		}
		if len(t.InputSchema) > 0 {
			schema := &structpb.Struct{}
			if err := schema.UnmarshalJSON(t.InputSchema); err == nil {
				st.InputSchema = schema
			}
		}
		resp.Tools = append(resp.Tools, st)
	}
	for _, sv := range servers {
		ts := &llmrelayv1.ToolServer{Name: sv.Name, Available: sv.Available, Tools: uint32(sv.Tools)}
		if !sv.ListedAt.IsZero() {
			ts.ListedAt = timestamppb.New(sv.ListedAt)
		}
		resp.Servers = append(resp.Servers, ts)
	}
	return resp, nil
}
