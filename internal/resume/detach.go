package resume

import (
	"context"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/engine/callctx"
)

// WithCutoff makes until the server's cut-off: when it ends (the shutdown
// grace period's end), the registry's detached calls (Detach) are cut off
// with the calls still on their streams. Without it, a detached call ends
// only by its deadline or its cancel.
func WithCutoff(until context.Context) Option { return func(r *Registry) { r.cutoff = until } }

// Detach returns a context for a call that must outlive its stream: it
// has ctx's values (the call record, the caller's identity, the trace) and
// its deadline, and ends at the registry's cut-off (WithCutoff) with
// apierr.ErrShuttingDown, but not when ctx is cancelled: a client that
// goes away does not end it. cancel ends it with a cause and releases its
// resources.
func (r *Registry) Detach(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	// The deadline runs on callctx's shared timer rather than a runtime
	// timer of its own: a stopped runtime timer stays in its processor's
	// timer heap until the runtime next clears it out, holding the whole
	// context chain (the stream's, its request) of a call long over.
	var (
		out    context.Context
		cancel context.CancelCauseFunc
		stop   = func() {}
	)
	if d, ok := ctx.Deadline(); ok {
		out, stop = callctx.WithDeadline(context.WithoutCancel(ctx), d)
		cancel = callctx.Cancel(out)
	} else {
		out, cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	}
	stopCutoff := func() bool { return false }
	if r.cutoff != nil {
		stopCutoff = context.AfterFunc(r.cutoff, func() { cancel(apierr.ErrShuttingDown) })
	}
	return out, func(cause error) {
		stopCutoff()
		cancel(cause)
		stop()
	}
}
