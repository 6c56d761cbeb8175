package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/hook"
	"github.com/llmrelay/llmrelay/internal/route"
)

func ptr[T any](v T) *T { return &v }

var supportRoute = &route.Route{Name: "support", Defaults: route.Defaults{
	Retry:             route.RetryDefaults{MaxAttempts: 2, InitialBackoff: time.Second, Midstream: "fail"},
	Generation:        route.GenerationDefaults{MaxOutputTokens: ptr(1024), Temperature: ptr(0.2), Stop: []string{"END"}},
	System:            "You are the support assistant.",
	Messages:          []route.Message{{Role: "assistant", Content: "How can I help?"}},
	ResponseFormat:    &route.ResponseFormat{JSONSchema: map[string]any{"type": "object"}, Name: "ticket", MaxValidationRetries: ptr(1), OnInvalid: "return_text", StreamPartialObjects: true, PartialObjectInterval: 250 * time.Millisecond},
	StreamIdleTimeout: 20 * time.Second,
	Resumable:         ptr(true),
}}

var hedgedRoute = &route.Route{Name: "hedged", Defaults: route.Defaults{
	Hedging: &route.HedgingDefaults{HedgeAfter: 300 * time.Millisecond, Adaptive: true, MaxHedges: 2, Target: route.HedgeTargetNext},
}}

// compact renders the request's fields the defaults touch.
func compact(t *testing.T, r *llmrelayv1.GenerateRequest) string {
	t.Helper()
	r.Model = ""
	b, err := protojson.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestRouteDefaults(t *testing.T) {
	h, err := hook.RouteDefaults([]*route.Route{supportRoute})
	if err != nil {
		t.Fatal(err)
	}
	user := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}
	tests := []struct {
		name     string
		route    *route.Route
		req      *llmrelayv1.GenerateRequest
		want     string
		wantNote string
	}{
		{
			name:  "an empty request takes every default",
			route: supportRoute,
			req:   &llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{user}},
			want: `{"messages":[{"role":"ROLE_SYSTEM","content":"You are the support assistant."},{"role":"ROLE_ASSISTANT","content":"How can I help?"},{"role":"ROLE_USER","content":"hi"}],` +
				`"generation":{"maxOutputTokens":1024,"temperature":0.2,"stop":["END"]},` +
				`"responseFormat":{"jsonSchema":{"type":"object"},"name":"ticket","maxValidationRetries":1,"onInvalid":"ON_INVALID_RETURN_TEXT","streamPartialObjects":true,"partialObjectInterval":"0.250s"},` +
				`"retry":{"maxAttempts":2,"initialBackoff":"1s","midstream":"MIDSTREAM_FAIL"},"streamIdleTimeout":"20s","resumable":true}`,
			wantNote: "messages,retry.max_attempts,retry.initial_backoff,retry.midstream,generation.max_output_tokens,generation.temperature,generation.stop,response_format,stream_idle_timeout,resumable",
		},
		{
			name:  "the request's own settings win, field by field",
			route: supportRoute,
			req: &llmrelayv1.GenerateRequest{
				Messages:          []*llmrelayv1.Message{user},
				Generation:        &llmrelayv1.GenerationConfig{Temperature: ptr(float32(1)), Stop: []string{"STOP"}},
				Retry:             &llmrelayv1.RetryPolicy{MaxAttempts: 5, Midstream: llmrelayv1.Midstream_MIDSTREAM_RESTART},
				ResponseFormat:    &llmrelayv1.ResponseFormat{Name: "mine"},
				StreamIdleTimeout: durationpb.New(time.Second),
				Resumable:         ptr(false), // a request turns the route's default off
			},
			want: `{"messages":[{"role":"ROLE_SYSTEM","content":"You are the support assistant."},{"role":"ROLE_ASSISTANT","content":"How can I help?"},{"role":"ROLE_USER","content":"hi"}],` +
				`"generation":{"maxOutputTokens":1024,"temperature":1,"stop":["STOP"]},"responseFormat":{"name":"mine"},` +
				`"retry":{"maxAttempts":5,"initialBackoff":"1s","midstream":"MIDSTREAM_RESTART"},"streamIdleTimeout":"1s","resumable":false}`,
			wantNote: "messages,retry.initial_backoff,generation.max_output_tokens",
		},
		{
			name:     "a request with tools gets no default schema",
			route:    &route.Route{Name: "schema", Defaults: route.Defaults{ResponseFormat: supportRoute.Defaults.ResponseFormat}},
			req:      &llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{user}, Tools: []*llmrelayv1.Tool{{Name: "f"}}},
			want:     `{"messages":[{"role":"ROLE_USER","content":"hi"}],"tools":[{"name":"f"}]}`,
			wantNote: "",
		},
		{
			name:  "a route's hedging applies whole to a request without one",
			route: hedgedRoute,
			req:   &llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{user}},
			want: `{"messages":[{"role":"ROLE_USER","content":"hi"}],` +
				`"hedging":{"hedgeAfter":"0.300s","adaptive":true,"maxHedges":2,"target":"HEDGE_TARGET_NEXT"}}`,
			wantNote: "hedging",
		},
		{
			name:  "a request's own hedging replaces the route's, max_hedges 0 turning it off",
			route: hedgedRoute,
			req:   &llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{user}, Hedging: &llmrelayv1.HedgePolicy{MaxHedges: ptr(uint32(0))}},
			want:  `{"messages":[{"role":"ROLE_USER","content":"hi"}],"hedging":{"maxHedges":0}}`,
		},
		{
			name:     "a provider's model has no route defaults",
			route:    nil,
			req:      &llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{user}},
			want:     `{"messages":[{"role":"ROLE_USER","content":"hi"}]}`,
			wantNote: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := h
			if tt.route != nil && tt.route != supportRoute {
				var err error
				if h, err = hook.RouteDefaults([]*route.Route{tt.route}); err != nil {
					t.Fatal(err)
				}
			}
			c := &hook.Call{Route: tt.route, Request: tt.req}
			if err := (hook.Chain{h}).Before(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			if got := compact(t, c.Request); got != tt.want {
				t.Errorf("request\n  %s\nwant\n  %s", got, tt.want)
			}
			if got := c.Annotations()[hook.AnnotationRouteDefaults]; got != tt.wantNote {
				t.Errorf("annotation %q, want %q", got, tt.wantNote)
			}
		})
	}
}

// recorder is a hook that records when it ran, refusing calls for "no".
type recorder struct {
	name string
	log  *[]string
}

func (r recorder) Name() string { return r.name }

func (r recorder) BeforeAttempts(_ context.Context, c *hook.Call) error {
	*r.log = append(*r.log, "before "+r.name)
	if c.Model == "no" {
		return &hook.Refusal{Message: "not this one"}
	}
	c.Annotate("by", r.name)
	return nil
}

func (r recorder) AfterFinal(_ context.Context, c *hook.Call, _ *llmrelayv1.Final) {
	*r.log = append(*r.log, "after "+r.name)
}

func TestChainRunsHooksInOrder(t *testing.T) {
	var log []string
	ch := hook.Chain{recorder{"first", &log}, recorder{"second", &log}}
	c := &hook.Call{Model: "ok"}
	if err := ch.Before(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	ch.After(t.Context(), c, &llmrelayv1.Final{})
	if got := strings.Join(log, ", "); got != "before first, before second, after first, after second" {
		t.Errorf("ran %s", got)
	}
	if c.Annotations()["by"] != "second" {
		t.Errorf("annotations %v: a later label replaces an earlier one", c.Annotations())
	}

	log = nil
	err := ch.Before(t.Context(), &hook.Call{Model: "no"})
	var r *hook.Refusal
	if !errors.As(err, &r) || r.Hook != "first" || strings.Join(log, ", ") != "before first" {
		t.Fatalf("refusal %v after %v, want the first hook's, and the second not run", err, log)
	}
}
