package engine_test

import (
	"context"
	"fmt"

	"buf.build/go/protovalidate"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/engine/enginetest"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/resume"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/retry/retrytest"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/state/memory"
)

// build builds an engine as the server's runtime does, from the default
// settings, on two mock providers (primary and backup), a buffered one
// (see bufferedProvider) and a gated one (gatedProvider), the route smart
// over them and an in-memory state store; keys, when given, are required
// of callers. stop ends what it started.
func build(keys ...auth.KeyConfig) (eng *engine.Engine, stop func(), err error) {
	return buildStreaming(config.Default().Streaming, keys...)
}

// buildStreaming is build with the streaming section st, and a gated
// provider besides (see gatedProvider).
func buildStreaming(st engine.Streaming, keys ...auth.KeyConfig) (eng *engine.Engine, stop func(), err error) {
	cfg := config.Default()
	providers, err := provider.NewSet([]provider.Config{{Name: "primary", Kind: "mock"}, {Name: "backup", Kind: "mock"},
		{Name: "buffered", Kind: kindBuffered}, {Name: "gated", Kind: kindGated}, {Name: "early", Kind: kindEarly},
		{Name: "stopseq", Kind: kindStopSeq}, {Name: "prepared", Kind: kindPrepared}})
	if err != nil {
		return nil, nil, err
	}
	store := memory.New()
	routes, err := route.NewTable([]route.Config{{Name: "smart", Targets: []route.TargetConfig{{Model: "primary/echo"}, {Model: "backup/echo"}}}},
		providers, route.Options{Health: store, Policy: cfg.OutlierDetection})
	if err != nil {
		return nil, nil, err
	}
	v, err := protovalidate.New()
	if err != nil {
		return nil, nil, err
	}
	authn := &engine.Authenticator{Throttle: auth.NewThrottle(cfg.Auth.Throttle, nil)}
	if len(keys) > 0 {
		if authn.Keys, err = auth.NewKeyring(keys); err != nil {
			return nil, nil, err
		}
	}
	reg := resume.New(cfg.Resume, store, nil, nil)
	eng = engine.New(engine.Deps{
		Providers: providers, Routes: routes, Timer: retrytest.Instant{},
		Retry: cfg.RetryLimits(), Schema: cfg.StructuredOutput,
		Output:    engine.OutputLimits{Default: cfg.Limits.DefaultMaxOutputBytes, Max: cfg.Limits.MaxOutputBytes},
		Heartbeat: engine.Heartbeat{MinInterval: cfg.Heartbeat.MinInterval},
		Streaming: st,
		Resume:    reg, Latencies: retry.NewLatencies(),
		Admission: &engine.Admission{
			Auth:      authn,
			Limits:    engine.NewKeyLimits(store, nil),
			Deadlines: engine.Deadlines{Default: cfg.Deadlines.Default, Max: cfg.Deadlines.Max},
			Size:      engine.RequestSize(cfg.Limits.MaxRequestBytes),
			Validator: engine.Validator{V: v},
			Resolver:  engine.Resolver{Routes: routes},
			Budget:    &engine.Budget{Budgets: spend.New(store, nil, nil, cfg.Governance, nil)},
			Queue:     engine.NewProviderQueue(nil, 0, nil),
		},
	})
	return eng, reg.Close, nil
}

// A door drives the engine in three steps: it describes its caller and
// admits the call (Admission.Admit), runs it (Generate) with a Sink that
// writes its wire format, and maps the *apierr.Error a failed call
// returns. Here the Sink records the events, and the provider fails the
// first attempt with a 503.
func ExampleEngine_Generate() {
	eng, stop, err := build(auth.KeyConfig{Name: "team-a", SHA256: auth.HashKey("sk-team-a"), Scopes: []string{"generate"}, Models: []string{"*"}})
	if err != nil {
		panic(err)
	}
	defer stop()
	req := &llmrelayv1.GenerateRequest{
		Model:    "smart",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hello"}},
	}
	req.ProviderOptions = mockFaults(`[{"status": 503}, {}]`)

	// The call record every step and log line shares.
	ctx, _ := callinfo.NewContext(context.Background())
	caller := engine.Caller{
		Credential: auth.Bearer([]string{"Bearer sk-team-a"}),
		Method:     llmrelayv1.LLMService_Generate_FullMethodName,
	}
	ctx, release, err := eng.Admission().Admit(ctx, caller, req)
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	defer release()
	sink := &enginetest.Recorder{}
	if err := eng.Generate(ctx, req, sink); err != nil {
		fmt.Println("failed:", err)
		return
	}
	for _, ev := range sink.Events() {
		switch e := ev.GetEvent().(type) {
		case *llmrelayv1.GenerateEvent_Delta:
			fmt.Printf("%d delta %q\n", ev.GetSequence(), e.Delta.GetText())
		case *llmrelayv1.GenerateEvent_WillRetry:
			fmt.Printf("%d will_retry %s, attempt %d\n", ev.GetSequence(), e.WillRetry.GetReason(), e.WillRetry.GetNextAttempt())
		case *llmrelayv1.GenerateEvent_Final:
			fmt.Printf("%d final %q from %s after %d attempts\n", ev.GetSequence(), e.Final.GetMessage().GetContent(), e.Final.GetProvider(), e.Final.GetAttempts())
		}
	}

	// A wrong key is refused with a typed error, which the door maps.
	ctx, _ = callinfo.NewContext(context.Background())
	caller.Credential = auth.Bearer([]string{"Bearer sk-wrong"})
	_, _, err = eng.Admission().Admit(ctx, caller, req)
	fmt.Println(err)
	// Output:
	// 1 will_retry RETRY_REASON_OVERLOADED, attempt 2
	// 2 delta "hello"
	// 3 final "hello" from primary after 2 attempts
	// Unauthenticated API_KEY_UNKNOWN: unknown API key
}
