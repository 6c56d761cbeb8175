package route

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/schema"
	"github.com/llmrelay/llmrelay/internal/setting"
)

// Config configures one route, as listed under `routes:` in the server's
// config file.
type Config struct {
	// Name is what requests write as their model. It follows NamePattern
	// (no "/": "<provider>/<model>" names a provider's model instead).
	Name string `yaml:"name"`
	// Balance says how a call's targets are ordered: "ordered" (the
	// default: configuration order) or "weighted" (by weight, at random).
	Balance string `yaml:"balance"`
	// Targets are the provider models the route stands for, in fallback
	// order. At least one.
	Targets []TargetConfig `yaml:"targets"`
	// Defaults apply to the request's fields that it leaves unset.
	Defaults Defaults `yaml:"defaults"`
	// Timeout bounds a call to the route, every target and wait included:
	// the call's deadline is at most this long after it starts. Zero: the
	// server's deadlines only.
	Timeout time.Duration `yaml:"timeout"`
}

// TargetConfig is one target of a route.
type TargetConfig struct {
	// Model is the target as "<provider>/<model>".
	Model string `yaml:"model"`
	// Weight is the target's share of a weighted route's calls; 0 (unset)
	// means 1. Only for balance: weighted.
	Weight int `yaml:"weight"`
}

// Defaults are a route's defaults: each applies only when the request
// leaves its field unset.
type Defaults struct {
	// Retry is the retry policy's defaults.
	Retry RetryDefaults `yaml:"retry"`
	// Generation is the sampling settings' defaults.
	Generation GenerationDefaults `yaml:"generation"`
	// System is a system prompt, sent as a system message ahead of the
	// request's messages (and of Messages).
	System string `yaml:"system"`
	// Messages are sent ahead of the request's messages, after System.
	Messages []Message `yaml:"messages"`
	// ResponseFormat is the route's structured output, for requests that
	// ask for none and offer no tools.
	ResponseFormat *ResponseFormat `yaml:"response_format"`
	// StreamIdleTimeout is the stream idle timeout of requests that set
	// none (still clamped to the server's deadlines.max_stream_idle).
	StreamIdleTimeout time.Duration `yaml:"stream_idle_timeout"`
	// Hedging is the route's hedging policy, for requests that have none
	// (a request's own hedging replaces it whole; max_hedges 0 turns it
	// off).
	Hedging *HedgingDefaults `yaml:"hedging"`
	// Resumable makes the route's calls resumable (docs/resume.md) unless
	// the request says otherwise; nil leaves it to requests.
	Resumable *bool `yaml:"resumable"`
	// ServerTools are the server tools (names "<server>/<tool>" or
	// patterns, as a request's server_tools) offered to the model in calls
	// whose request names none; see docs/tools.md.
	ServerTools []string `yaml:"server_tools"`
}

// HedgingDefaults mirror llmrelay.v1.HedgePolicy.
type HedgingDefaults struct {
	// HedgeAfter is the hedging delay; required unless Adaptive.
	HedgeAfter time.Duration `yaml:"hedge_after"`
	// Adaptive follows the target's observed p95 time to first delta.
	Adaptive bool `yaml:"adaptive"`
	// MaxHedges is 1 or 2; 0 (unset) means 1.
	MaxHedges int `yaml:"max_hedges"`
	// Target is "same" (the default) or "next".
	Target string `yaml:"target"`
}

// Hedge targets (HedgingDefaults.Target).
const (
	HedgeTargetSame = "same"
	HedgeTargetNext = "next"
)

// RetryDefaults mirror llmrelay.v1.RetryPolicy; zero values set nothing.
type RetryDefaults struct {
	MaxAttempts    int           `yaml:"max_attempts"`
	InitialBackoff time.Duration `yaml:"initial_backoff"`
	MaxBackoff     time.Duration `yaml:"max_backoff"`
	// Midstream is "restart" or "fail".
	Midstream string `yaml:"midstream"`
}

// GenerationDefaults mirror llmrelay.v1.GenerationConfig; nil and empty
// values set nothing.
type GenerationDefaults struct {
	MaxOutputTokens *int     `yaml:"max_output_tokens"`
	Temperature     *float64 `yaml:"temperature"`
	TopP            *float64 `yaml:"top_p"`
	Stop            []string `yaml:"stop"`
}

// Message is one message a route sends ahead of the request's.
type Message struct {
	// Role is "system", "user" or "assistant".
	Role    string `yaml:"role"`
	Content string `yaml:"content"`
}

// ResponseFormat mirrors llmrelay.v1.ResponseFormat.
type ResponseFormat struct {
	// JSONSchema is the JSON Schema (draft 2020-12). Required.
	JSONSchema map[string]any `yaml:"json_schema"`
	// Name is the schema's short name; empty means "response".
	Name string `yaml:"name"`
	// MaxValidationRetries is how many re-asks an invalid reply gets; nil
	// takes the server's default.
	MaxValidationRetries *int `yaml:"max_validation_retries"`
	// OnInvalid is "fail" (the default) or "return_text".
	OnInvalid string `yaml:"on_invalid"`
	// StreamPartialObjects streams partial_object events.
	StreamPartialObjects bool `yaml:"stream_partial_objects"`
	// PartialObjectInterval is the shortest time between two partial
	// objects of an attempt, 0..1m; 0: none.
	PartialObjectInterval time.Duration `yaml:"partial_object_interval"`
}

// Balance modes.
const (
	BalanceOrdered  = "ordered"
	BalanceWeighted = "weighted"
)

// NamePattern is the rule for a route's name: what the proto's rule on
// GenerateRequest.model accepts without a "/", the same rule as a
// provider's name.
const NamePattern = `^[a-z0-9][a-z0-9_-]{0,62}$`

var nameRE = regexp.MustCompile(NamePattern)

// Problem is one thing wrong with the routes' configuration.
type Problem struct {
	// Path is the setting at fault, e.g. "routes[1].targets[0].model".
	Path string
	// Message says what is wrong and what is expected.
	Message string
}

// Problem limits, the same as the contract's for a request.
const (
	maxAttempts        = 10
	maxOutputTokens    = 1_000_000
	maxStops           = 16
	maxStopBytes       = 256
	maxValidationRetry = 10
	maxPrefixMessages  = 64
	maxServerTools     = 64
	maxHedgeAfter      = 5 * time.Minute
)

// ResumableFor says whether a call of the route is resumable when its
// request set resumable to requested (nil: unset): the request's choice,
// else the route's default. The one owner of that decision: the route's
// defaults hook applies it, and the engine asks it before the hooks run
// (to keep the fingerprint of the request a repeated Generate is matched
// by).
func (d Defaults) ResumableFor(requested *bool) bool {
	if requested != nil {
		return *requested
	}
	return d.Resumable != nil && *d.Resumable
}

// MaxOutputTokensFor returns the output limit of a call of the route whose
// request set max_output_tokens to requested (nil: unset): the request's,
// else the route's default; 0 when neither sets one. The one owner of
// that decision: the route's defaults hook applies it, and the budget step
// reserves it before the hooks run (a route that caps its calls' output
// reserves that cap, not the server's default_output_tokens).
func (d Defaults) MaxOutputTokensFor(requested *uint32) int {
	switch {
	case requested != nil:
		return int(*requested)
	case d.Generation.MaxOutputTokens != nil:
		return *d.Generation.MaxOutputTokens
	}
	return 0
}

var schemaNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{0,64}$`)

// Check reports every problem with the routes' configuration that can be
// seen without building the providers: names, balance, targets (each
// "<provider>/<model>" of a configured provider, named once), weights and
// defaults. providers are the configured provider names. Whether a model
// is one its provider serves, and whether a default schema compiles, are
// checked when the server is built.
func Check(cfgs []Config, providers []string) []Problem {
	var ps []Problem
	bad := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	names := map[string]int{}
	for i, r := range cfgs {
		at := func(field string) string { return fmt.Sprintf("routes[%d].%s", i, field) }
		switch first, dup := names[r.Name]; {
		case r.Name == "":
			bad(at("name"), "required")
		case !nameRE.MatchString(r.Name):
			bad(at("name"), "%q cannot be called: a route name is what requests write as their model, "+
				"1 to 63 lower-case letters, digits, '_' or '-', starting with a letter or digit, with no '/' (for example \"smart\")", r.Name)
		case dup:
			bad(at("name"), "%q is listed twice (also routes[%d])", r.Name, first)
		default:
			names[r.Name] = i
		}
		switch r.Balance {
		case "", BalanceOrdered, BalanceWeighted:
		default:
			bad(at("balance"), "%s", setting.NotOneOf(r.Balance, BalanceOrdered, BalanceWeighted))
		}
		if len(r.Targets) == 0 {
			bad(at("targets"), "is empty; list the route's models, e.g. - model: openai/gpt-4.1")
		}
		seen := map[string]int{}
		for j, t := range r.Targets {
			tat := fmt.Sprintf("routes[%d].targets[%d]", i, j)
			p, m, ok := strings.Cut(t.Model, "/")
			switch first, dup := seen[t.Model]; {
			case !ok || p == "" || m == "":
				bad(tat+".model", "%q is not <provider>/<model>, such as openai/gpt-4.1", t.Model)
			case !slices.Contains(providers, p):
				bad(tat+".model", "%q names the provider %q, which is not configured; providers: %s", t.Model, p, strings.Join(providers, ", "))
			case dup:
				bad(tat+".model", "%q is listed twice (also targets[%d])", t.Model, first)
			default:
				seen[t.Model] = j
			}
			switch {
			case t.Weight < 0:
				bad(tat+".weight", "must not be negative")
			case t.Weight > 0 && r.Balance != BalanceWeighted:
				bad(tat+".weight", "only a route with balance: weighted uses weights")
			}
		}
		if r.Timeout < 0 {
			bad(at("timeout"), "must not be negative")
		}
		checkDefaults(r.Defaults, fmt.Sprintf("routes[%d].defaults", i), bad)
	}
	return ps
}

func checkDefaults(d Defaults, path string, bad func(path, format string, args ...any)) {
	at := func(field string) string { return path + "." + field }
	r := d.Retry
	if r.MaxAttempts < 0 || r.MaxAttempts > maxAttempts {
		bad(at("retry.max_attempts"), "%d is not within 1..%d (0 leaves it to the request and the server)", r.MaxAttempts, maxAttempts)
	}
	if r.InitialBackoff < 0 || r.InitialBackoff > time.Minute {
		bad(at("retry.initial_backoff"), "must be within 0..1m")
	}
	if r.MaxBackoff < 0 || r.MaxBackoff > 5*time.Minute {
		bad(at("retry.max_backoff"), "must be within 0..5m")
	}
	switch r.Midstream {
	case "", "restart", "fail":
	default:
		bad(at("retry.midstream"), "%s", setting.NotOneOf(r.Midstream, "restart", "fail"))
	}
	g := d.Generation
	if g.MaxOutputTokens != nil && (*g.MaxOutputTokens < 1 || *g.MaxOutputTokens > maxOutputTokens) {
		bad(at("generation.max_output_tokens"), "%d is not within 1..%d", *g.MaxOutputTokens, maxOutputTokens)
	}
	if g.Temperature != nil && (*g.Temperature < 0 || *g.Temperature > 2) {
		bad(at("generation.temperature"), "%v is not within 0..2", *g.Temperature)
	}
	if g.TopP != nil && (*g.TopP < 0 || *g.TopP > 1) {
		bad(at("generation.top_p"), "%v is not within 0..1", *g.TopP)
	}
	if len(g.Stop) > maxStops {
		bad(at("generation.stop"), "has %d sequences; at most %d", len(g.Stop), maxStops)
	}
	for k, s := range g.Stop {
		if s == "" || len(s) > maxStopBytes {
			bad(fmt.Sprintf("%s[%d]", at("generation.stop"), k), "must be 1 to %d bytes", maxStopBytes)
		}
	}
	if len(d.Messages) > maxPrefixMessages {
		bad(at("messages"), "has %d messages; at most %d", len(d.Messages), maxPrefixMessages)
	}
	for k, m := range d.Messages {
		mat := fmt.Sprintf("%s[%d]", at("messages"), k)
		switch m.Role {
		case "system", "user", "assistant":
		default:
			bad(mat+".role", "%s", setting.NotOneOf(m.Role, "system", "user", "assistant"))
		}
		if m.Content == "" {
			bad(mat+".content", "required")
		}
	}
	if rf := d.ResponseFormat; rf != nil {
		if len(rf.JSONSchema) == 0 {
			bad(at("response_format.json_schema"), "required: the JSON Schema the reply must conform to")
		}
		if !schemaNameRE.MatchString(rf.Name) {
			bad(at("response_format.name"), "%q must be up to 64 letters, digits, _ or -, like ticket", rf.Name)
		}
		if n := rf.MaxValidationRetries; n != nil && (*n < 0 || *n > maxValidationRetry) {
			bad(at("response_format.max_validation_retries"), "%d is not within 0..%d", *n, maxValidationRetry)
		}
		switch rf.OnInvalid {
		case "", "fail", "return_text":
		default:
			bad(at("response_format.on_invalid"), "%s", setting.NotOneOf(rf.OnInvalid, "fail", "return_text"))
		}
		if d := rf.PartialObjectInterval; d < 0 || d > time.Minute {
			bad(at("response_format.partial_object_interval"), "%s is not within 0..1m", d)
		}
	}
	if len(d.ServerTools) > maxServerTools {
		bad(at("server_tools"), "has %d entries; at most %d", len(d.ServerTools), maxServerTools)
	}
	for k, t := range d.ServerTools {
		if t == "" || len(t) > 256 || strings.ContainsFunc(t, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			bad(fmt.Sprintf("%s[%d]", at("server_tools"), k), "%q is not a server tool's name (<server>/<tool>) or a pattern on them", t)
		}
	}
	if len(d.ServerTools) > 0 && d.ResponseFormat != nil {
		bad(at("server_tools"), "cannot be combined with response_format: a call offering server tools cannot ask for structured output")
	}
	if d.StreamIdleTimeout < 0 || d.StreamIdleTimeout > time.Hour {
		bad(at("stream_idle_timeout"), "must be within 0..1h")
	}
	if h := d.Hedging; h != nil {
		switch {
		case h.HedgeAfter < 0 || h.HedgeAfter > maxHedgeAfter:
			bad(at("hedging.hedge_after"), "must be within 0..%s", maxHedgeAfter)
		case h.HedgeAfter == 0 && !h.Adaptive:
			bad(at("hedging.hedge_after"), "required unless adaptive is true: how long an attempt may show nothing before a hedge starts, e.g. 500ms")
		}
		if h.MaxHedges < 0 || h.MaxHedges > retry.MaxHedges {
			bad(at("hedging.max_hedges"), "%d is not 1 or 2 (unset: 1)", h.MaxHedges)
		}
		switch h.Target {
		case "", HedgeTargetSame, HedgeTargetNext:
		default:
			bad(at("hedging.target"), "%s", setting.NotOneOf(h.Target, HedgeTargetSame, HedgeTargetNext))
		}
	}
}

// Against is what the routes section is checked against: the configured
// providers' names, the server's hedging floor (retry.hedging's
// min_hedge_after) and the structured-output bounds a default schema must
// compile under.
type Against struct {
	Providers     []string
	MinHedgeAfter time.Duration
	// MinStreamTimeout is the floor of an attempt's stream timeouts
	// (deadlines.min_stream_timeout), which a route's timeout must leave
	// room for.
	MinStreamTimeout time.Duration
	Schemas          schema.Config
}

// CheckSection reports the routes section's problems (Check's), a
// default hedge_after below the server's floor, a timeout below the
// floor of stream timeouts (every call of the route would end before an
// attempt could wait that long for its provider), and a default
// response_format schema that does not compile, as a request's would not:
// a bad one stops the server at start rather than failing every call.
func CheckSection(cfgs []Config, a Against, p setting.Problems) {
	for _, rp := range Check(cfgs, a.Providers) {
		p.Bad(rp.Path, "%s", rp.Message)
	}
	var cache *schema.Cache
	for i, r := range cfgs {
		if r.Timeout > 0 && r.Timeout < a.MinStreamTimeout {
			p.Between(fmt.Sprintf("routes[%d].timeout", i), "deadlines.min_stream_timeout",
				"%s is shorter than deadlines.min_stream_timeout (%s): every call of the route would end before an attempt could wait that long for its provider",
				setting.Duration(r.Timeout), setting.Duration(a.MinStreamTimeout))
		}
		if h := r.Defaults.Hedging; h != nil && h.HedgeAfter > 0 && h.HedgeAfter < a.MinHedgeAfter {
			p.Between(fmt.Sprintf("routes[%d].defaults.hedging.hedge_after", i), "retry.hedging.min_hedge_after",
				"%s is shorter than retry.hedging.min_hedge_after (%s)", setting.Duration(h.HedgeAfter), setting.Duration(a.MinHedgeAfter))
		}
		rf := r.Defaults.ResponseFormat
		if rf == nil || len(rf.JSONSchema) == 0 {
			continue
		}
		at := fmt.Sprintf("routes[%d].defaults.response_format.json_schema", i)
		b, err := json.Marshal(rf.JSONSchema)
		if err != nil {
			p.Bad(at, "is not JSON: %v", err)
			continue
		}
		if cache == nil {
			cache = schema.NewCache(a.Schemas)
		}
		sch, err := cache.Compile(b)
		if err == nil {
			err = sch.Admit()
		}
		if err != nil {
			p.Bad(at, "%v", err)
		}
	}
}
