// Package hook is llmrelay's compiled-in extension point in the Generate
// request path: Go code built into the server that runs, in order, before
// a call's first attempt (it may change the request, for example add
// messages or fill unset fields, or refuse the call) and once the call
// succeeded, before its Final is sent (it may annotate the call). There is
// no scripting language: a hook is a type implementing Before, After or
// both, passed to the server (server.WithHooks). The routes' defaults are
// one (RouteDefaults), always first.
//
// Hooks run on the call's goroutine, between the interceptor chain (which
// has authenticated the caller, checked the request's shape and the key's
// access, and resolved its targets) and the attempt plan. What a hook adds
// to the request is not checked against the contract's limits again: a
// hook is trusted server code.
package hook

import (
	"context"
	"maps"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/route"
)

// Call is one Generate call as its hooks see it.
type Call struct {
	// Model is the model the request named: a route's name or
	// "<provider>/<model>".
	Model string
	// Route is the route Model names; nil for "<provider>/<model>".
	Route *route.Route
	// Key is the caller's API key name; "" when the server has no keys.
	Key string
	// Request is the call's request, decoded for this call alone. Before
	// hooks may change it; After hooks must not.
	Request *llmrelayv1.GenerateRequest

	annotations map[string]string
}

// Annotate attaches a label to the call: it is sent in Final.annotations
// when the call succeeds, and written to the call's log line. A later
// label with the same key replaces an earlier one.
func (c *Call) Annotate(key, value string) {
	if c.annotations == nil {
		c.annotations = map[string]string{}
	}
	c.annotations[key] = value
}

// Annotations returns a copy of the call's labels.
func (c *Call) Annotations() map[string]string { return maps.Clone(c.annotations) }

// Hook names a hook, for logs and refusals. A hook implements Before,
// After or both.
type Hook interface {
	Name() string
}

// Before is a hook that runs before a call's first attempt.
type Before interface {
	Hook
	// BeforeAttempts may change c.Request or annotate the call. To refuse
	// the call it returns a *Refusal; any other error is a bug in the hook,
	// and the call ends INTERNAL.
	BeforeAttempts(ctx context.Context, c *Call) error
}

// After is a hook that runs once a call succeeded, before its Final is
// sent.
type After interface {
	Hook
	// AfterFinal may annotate the call (c.Annotate); it must not change c
	// or f, the Final about to be sent (which provider and model answered,
	// the message, the usage).
	AfterFinal(ctx context.Context, c *Call, f *llmrelayv1.Final)
}

// Refusal is what a Before hook returns to refuse a call: the call ends
// with PERMISSION_DENIED, ErrorInfo reason Reason (REFUSED_BY_HOOK when
// empty) and metadata hook, and the public Message; no provider is called.
type Refusal struct {
	// Hook is the refusing hook's name; Chain fills it in.
	Hook string
	// Reason is the ErrorInfo reason, UPPER_SNAKE.
	Reason string
	// Message is the public message, written for the caller.
	Message string
}

// Error implements error.
func (r *Refusal) Error() string { return "refused by hook " + r.Hook + ": " + r.Message }

// Chain is the server's hooks, in the order they run.
type Chain []Hook

// Before runs every Before hook in order and stops at the first error; a
// *Refusal gets the refusing hook's name.
func (ch Chain) Before(ctx context.Context, c *Call) error {
	for _, h := range ch {
		b, ok := h.(Before)
		if !ok {
			continue
		}
		if err := b.BeforeAttempts(ctx, c); err != nil {
			if r, ok := err.(*Refusal); ok && r.Hook == "" {
				r.Hook = h.Name()
			}
			return err
		}
	}
	return nil
}

// After runs every After hook in order.
func (ch Chain) After(ctx context.Context, c *Call, f *llmrelayv1.Final) {
	for _, h := range ch {
		if a, ok := h.(After); ok {
			a.AfterFinal(ctx, c, f)
		}
	}
}
