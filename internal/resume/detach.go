package resume

import (
	"context"

	"github.com/llmrelay/llmrelay/internal/apierr"
)

type cutoffKey struct{}

// WithCutoff returns ctx carrying until, which ends when the server's
// shutdown grace period does: the drain link puts it in every call's
// context, so that a call detached from its stream (Detach) is cut off
// with the others.
func WithCutoff(ctx, until context.Context) context.Context {
	return context.WithValue(ctx, cutoffKey{}, until)
}

// Detach returns a context for a call that must outlive its stream: it
// has ctx's values (the call record, the caller's identity, the trace) and
// its deadline, and ends at the shutdown's cut-off (WithCutoff) with
// apierr.ErrShuttingDown, but not when ctx is cancelled: a client that
// goes away does not end it. cancel ends it with a cause and releases its
// resources.
func Detach(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	base, cancelBase := context.WithCancelCause(context.WithoutCancel(ctx))
	out, stopDeadline := base, context.CancelFunc(func() {})
	if d, ok := ctx.Deadline(); ok {
		out, stopDeadline = context.WithDeadline(base, d)
	}
	stopCutoff := func() bool { return false }
	if until, ok := ctx.Value(cutoffKey{}).(context.Context); ok {
		stopCutoff = context.AfterFunc(until, func() { cancelBase(apierr.ErrShuttingDown) })
	}
	return out, func(cause error) {
		stopCutoff()
		cancelBase(cause)
		stopDeadline()
	}
}
