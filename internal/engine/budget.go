package engine

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/spend"
)

// settleTimeout bounds a call's settlement and a reservation's release,
// which run when the call has ended (its own context may be cancelled).
const settleTimeout = 5 * time.Second

// Budget is admission's budget step: the one owner of whether the budgets a
// Generate or Embed call falls under (its key's and its team's, internal/spend)
// have room for it. It reserves the call's estimate on each (one store
// round trip), or refuses the call with RESOURCE_EXHAUSTED,
// BUDGET_EXHAUSTED, before any provider hears of it. The call's hold goes
// into its call record; Generate settles it as the call ends, with the
// usage and cost of every attempt (call.settle), and Embed with its
// attempts' input tokens (an Embed reserves its texts' size as input and
// no output). Calls of keys without
// budgets take no reservation but are recorded in the usage as they end;
// calls without a key, a Generate that attaches to a resumable call kept
// already (Attach: it runs nothing), and other methods, pass. It runs
// after the model is resolved (the reservation is priced at the call's
// targets) and the attach step, and before the provider queue (a refused
// call waits for no slot).
type Budget struct {
	// Budgets is nil on a server without keys.
	Budgets *spend.Budgeter
	Metrics *metrics.Metrics
}

// Reserve implements the step for request req; release gives the
// reservation back if the call never ran (Generate settled it otherwise).
func (b *Budget) Reserve(ctx context.Context, req any) (release func(), err error) {
	g, isGenerate := req.(*llmrelayv1.GenerateRequest)
	em, isEmbed := req.(*llmrelayv1.EmbedRequest)
	id, keyed := auth.FromContext(ctx)
	if b == nil || b.Budgets == nil || !(isGenerate || isEmbed) || !keyed || isGenerate && attaching(ctx, g) {
		// A call that attaches to a kept call (Attach) spends nothing.
		return func() {}, nil
	}
	sub := spend.Subject{Key: id.Name, Team: id.Team, Budgets: id.Budgets}
	var r spend.Request
	if b.Budgets.Budgeted(sub) {
		if isEmbed {
			// An embedding's input is its texts; it produces no output
			// tokens.
			r = spend.Request{InputBytes: embedBytes(em), NoOutput: true}
		} else {
			r = spend.Request{InputBytes: int(estimatedBytes(g)), MaxOutputTokens: int64(g.GetGeneration().GetMaxOutputTokens())}
		}
		if res, ok := callinfo.From(ctx).Resolved(); ok {
			if isGenerate && res.Route != nil {
				// The route's defaults apply after admission (its hook),
				// but a route that caps its calls' output caps what they
				// may spend: reserve that, not the server's default.
				var requested *uint32
				if gen := g.GetGeneration(); gen != nil {
					requested = gen.MaxOutputTokens
				}
				r.MaxOutputTokens = int64(res.Route.Defaults.MaxOutputTokensFor(requested))
			}
			for _, t := range res.Targets {
				r.Targets = append(r.Targets, spend.Target{Provider: t.Entry.Config.Name, Model: t.Model})
			}
		}
	}
	deadline, _ := ctx.Deadline()
	h, err := b.Budgets.Reserve(ctx, sub, r, deadline)
	if err != nil {
		var ee *spend.ExhaustedError
		if errors.As(err, &ee) {
			b.Metrics.BudgetRefused(string(ee.Budget.Window), ee.TeamBudget)
		}
		return nil, apierr.FromError(err)
	}
	callinfo.From(ctx).SetHold(h)
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
		defer cancel()
		_ = h.Release(ctx) // lapses in the store if it fails
	}, nil
}

// settle settles the call's hold with the usage and cost of every attempt
// of every turn, once the call ended, successful or not: what providers
// reported (the Final's usage) and the estimates of the attempts whose
// provider did not report their whole usage (call.account, spend.Charge).
// A settlement the store could not take is queued by the store (redis) or
// logged.
func (c *call) settle(ctx context.Context) {
	h := c.info.Hold()
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if err := h.Settle(ctx, c.spent()); err != nil {
		c.eng.log.Warn("the call's spend could not be settled", "request_id", c.requestID, "key", c.key(), "error", err)
	}
}

// estimatedBytes is the size of request g as an estimate counts it: its
// encoded size, each image counted as spend.ImageTokens tokens rather than
// by its bytes (spend.RequestBytes).
func estimatedBytes(g *llmrelayv1.GenerateRequest) int64 {
	return withImagesCounted(int64(proto.Size(g)), g.GetMessages())
}

// withImagesCounted returns size, the bytes of messages (encoded, or as
// a server-tool transcript counts them), with their images counted as
// spend.ImageTokens tokens each rather than by their bytes
// (spend.RequestBytes).
func withImagesCounted(size int64, messages []*llmrelayv1.Message) int64 {
	var images, sources int64
	for _, m := range messages {
		for _, p := range m.GetParts() {
			if img := p.GetImage(); img != nil {
				images++
				sources += int64(len(img.GetData()) + len(img.GetUrl()))
			}
		}
	}
	if images == 0 {
		return size
	}
	return spend.RequestBytes(size, images, sources)
}

// embedBytes is the size of an Embed request's input as an estimate
// counts it: the bytes of its texts.
func embedBytes(r *llmrelayv1.EmbedRequest) int {
	n := 0
	for _, in := range r.GetInputs() {
		n += len(in)
	}
	return n
}
