package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/route"
)

// AnnotationRouteDefaults is the annotation RouteDefaults makes: the
// defaults it applied, comma-separated, e.g.
// "messages,generation.max_output_tokens,response_format" ("messages" for
// the system prompt and prefix messages).
const AnnotationRouteDefaults = "route.defaults"

// RouteDefaults returns the hook that applies a route's defaults
// (route.Defaults) to a call to the route, before its first attempt, each
// only where the request leaves its field unset:
//
//   - retry: max_attempts, initial_backoff, max_backoff, midstream, each
//     on its own;
//   - generation: max_output_tokens, temperature, top_p, stop;
//   - system and messages: sent ahead of the request's messages (the
//     system prompt first), always;
//   - response_format: when the request has none and offers no tools (a
//     request that offers tools wants tool calls, which structured output
//     does not allow);
//   - stream_idle_timeout;
//   - hedging: when the request has no hedging policy (a request's own
//     replaces the route's whole; max_hedges 0 turns it off);
//   - resumable, when the request leaves it unset (false turns it off).
//
// It annotates the call with what it applied (AnnotationRouteDefaults).
// The routes' defaults are converted once, here: an error means a default
// that cannot become part of a request (a schema that is not JSON).
func RouteDefaults(routes []*route.Route) (Hook, error) {
	h := &routeDefaults{byRoute: make(map[*route.Route]*defaults, len(routes))}
	for _, r := range routes {
		d, err := convert(r.Defaults)
		if err != nil {
			return nil, fmt.Errorf("route %s: %w", r.Name, err)
		}
		h.byRoute[r] = d
	}
	return h, nil
}

type routeDefaults struct {
	byRoute map[*route.Route]*defaults
}

// defaults are a route's defaults in the request's own types.
type defaults struct {
	retry     route.RetryDefaults
	gen       route.GenerationDefaults
	prefix    []*llmrelayv1.Message
	format    *llmrelayv1.ResponseFormat
	idle      *durationpb.Duration
	hedge     *llmrelayv1.HedgePolicy
	resumable *bool
	tools     []string
	src       route.Defaults
}

func convert(d route.Defaults) (*defaults, error) {
	out := &defaults{retry: d.Retry, gen: d.Generation, resumable: d.Resumable, tools: d.ServerTools, src: d}
	if d.System != "" {
		out.prefix = append(out.prefix, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_SYSTEM, Content: d.System})
	}
	for _, m := range d.Messages {
		out.prefix = append(out.prefix, &llmrelayv1.Message{Role: roles[m.Role], Content: m.Content})
	}
	if rf := d.ResponseFormat; rf != nil {
		b, err := json.Marshal(rf.JSONSchema)
		if err != nil {
			return nil, fmt.Errorf("response_format.json_schema: %w", err)
		}
		schema := &structpb.Struct{}
		if err := schema.UnmarshalJSON(b); err != nil {
			return nil, fmt.Errorf("response_format.json_schema: %w", err)
		}
		out.format = &llmrelayv1.ResponseFormat{JsonSchema: schema, Name: rf.Name, StreamPartialObjects: rf.StreamPartialObjects}
		if n := rf.MaxValidationRetries; n != nil {
			v := uint32(*n)
			out.format.MaxValidationRetries = &v
		}
		if d := rf.PartialObjectInterval; d > 0 {
			out.format.PartialObjectInterval = durationpb.New(d)
		}
		if rf.OnInvalid == "return_text" {
			out.format.OnInvalid = llmrelayv1.OnInvalid_ON_INVALID_RETURN_TEXT
		}
	}
	if d.StreamIdleTimeout > 0 {
		out.idle = durationpb.New(d.StreamIdleTimeout)
	}
	if h := d.Hedging; h != nil {
		out.hedge = &llmrelayv1.HedgePolicy{Adaptive: h.Adaptive, Target: llmrelayv1.HedgeTarget_HEDGE_TARGET_SAME}
		if h.HedgeAfter > 0 {
			out.hedge.HedgeAfter = durationpb.New(h.HedgeAfter)
		}
		if h.MaxHedges > 0 {
			n := uint32(h.MaxHedges)
			out.hedge.MaxHedges = &n
		}
		if h.Target == route.HedgeTargetNext {
			out.hedge.Target = llmrelayv1.HedgeTarget_HEDGE_TARGET_NEXT
		}
	}
	return out, nil
}

var roles = map[string]llmrelayv1.Role{
	"system": llmrelayv1.Role_ROLE_SYSTEM, "user": llmrelayv1.Role_ROLE_USER, "assistant": llmrelayv1.Role_ROLE_ASSISTANT,
}

// Name implements Hook.
func (*routeDefaults) Name() string { return "route_defaults" }

// BeforeAttempts implements Before.
func (h *routeDefaults) BeforeAttempts(_ context.Context, c *Call) error {
	d := h.byRoute[c.Route]
	if d == nil {
		return nil
	}
	var applied []string
	set := func(name string) { applied = append(applied, name) }
	req := c.Request

	if len(d.prefix) > 0 {
		msgs := make([]*llmrelayv1.Message, 0, len(d.prefix)+len(req.GetMessages()))
		for _, m := range d.prefix {
			msgs = append(msgs, proto.CloneOf(m))
		}
		req.Messages = append(msgs, req.GetMessages()...)
		set("messages")
	}

	r := d.retry
	before := len(applied)
	policy := req.GetRetry()
	if policy == nil {
		policy = &llmrelayv1.RetryPolicy{}
	}
	if r.MaxAttempts > 0 && policy.GetMaxAttempts() == 0 {
		policy.MaxAttempts = uint32(r.MaxAttempts)
		set("retry.max_attempts")
	}
	if r.InitialBackoff > 0 && policy.GetInitialBackoff() == nil {
		policy.InitialBackoff = durationpb.New(r.InitialBackoff)
		set("retry.initial_backoff")
	}
	if r.MaxBackoff > 0 && policy.GetMaxBackoff() == nil {
		policy.MaxBackoff = durationpb.New(r.MaxBackoff)
		set("retry.max_backoff")
	}
	if r.Midstream != "" && policy.GetMidstream() == llmrelayv1.Midstream_MIDSTREAM_UNSPECIFIED {
		policy.Midstream = llmrelayv1.Midstream_MIDSTREAM_RESTART
		if r.Midstream == "fail" {
			policy.Midstream = llmrelayv1.Midstream_MIDSTREAM_FAIL
		}
		set("retry.midstream")
	}
	if req.GetRetry() == nil && len(applied) > before {
		req.Retry = policy
	}

	g := d.gen
	gen := req.GetGeneration()
	if gen == nil {
		gen = &llmrelayv1.GenerationConfig{}
	}
	before = len(applied)
	if g.MaxOutputTokens != nil && gen.MaxOutputTokens == nil {
		v := uint32(d.src.MaxOutputTokensFor(nil))
		gen.MaxOutputTokens = &v
		set("generation.max_output_tokens")
	}
	if g.Temperature != nil && gen.Temperature == nil {
		v := float32(*g.Temperature)
		gen.Temperature = &v
		set("generation.temperature")
	}
	if g.TopP != nil && gen.TopP == nil {
		v := float32(*g.TopP)
		gen.TopP = &v
		set("generation.top_p")
	}
	if len(g.Stop) > 0 && len(gen.GetStop()) == 0 {
		gen.Stop = append([]string(nil), g.Stop...)
		set("generation.stop")
	}
	if req.GetGeneration() == nil && len(applied) > before {
		req.Generation = gen
	}

	if len(d.tools) > 0 && len(req.GetServerTools()) == 0 {
		req.ServerTools = append([]string(nil), d.tools...)
		set("server_tools")
	}
	if d.format != nil && req.GetResponseFormat() == nil && len(req.GetTools()) == 0 && len(req.GetServerTools()) == 0 {
		req.ResponseFormat = proto.CloneOf(d.format)
		set("response_format")
	}
	if d.idle != nil && req.GetStreamIdleTimeout() == nil {
		req.StreamIdleTimeout = proto.CloneOf(d.idle)
		set("stream_idle_timeout")
	}
	if d.hedge != nil && req.GetHedging() == nil {
		req.Hedging = proto.CloneOf(d.hedge)
		set("hedging")
	}
	if d.resumable != nil && req.Resumable == nil {
		req.Resumable = proto.Bool(d.src.ResumableFor(nil))
		set("resumable")
	}
	if len(applied) > 0 {
		c.Annotate(AnnotationRouteDefaults, strings.Join(applied, ","))
	}
	return nil
}
