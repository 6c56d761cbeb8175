package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	adminv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/admin/v1"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/retry/retrytest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/telemetry/otlptest"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// usageOf waits until GetUsage holds key's record with calls calls (a
// cancelled call settles as its handler ends, after the client saw the
// end) and returns it.
func usageOf(t *testing.T, in *servertest.Instance, key string, calls uint64) *adminv1.UsageRecord {
	t.Helper()
	for {
		resp, err := adminv1.NewUsageServiceClient(in.Conn).GetUsage(bearer(t.Context(), adminSecret), &adminv1.GetUsageRequest{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		if recs := resp.GetRecords(); len(recs) == 1 && recs[0].GetCalls() >= calls {
			return recs[0]
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("the key's usage never counted %d calls: %v", calls, resp.GetRecords())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// streamThenCancel makes req with the key secret, reads its deltas until
// they spell want (and no more) and cancels the call.
func streamThenCancel(t *testing.T, in *servertest.Instance, secret string, req *llmrelayv1.GenerateRequest, want string) {
	t.Helper()
	ctx, cancel := context.WithCancel(bearer(t.Context(), secret))
	defer cancel()
	stream, err := in.Client.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	streamed := ""
	for streamed != want {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("after %q: %v", streamed, err)
		}
		if streamed += ev.GetDelta().GetText(); len(streamed) > len(want) {
			t.Fatalf("streamed %q, more than the %q before the upstream pauses", streamed, want)
		}
	}
}

// TestCancelledCallIsChargedWhatItStreamed: an OpenAI-style upstream
// reports usage only in its last chunk. A key whose call is cancelled
// after 4 streamed deltas (before that chunk) has its budget charged the
// estimate: a token per 3 bytes of its request as input, and per 3 bytes
// of the 4 deltas' text as output, at its model's prices; GetUsage says
// it was estimated, the metric counts it. A call that runs to its end is
// charged exactly what the upstream reported, none of it estimated. With
// either state store.
func TestCancelledCallIsChargedWhatItStreamed(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			const n = 4
			hold := make(chan struct{})
			up := openaitest.Start(t, openaitest.Options{Chunks: 20, Pause: &openaitest.Pause{After: n, Until: hold}})
			cfg := governanceConfig(redisFor(t, store), "estimate-"+t.Name()+":")
			cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL(), Models: []string{"fake-model"}}}
			cfg.Pricing.Models = map[string]usage.Price{"up/fake-model": {"input": 10, "output": 20}}
			in := servertest.Start(t, cfg)
			secret := createKey(t, in, &adminv1.Key{Name: "ci", Scopes: []string{"generate"}, Models: []string{"*"},
				Budgets: []*adminv1.Budget{{Window: "day", MaxTokens: 1_000_000}}})

			req, want := budgetRequest(), openaitest.Text(n)
			streamThenCancel(t, in, secret, req, want)

			input, output := int64(proto.Size(req)+2)/3, int64(len(want)+2)/3
			cost := float64(input)*10e-6 + float64(output)*20e-6
			rec := usageOf(t, in, "ci", 1)
			if u := rec.GetUsage(); u.GetInputTokens() != uint64(input) || u.GetOutputTokens() != uint64(output) ||
				rec.GetEstimatedInputTokens() != uint64(input) || rec.GetEstimatedOutputTokens() != uint64(output) {
				t.Fatalf("usage %v, want %d input and %d output tokens, all estimated", rec, input, output)
			}
			if math.Abs(rec.GetCostUsd()-cost) > 1e-9 || math.Abs(rec.GetEstimatedCostUsd()-cost) > 1e-9 {
				t.Fatalf("cost $%v (estimated $%v), want $%v", rec.GetCostUsd(), rec.GetEstimatedCostUsd(), cost)
			}
			key, err := adminv1.NewKeyServiceClient(in.Conn).GetKey(bearer(t.Context(), adminSecret), &adminv1.GetKeyRequest{Name: "ci"})
			if err != nil {
				t.Fatal(err)
			}
			if got := key.GetKey().GetBudgets()[0].GetSpentTokens(); got != uint64(input+output) {
				t.Fatalf("the budget spent %d tokens, want the estimate's %d", got, input+output)
			}
			body := in.Server.Metrics().Text()
			for typ, want := range map[string]int64{"input": input, "output": output} {
				if line := fmt.Sprintf(`llmrelay_estimated_tokens_total{model="fake-model",provider="up",type=%q} %d`, typ, want); !strings.Contains(body, line) {
					t.Errorf("/metrics lacks %s:\n%s", line, grepLines(body, "estimated"))
				}
			}

			// A call that runs to its end: exactly what the upstream
			// reported (10 input tokens, one output token a chunk).
			close(hold)
			final, err := generate(t.Context(), in, secret, budgetRequest())
			if err != nil {
				t.Fatal(err)
			}
			if u := final.GetUsage(); u.GetInputTokens() != 10 || u.GetOutputTokens() != 20 {
				t.Fatalf("final usage %v, want the upstream's 10 and 20", u)
			}
			rec = usageOf(t, in, "ci", 2)
			if u := rec.GetUsage(); u.GetInputTokens() != uint64(input)+10 || u.GetOutputTokens() != uint64(output)+20 ||
				rec.GetEstimatedInputTokens() != uint64(input) || rec.GetEstimatedOutputTokens() != uint64(output) {
				t.Fatalf("usage after a complete call %v, want its reported 10 and 20 tokens added, none estimated", rec)
			}
			if want := cost + 10*10e-6 + 20*20e-6; math.Abs(rec.GetCostUsd()-want) > 1e-9 {
				t.Fatalf("cost $%v, want $%v", rec.GetCostUsd(), want)
			}
		})
	}
}

// TestCancelledAnthropicCallIsChargedWhatItStreamed: Anthropic reports the
// input and one output token at message_start, the output's whole only at
// the reply's end. A key whose call is cancelled after 4 streamed deltas
// is charged the reported input and, as output, a token per 3 bytes of
// the deltas' text (not the one token reported so far); GetUsage counts
// the output beyond that one token as estimated.
func TestCancelledAnthropicCallIsChargedWhatItStreamed(t *testing.T) {
	words := []string{"the ", "quick ", "brown ", "fox "}
	var body strings.Builder
	sse := func(event, data string) { fmt.Fprintf(&body, "event: %s\ndata: %s\n\n", event, data) }
	sse("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}}`)
	sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for _, w := range words {
		sse("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, w))
	}
	up := pt.NewUpstream(t, func(int, *http.Request) pt.Reply {
		// Held open after the deltas until the client goes away.
		return pt.Reply{Body: []byte(body.String()), After: 2 + len(words), Fault: pt.FaultStall}
	})
	t.Setenv("LLMRELAY_TEST_ANTHROPIC_KEY", "sk-ant-test")
	cfg := governanceConfig(nil, "")
	cfg.Providers = []provider.Config{{Name: "claude", Kind: "anthropic", BaseURL: up.URL, APIKeyEnv: "LLMRELAY_TEST_ANTHROPIC_KEY", Models: []string{"claude-test"}}}
	cfg.Pricing.Models = map[string]usage.Price{"claude/claude-test": {"input": 10, "output": 20}}
	in := servertest.Start(t, cfg)
	secret := createKey(t, in, &adminv1.Key{Name: "ci", Scopes: []string{"generate"}, Models: []string{"*"},
		Budgets: []*adminv1.Budget{{Window: "day", MaxTokens: 1_000_000}}})

	req := budgetRequest()
	req.Model = "claude/claude-test"
	want := strings.Join(words, "")
	streamThenCancel(t, in, secret, req, want)

	output := int64(len(want)+2) / 3
	rec := usageOf(t, in, "ci", 1)
	if u := rec.GetUsage(); u.GetInputTokens() != 25 || u.GetOutputTokens() != uint64(output) ||
		rec.GetEstimatedInputTokens() != 0 || rec.GetEstimatedOutputTokens() != uint64(output-1) {
		t.Fatalf("usage %v, want the reported 25 input tokens and %d output tokens, %d of them estimated", rec, output, output-1)
	}
	if cost := 25*10e-6 + float64(output)*20e-6; math.Abs(rec.GetCostUsd()-cost) > 1e-9 {
		t.Fatalf("cost $%v, want $%v", rec.GetCostUsd(), cost)
	}
}

// TestEstimatedUsageIsLoggedAndTraced: the call of
// TestCancelledCallIsChargedWhatItStreamed, cancelled before its
// upstream's usage came, logged and traced. Its finish line and its server
// span show the tokens the budget counted by estimate (and their cost)
// beside the provider-reported usage, which stays 0: what an operator
// reads in the log matches what GetUsage and the budget counted.
func TestEstimatedUsageIsLoggedAndTraced(t *testing.T) {
	recv, tr := otlpTracing(t)

	const n = 4
	hold := make(chan struct{})
	defer close(hold)
	up := openaitest.Start(t, openaitest.Options{Chunks: 20, Pause: &openaitest.Pause{After: n, Until: hold}})
	cfg := governanceConfig(nil, "")
	cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL(), Models: []string{"fake-model"}}}
	cfg.Pricing.Models = map[string]usage.Price{"up/fake-model": {"input": 10, "output": 20}}
	var logs servertest.LockedBuffer
	in := servertest.Start(t, cfg, server.WithTracing(tr), server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	secret := createKey(t, in, &adminv1.Key{Name: "ci", Scopes: []string{"generate"}, Models: []string{"*"}})

	req := budgetRequest()
	req.RequestId = "5f0c3a52-6a1e-4f7e-9a38-1c2d3e4f5a6b"
	want := openaitest.Text(n)
	streamThenCancel(t, in, secret, req, want)
	input, output := int64(proto.Size(req)+2)/3, int64(len(want)+2)/3
	cost := float64(input)*10e-6 + float64(output)*20e-6
	usageOf(t, in, "ci", 1)

	// The line is written as the handler returns.
	var line string
	for deadline := time.Now().Add(30 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		line = grepLines(logs.String(), `msg="finished call" request_id=5f0c3a52-6a1e-4f7e-9a38-1c2d3e4f5a6b`)
	}
	for _, want := range []string{
		" usage.input_tokens=0 ", " usage.output_tokens=0 ", " usage.cost=0 ",
		fmt.Sprintf(" usage.estimated_input_tokens=%d ", input), fmt.Sprintf(" usage.estimated_output_tokens=%d ", output),
		fmt.Sprintf(" usage.estimated_cost=%v ", cost),
	} {
		if !strings.Contains(line, want) {
			t.Errorf("the finish line lacks %q:\n%s", want, line)
		}
	}

	if err := tr.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}
	wait, stop := context.WithTimeout(t.Context(), 30*time.Second) // a guard against hangs only
	defer stop()
	spans, err := recv.Wait(wait, func(s []otlptest.Span) bool {
		return slices.ContainsFunc(s, func(s otlptest.Span) bool { return s.GetName() == "llmrelay.v1.LLMService/Generate" })
	})
	if err != nil {
		t.Fatalf("no server span among %d: %v", len(spans), err)
	}
	for _, s := range spans {
		if s.GetName() == "llmrelay.v1.LLMService/Generate" {
			wantAttrs(t, "server span", s, map[string]any{
				"gen_ai.usage.input_tokens": int64(0), "gen_ai.usage.output_tokens": int64(0),
				"llmrelay.estimated.input_tokens": input, "llmrelay.estimated.output_tokens": output,
			})
			if v, ok := s.Attr("llmrelay.estimated.cost"); !ok || math.Abs(v.GetDoubleValue()-cost) > 1e-12 {
				t.Errorf("server span: llmrelay.estimated.cost = %v, want %v", v, cost)
			}
		}
	}
}

// slowFirstKind is the kind of slowFirst providers.
const slowFirstKind = "test-slow-first"

// slowFirsts holds the slowFirst provider of each test that uses one, by
// the base_url its config names.
var slowFirsts sync.Map

func init() {
	provider.Register(slowFirstKind, func(cfg provider.Config) (provider.Provider, error) {
		p, ok := slowFirsts.Load(cfg.BaseURL)
		if !ok {
			return nil, fmt.Errorf("no slowFirst provider at %q", cfg.BaseURL)
		}
		return p.(*slowFirst), nil
	})
}

// slowFirst is a provider slow to its first token: its first attempt's
// stream opens (the provider took the request, and may bill its prompt),
// streams first, events that show the client nothing, and then nothing
// more until the attempt is cancelled; any other attempt streams reply.
type slowFirst struct {
	first, reply []provider.Event
	// waiting is closed once the first attempt handled first and waits
	// for more; lost receives why its context ended.
	waiting chan struct{}
	lost    chan error
}

// newSlowFirst returns the slowFirst provider of the test's config, at
// base_url t.Name().
func newSlowFirst(t *testing.T, first, reply []provider.Event) *slowFirst {
	p := &slowFirst{first: first, reply: reply, waiting: make(chan struct{}), lost: make(chan error, 1)}
	slowFirsts.Store(t.Name(), p)
	t.Cleanup(func() { slowFirsts.Delete(t.Name()) })
	return p
}

func (p *slowFirst) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	if req.Attempt == 1 {
		return &silentStream{p: p, ctx: ctx, events: p.first}, nil
	}
	return &replyStream{events: p.reply}, nil
}

// silentStream streams its events, then shows nothing until its attempt
// is cancelled.
type silentStream struct {
	p      *slowFirst
	ctx    context.Context
	events []provider.Event
}

func (s *silentStream) Recv() (provider.Event, error) {
	if len(s.events) > 0 {
		ev := s.events[0]
		s.events = s.events[1:]
		return ev, nil
	}
	close(s.p.waiting)
	<-s.ctx.Done()
	s.p.lost <- context.Cause(s.ctx)
	return provider.Event{}, s.ctx.Err()
}

func (s *silentStream) Close() error { return nil }

// replyStream streams its events, then ends.
type replyStream struct{ events []provider.Event }

func (s *replyStream) Recv() (provider.Event, error) {
	if len(s.events) == 0 {
		return provider.Event{}, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *replyStream) Close() error { return nil }

// TestLostHedgeIsCharged: a hedged call whose first attempt's provider
// took the request (its stream opened) but showed nothing; the hedge
// answers and wins, and the first attempt is cancelled. The key's usage
// and budget count the winner's reported tokens and what settlement
// counts for the cancelled attempt, whose prompt the provider bills: with
// no report, the estimate, a token per 3 bytes of its request as input
// and nothing as output (it produced none), at the model's prices, which
// GetUsage says was estimated; with the input reported at the stream's
// start (as Anthropic's message_start), that report. The Final's usage is
// what the providers reported.
func TestLostHedgeIsCharged(t *testing.T) {
	reply := []provider.Event{
		{Kind: provider.EventText, Text: "the "},
		{Kind: provider.EventText, Text: "fast"},
		{Kind: provider.EventFinish, FinishReason: provider.FinishStop},
		{Kind: provider.EventUsage, Usage: provider.Usage{InputTokens: 10, OutputTokens: 2}},
	}
	prompt := int64(proto.Size(hedgedBudgetRequest())+2) / 3 // the estimate of a request's input
	tests := []struct {
		name  string
		first []provider.Event // what the lost attempt streamed
		// the lost attempt's reported and estimated tokens
		reported, estimated provider.Usage
	}{
		{"no report: its estimate", nil, provider.Usage{}, provider.Usage{InputTokens: prompt}},
		{"its input reported at the start: that report",
			[]provider.Event{{Kind: provider.EventUsage, Usage: provider.Usage{InputTokens: 25, OutputTokens: 1}}},
			provider.Usage{InputTokens: 25, OutputTokens: 1}, provider.Usage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newSlowFirst(t, tt.first, reply)
			timer := retrytest.NewManualTimer()
			cfg := governanceConfig(nil, "")
			cfg.Providers = []provider.Config{{Name: "up", Kind: slowFirstKind, BaseURL: t.Name(), Models: []string{"fake-model"}}}
			cfg.Pricing.Models = map[string]usage.Price{"up/fake-model": {"input": 10, "output": 20}}
			in := servertest.Start(t, cfg, server.WithRetryTimer(timer))
			secret := createKey(t, in, &adminv1.Key{Name: "ci", Scopes: []string{"generate"}, Models: []string{"*"},
				Budgets: []*adminv1.Budget{{Window: "day", MaxTokens: 1_000_000}}})

			stream, err := in.Client.Generate(bearer(t.Context(), secret), hedgedBudgetRequest())
			if err != nil {
				t.Fatal(err)
			}
			recvWithin(t, p.waiting, "the first attempt's stream")
			timer.Next(t).Fire() // hedge_after passed without a delta: the hedge starts
			events, err := servertest.ReadAll(stream)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			last := events[len(events)-1]
			if final := last.GetFinal(); final.GetMessage().GetContent() != "the fast" || last.GetAttempt() != 2 || final.GetHedges() != 1 {
				t.Fatalf("final %v of attempt %d, want the hedge's reply, attempt 2, after 1 hedge", final, last.GetAttempt())
			}
			reported := provider.Usage{InputTokens: 10 + tt.reported.InputTokens, OutputTokens: 2 + tt.reported.OutputTokens}
			if u := last.GetFinal().GetUsage(); u.GetInputTokens() != uint64(reported.InputTokens) || u.GetOutputTokens() != uint64(reported.OutputTokens) {
				t.Fatalf("final usage %v, want what the providers reported, %d and %d", u, reported.InputTokens, reported.OutputTokens)
			}
			if cause := recvWithin(t, p.lost, "the first attempt's cancellation"); !errors.Is(cause, retry.ErrLost) {
				t.Fatalf("the first attempt ended with %v, want %v", cause, retry.ErrLost)
			}

			input, output := reported.InputTokens+tt.estimated.InputTokens, reported.OutputTokens+tt.estimated.OutputTokens
			rec := usageOf(t, in, "ci", 1)
			if u := rec.GetUsage(); u.GetInputTokens() != uint64(input) || u.GetOutputTokens() != uint64(output) ||
				rec.GetEstimatedInputTokens() != uint64(tt.estimated.InputTokens) || rec.GetEstimatedOutputTokens() != uint64(tt.estimated.OutputTokens) {
				t.Fatalf("usage %v, want %d input and %d output tokens, %d and %d of them estimated", rec, input, output, tt.estimated.InputTokens, tt.estimated.OutputTokens)
			}
			cost, estimated := float64(input)*10e-6+float64(output)*20e-6, float64(tt.estimated.InputTokens)*10e-6+float64(tt.estimated.OutputTokens)*20e-6
			if math.Abs(rec.GetCostUsd()-cost) > 1e-9 || math.Abs(rec.GetEstimatedCostUsd()-estimated) > 1e-9 {
				t.Fatalf("cost $%v (estimated $%v), want $%v ($%v)", rec.GetCostUsd(), rec.GetEstimatedCostUsd(), cost, estimated)
			}
			key, err := adminv1.NewKeyServiceClient(in.Conn).GetKey(bearer(t.Context(), adminSecret), &adminv1.GetKeyRequest{Name: "ci"})
			if err != nil {
				t.Fatal(err)
			}
			if got := key.GetKey().GetBudgets()[0].GetSpentTokens(); got != uint64(input+output) {
				t.Fatalf("the budget spent %d tokens, want both attempts' %d", got, input+output)
			}
		})
	}
}

// hedgedBudgetRequest is budgetRequest, hedged after hedgeAfter.
func hedgedBudgetRequest() *llmrelayv1.GenerateRequest {
	req := budgetRequest()
	req.Hedging = &llmrelayv1.HedgePolicy{HedgeAfter: durationpb.New(hedgeAfter)}
	return req
}

// TestEstimatedCostIsInTheMetrics: a call whose first attempt is cut
// after 4 streamed deltas and is retried, behind an upstream of each wire
// format (OpenAI's usage in its last chunk, Anthropic's input at
// message_start, Gemini's usageMetadata with the finish). The budget and
// GetUsage count the cut attempt's estimate; /metrics has it too, by key
// and team, in llmrelay_estimated_cost_total, so that what Prometheus says
// a team spent (llmrelay_cost_total and llmrelay_estimated_cost_total)
// is what GetUsage says it was charged. Without it the cut attempt's cost
// was charged to the key and shown nowhere in /metrics.
func TestEstimatedCostIsInTheMetrics(t *testing.T) {
	for _, format := range []string{openaitest.FormatOpenAI, openaitest.FormatAnthropic, openaitest.FormatGemini} {
		t.Run(format, func(t *testing.T) {
			up := openaitest.Start(t, openaitest.Options{Chunks: 6, Format: format, Faults: []openaitest.Fault{{Kind: openaitest.Drop, After: 4}}})
			t.Setenv("LLMRELAY_TEST_UP_KEY", "sk-test")
			cfg := governanceConfig(nil, "")
			cfg.Providers = []provider.Config{{Name: "up", Kind: format, BaseURL: up.URL(), APIKeyEnv: "LLMRELAY_TEST_UP_KEY", Models: []string{"fake-model"}}}
			cfg.Pricing.Models = map[string]usage.Price{"up/fake-model": {"input": 10, "output": 20}}
			cfg.Teams = []spend.Team{{Name: "research"}}
			in := servertest.Start(t, cfg)
			secret := createKey(t, in, &adminv1.Key{Name: "ci", Team: "research", Scopes: []string{"generate"}, Models: []string{"*"},
				Budgets: []*adminv1.Budget{{Window: "day", MaxCostUsd: 1}}})

			req := budgetRequest()
			req.Retry = &llmrelayv1.RetryPolicy{MaxAttempts: 2, InitialBackoff: durationpb.New(time.Millisecond), MaxBackoff: durationpb.New(time.Millisecond)}
			final, err := generate(t.Context(), in, secret, req)
			if err != nil {
				t.Fatal(err)
			}
			if final.GetAttempts() != 2 {
				t.Fatalf("final after %d attempts, want the cut one and its retry", final.GetAttempts())
			}
			rec := usageOf(t, in, "ci", 1)
			if rec.GetEstimatedCostUsd() == 0 {
				t.Fatalf("usage %v: nothing estimated for the cut attempt", rec)
			}
			body := in.Server.Metrics().Text()
			labels := `gen_ai_operation_name="chat",interface="grpc",key="ci",model="fake-model",provider="up",route="",team="research"`
			reported, estimated := metricFloat(t, body, metrics.NameCost, labels), metricFloat(t, body, metrics.NameEstimatedCost, labels)
			if math.Abs(estimated-rec.GetEstimatedCostUsd()) > 1e-12 || math.Abs(reported+estimated-rec.GetCostUsd()) > 1e-12 {
				t.Fatalf("/metrics: $%v reported and $%v estimated; GetUsage charged $%v, $%v of it estimated:\n%s", reported, estimated,
					rec.GetCostUsd(), rec.GetEstimatedCostUsd(), grepLines(body, metrics.NameCost, metrics.NameEstimatedCost))
			}
			key, err := adminv1.NewKeyServiceClient(in.Conn).GetKey(bearer(t.Context(), adminSecret), &adminv1.GetKeyRequest{Name: "ci"})
			if err != nil {
				t.Fatal(err)
			}
			if spent := key.GetKey().GetBudgets()[0].GetSpentCostUsd(); math.Abs(spent-rec.GetCostUsd()) > 1e-12 {
				t.Fatalf("the budget spent $%v, GetUsage says $%v", spent, rec.GetCostUsd())
			}
		})
	}
}

// metricFloat returns the value of the series of metric name with exactly
// labels in the /metrics text body, 0 when it is not there.
func metricFloat(t *testing.T, body, name, labels string) float64 {
	t.Helper()
	prefix := name + "{" + labels + "} "
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return 0
}
