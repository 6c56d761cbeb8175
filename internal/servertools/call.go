package servertools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmrelay/llmrelay/internal/retry"
)

// Progress is a progress report of a running tool (MCP
// notifications/progress).
type Progress struct {
	Progress float64
	// Total is what Progress counts towards; HasTotal says it is known.
	Total    float64
	HasTotal bool
	Message  string
}

// Outcome is how a tool call ended, as the metrics count it.
type Outcome string

// Outcomes.
const (
	OutcomeOK        Outcome = "ok"
	OutcomeToolError Outcome = "tool_error" // the tool returned isError
	OutcomeRefused   Outcome = "refused"    // the server refused the call (JSON-RPC error), or the arguments are not an object
	OutcomeTimeout   Outcome = "timeout"    // no result within the server's timeout
	OutcomeTransport Outcome = "transport"  // the server could not be reached, or dropped the call
	OutcomeTooLarge  Outcome = "too_large"  // the server's answer was longer than its max_response_bytes
	OutcomeMalformed Outcome = "malformed"  // the server's result does not decode as an MCP tool result
	OutcomeCanceled  Outcome = "canceled"   // the Generate call ended first
)

// Result is a tool call's result, as the model is sent it.
type Result struct {
	// Content is the result's text (see resultOf), bounded by the
	// config's max_tool_result_bytes.
	Content string
	// Parts is the result's text and images, in order, when it has
	// images: its text parts, concatenated, are Content. nil without
	// images.
	Parts []Part
	// UserContent is the text of the result's parts meant for the user
	// alone (their annotations' audience leaves the assistant out), in
	// order, one per line, as Content would have them: the model is not
	// sent it, the client is. Bounded by max_tool_result_bytes apart from
	// Content.
	UserContent string
	// IsError says the tool failed: Content says how.
	IsError bool
	// Truncated says Content, or UserContent, was cut at the bound.
	Truncated bool
	// Attempts is how many times the tool was called.
	Attempts int
	Outcome  Outcome
}

// Call runs the tool t for the model, with the arguments the model gave
// (JSON text of an object; empty means {}), reporting the tool's progress
// to progress (which may be nil; it is called on the SDK's goroutine, one
// report at a time). It waits for one of the server's max_concurrency
// slots, sends a progress token with each try, bounds each try by the
// server's timeout and the call's deadline, and tries an idempotent tool
// again after a transport failure or a timeout (max_attempts, the
// server's retry budget, a backoff within the deadline). Every failure of
// the tool becomes an error Result for the model; Call returns an error
// only when ctx ended (the Generate call is over): the tool call was then
// cancelled at the server (notifications/cancelled).
func (h *Host) Call(ctx context.Context, t *Tool, arguments string, progress func(Progress)) (Result, error) {
	start := time.Now()
	res, err := h.call(ctx, t, arguments, progress)
	if err != nil {
		res.Outcome = OutcomeCanceled
	}
	h.redactResult(t.Server, &res)
	h.opts.Metrics.ToolCall(t.Server, t.ServerTool, string(res.Outcome), time.Since(start))
	return res, err
}

// redact returns content, a tool's result for the model (and the client,
// which sees it), with the credentials llmrelay sends server (the words of
// 8 characters or more of its headers_env values) replaced by
// "[redacted]": a server that quotes them ("bad token: Bearer ...") must
// not hand the operator's credentials to a tenant.
func (h *Host) redact(server, content string) string {
	h.mu.Lock()
	c := h.servers[server]
	h.mu.Unlock()
	if c == nil || content == "" {
		return content
	}
	for _, vs := range c.headers {
		for _, v := range vs {
			for _, w := range strings.Fields(v) {
				if len(w) >= 8 && strings.Contains(content, w) {
					content = strings.ReplaceAll(content, w, "[redacted]")
				}
			}
		}
	}
	return content
}

// redactResult redacts r's text (redact), in its text parts and its
// text for the user too.
func (h *Host) redactResult(server string, r *Result) {
	r.UserContent = h.redact(server, r.UserContent)
	if r.Parts == nil {
		r.Content = h.redact(server, r.Content)
		return
	}
	for i, p := range r.Parts {
		if p.Image == nil {
			r.Parts[i].Text = h.redact(server, p.Text)
		}
	}
	r.Content = r.text()
}

func (h *Host) call(ctx context.Context, t *Tool, arguments string, progress func(Progress)) (Result, error) {
	args, problem := toolArguments(arguments)
	if problem != "" {
		return h.errorResult(OutcomeRefused, 0, "llmrelay did not call the tool: its arguments %s", problem), nil
	}
	h.mu.Lock()
	c := h.servers[t.Server]
	limit := h.cfg.MaxResultBytes
	h.mu.Unlock()
	if c == nil {
		return h.errorResult(OutcomeTransport, 0, "llmrelay could not call the tool: MCP server %s is no longer configured", t.Server), nil
	}
	c.mu.Lock()
	cfg := c.cfg
	c.mu.Unlock()
	attempts := 1
	if t.Idempotent {
		attempts = cfg.attempts()
	}
	var budget retry.Throttle
	if h.opts.Budget != nil {
		budget = h.opts.Budget(t.Server)
	}
	for n := 1; ; n++ {
		var end func()
		if budget != nil {
			end = budget.Begin(ctx)
		}
		out, err := c.callOnce(ctx, t, args, cfg.timeout(), h.nextToken(), progress)
		if end != nil {
			end()
		}
		if ctx.Err() != nil {
			return Result{Attempts: n}, context.Cause(ctx)
		}
		if err == nil {
			res := h.toolResult(t.Server, out, limit)
			res.Attempts = n
			return res, nil
		}
		var te *tryError
		if !errors.As(err, &te) {
			te = &tryError{outcome: OutcomeTransport, err: err}
		}
		h.log.Debug("server tool call failed", "tool", t.Name, "try", n, "outcome", te.outcome, "error", c.loggable(te.err))
		switch te.outcome {
		case OutcomeRefused:
			return h.errorResult(te.outcome, n, "the MCP server refused the call: %s", te.message()), nil
		case OutcomeTooLarge:
			// Not tried again: the same call would answer the same.
			return h.errorResult(te.outcome, n, "llmrelay did not read the tool's result: %v", te.err), nil
		case OutcomeMalformed:
			return h.errorResult(te.outcome, n, "llmrelay could not read the tool's result: MCP server %s answered with %s", t.Server, malformedWhat(te.err)), nil
		}
		if errors.Is(te.err, errDisconnected) {
			// Not tried again: the server's connection is gone for good.
			return h.errorResult(te.outcome, n, "the tool's call was cut off: a reload of llmrelay's configuration disconnected MCP server %s (removed it, or reconnects it with new settings)", t.Server), nil
		}
		if n >= attempts {
			return h.failedResult(te, n, t), nil
		}
		release := func() {}
		if budget != nil {
			r, ok := budget.Retry(ctx)
			if !ok {
				return h.errorResult(te.outcome, n, "%s; not tried again: the MCP server's retry budget is spent", te.describe(t)), nil
			}
			release = r
		}
		wait := h.backoff(n)
		if d, ok := ctx.Deadline(); ok && time.Until(d) <= wait {
			release()
			return h.errorResult(te.outcome, n, "%s; not tried again: the call's deadline comes first", te.describe(t)), nil
		}
		h.opts.Metrics.ToolRetry(t.Server, t.ServerTool)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			release()
			return Result{Attempts: n}, context.Cause(ctx)
		case <-timer.C:
		}
		release()
	}
}

// nextToken returns a new progress token.
func (h *Host) nextToken() string {
	return "llmrelay-" + strconv.FormatUint(h.tokens.Add(1), 10)
}

// backoff is the wait before try n+1.
func (h *Host) backoff(n int) time.Duration {
	if h.opts.Backoff != nil {
		return h.opts.Backoff(n)
	}
	d := 100 * time.Millisecond << min(n-1, 5)
	d = min(d, 2*time.Second)
	return d/2 + rand.N(d/2+1)
}

// errDisconnected is why a try failed whose server's connection was
// stopped under it (conn.life).
var errDisconnected = errors.New("the MCP server's connection was stopped")

// tryError is how one try of a tool call failed.
type tryError struct {
	outcome Outcome
	err     error
	timeout time.Duration // OutcomeTimeout
}

func (e *tryError) Error() string { return string(e.outcome) + ": " + e.err.Error() }

// message is what the model is told of a refusal: the server's JSON-RPC
// error message.
func (e *tryError) message() string {
	var je *jsonrpc.Error
	if errors.As(e.err, &je) {
		return je.Message
	}
	return "the request failed"
}

// describe says what went wrong, for the model: never the transport's
// own error text, which may name internal addresses.
func (e *tryError) describe(t *Tool) string {
	if e.outcome == OutcomeTimeout {
		return fmt.Sprintf("the tool did not return within %s", e.timeout)
	}
	return "llmrelay could not reach MCP server " + t.Server + ", or it dropped the call"
}

func (h *Host) failedResult(te *tryError, n int, t *Tool) Result {
	msg := te.describe(t)
	if n > 1 {
		msg += fmt.Sprintf(" (tried %d times)", n)
	}
	return h.errorResult(te.outcome, n, "%s", msg)
}

// errorResult is an error result llmrelay writes for the model.
func (h *Host) errorResult(o Outcome, attempts int, format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true, Attempts: attempts, Outcome: o}
}

// callOnce makes one try of the call on the server's live session.
func (c *conn) callOnce(ctx context.Context, t *Tool, args json.RawMessage, timeout time.Duration, token string, progress func(Progress)) (*mcp.CallToolResult, error) {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The SDK's call does not end when its session is closed under it:
	// a stopped connection ends its calls itself.
	defer context.AfterFunc(c.life, cancel)()
	c.mu.Lock()
	sem := c.sem
	c.mu.Unlock()
	c.queued.Add(1)
	select {
	case sem <- struct{}{}:
		c.queued.Add(-1)
		defer func() { <-sem }()
	case <-tctx.Done():
		c.queued.Add(-1)
		return nil, c.tryErr(ctx, tctx, timeout, errNotConnected)
	}
	cs, gen, err := c.liveSession(tctx)
	if err != nil {
		return nil, c.tryErr(ctx, tctx, timeout, err)
	}
	if progress != nil {
		c.mu.Lock()
		c.progress[token] = progress
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.progress, token)
			c.mu.Unlock()
		}()
	}
	params := &mcp.CallToolParams{Name: t.ServerTool, Arguments: args}
	params.SetProgressToken(token)
	// A cancelled tctx (the call's end or the timeout) makes the SDK send
	// notifications/cancelled for the request.
	res, err := cs.CallTool(tctx, params)
	if err == nil {
		return res, nil
	}
	switch {
	case tctx.Err() != nil:
		// The try's own end: tryErr says which below.
	case answerTooLarge(err):
		return nil, &tryError{outcome: OutcomeTooLarge, err: &answerTooLargeError{limit: c.maxResponse}}
	case refused(err):
		return nil, &tryError{outcome: OutcomeRefused, err: err}
	case malformedWhat(err) != "":
		// The server answered the call, on a session that works.
		return nil, &tryError{outcome: OutcomeMalformed, err: err}
	}
	if tctx.Err() == nil && !c.alive(ctx, cs, timeout) {
		// The session failed under the call: the server went away, or
		// lost the session. (A request that failed on a session that
		// still answers, a connection a proxy dropped, say, leaves the
		// session to the other calls it carries.)
		c.down(gen, err, false)
	}
	return nil, c.tryErr(ctx, tctx, timeout, err)
}

// alive reports whether the session still answers a ping, within the
// server's timeout and at most a few seconds.
func (c *conn) alive(ctx context.Context, cs *mcp.ClientSession, timeout time.Duration) bool {
	pctx, cancel := context.WithTimeout(ctx, min(timeout, pingTimeout))
	defer cancel()
	return cs.Ping(pctx, nil) == nil
}

// pingTimeout bounds the ping that checks a session after a failed call.
const pingTimeout = 5 * time.Second

// refused reports whether err is the server's JSON-RPC error answering
// the call (an unknown tool, invalid arguments, the tool's own failure
// reported as a protocol error): not a transport failure, which the SDK
// reports with codes of its own (a request that did not reach the server,
// a connection closing).
func refused(err error) bool {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return false
	}
	switch je.Code {
	case codeRejected, codeServerClosing, codeClientClosing:
		return false
	}
	return true
}

// answerTooLarge reports whether err is the server's answer being longer
// than its max_response_bytes: a JSON answer sseTransport refused, or an
// event of a stream sseScanner cut.
func answerTooLarge(err error) bool {
	var tl *answerTooLargeError
	var je *jsonrpc.Error
	return errors.As(err, &tl) || errors.As(err, &je) && je.Code == codeAnswerTooLarge
}

// malformedWhat says what was wrong with a tool's result the SDK could not
// decode, for the model, "" when err is not such a failure: the answer
// arrived, so the server works, and the same call would answer the same
// again. The SDK returns the decoding's own error (encoding/json's,
// encoding/base64's, or its own about a content part), never one of the
// transport.
func malformedWhat(err error) string {
	var syntax *json.SyntaxError
	var wrongType *json.UnmarshalTypeError
	var notBase64 base64.CorruptInputError
	switch msg := err.Error(); {
	case errors.As(err, &syntax):
		return "a result that is not JSON"
	case errors.As(err, &wrongType) && wrongType.Field == "":
		return "a result that is not a JSON object"
	case errors.As(err, &wrongType):
		return fmt.Sprintf("a result whose %q is of another type than MCP's", wrongType.Field)
	case errors.As(err, &notBase64):
		return "binary content that is not base64"
	case strings.Contains(msg, "unrecognized content type"), strings.Contains(msg, "invalid content type"):
		return "a content part of a type llmrelay does not know"
	case strings.Contains(msg, "nil content"):
		return "an empty content part"
	}
	return ""
}

// The go-sdk's own JSON-RPC error codes of transport failures
// (internal/jsonrpc2: ErrRejected, ErrServerClosing, ErrClientClosing).
const (
	codeRejected      = -32005
	codeServerClosing = -32004
	codeClientClosing = -32003
)

// tryErr classifies a try that failed with err: the call's end, the try's
// timeout, or a transport failure.
func (c *conn) tryErr(ctx, tctx context.Context, timeout time.Duration, err error) error {
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case c.life.Err() != nil:
		return &tryError{outcome: OutcomeTransport, err: errDisconnected}
	case tctx.Err() != nil:
		return &tryError{outcome: OutcomeTimeout, err: err, timeout: timeout}
	}
	return &tryError{outcome: OutcomeTransport, err: err}
}

// notifyProgress hands a progress notification to the call its token
// belongs to; others (a call already ended) are dropped.
func (c *conn) notifyProgress(p progressNotification) {
	tok, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	c.mu.Lock()
	f := c.progress[tok]
	c.mu.Unlock()
	if f != nil {
		f(Progress{Progress: p.Progress, Total: p.Total, HasTotal: p.Total != 0, Message: p.Message})
	}
}

// toolArguments reads the model's arguments: JSON text of an object, or
// nothing. problem says what is wrong with them, for the model.
func toolArguments(s string) (json.RawMessage, string) {
	if s == "" {
		return json.RawMessage("{}"), ""
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, "are not valid JSON"
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, "are not a JSON object"
	}
	return json.RawMessage(s), ""
}
