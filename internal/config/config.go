// Package config owns llmrelay's server configuration: its YAML shape, its
// defaults, and the order in which sources override one another
// (defaults → file → environment → flags), followed by Validate.
//
// Secrets never live in the config: API keys are listed by their SHA-256 and
// provider keys are read from environment variables named in the config.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/resume"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/schema"
	"github.com/llmrelay/llmrelay/internal/state"
)

// EnvConfig names the environment variable holding the config file's path.
const EnvConfig = "LLMRELAY_CONFIG"

// EnvListen names the environment variable that overrides `listen`.
const EnvListen = "LLMRELAY_LISTEN"

// Config is the whole server configuration.
type Config struct {
	// Listen is the gRPC address, host:port.
	Listen string `yaml:"listen"`
	// MetricsListen is the address of the Prometheus /metrics endpoint;
	// empty turns it off.
	MetricsListen string `yaml:"metrics_listen"`
	// DrainDelay is how long the server keeps accepting new calls after a
	// shutdown signal, with its health already NOT_SERVING, so load
	// balancers and proxies stop sending it calls before it refuses them.
	// The shutdown grace period starts after it. 0 refuses new calls at once.
	DrainDelay time.Duration `yaml:"drain_delay"`
	// ShutdownGrace bounds how long in-flight calls may run, once new calls
	// are refused, before they are cut off with UNAVAILABLE.
	ShutdownGrace time.Duration `yaml:"shutdown_grace"`

	Log              Log               `yaml:"log"`
	Providers        []provider.Config `yaml:"providers"`
	Retry            Retry             `yaml:"retry"`
	Deadlines        Deadlines         `yaml:"deadlines"`
	Auth             Auth              `yaml:"auth"`
	TLS              TLS               `yaml:"tls"`
	Limits           Limits            `yaml:"limits"`
	Heartbeat        Heartbeat         `yaml:"heartbeat"`
	StructuredOutput StructuredOutput  `yaml:"structured_output"`
	// State chooses where the state shared by replicas lives: this
	// process (memory, the default) or Redis; see docs/scale-out.md.
	State state.Config `yaml:"state"`
	// Tracing adjusts the traces the OTEL_* environment turns on; see
	// docs/observability.md.
	Tracing Tracing `yaml:"tracing"`
	// Pricing is the optional price table that turns tokens into cost.
	Pricing Pricing `yaml:"pricing"`
	// Reload says how the server learns of a new config besides SIGHUP.
	Reload Reload `yaml:"reload"`
	// Routes are names requests may use as their model, each standing for
	// one or more provider models (see internal/route and docs/routes.md).
	Routes []route.Config `yaml:"routes"`
	// OutlierDetection says when a route target that keeps failing is
	// ejected, and for how long.
	OutlierDetection OutlierDetection `yaml:"outlier_detection"`
	// Resume bounds resumable calls (GenerateRequest.resumable); see
	// docs/resume.md.
	Resume Resume `yaml:"resume"`

	// DefaultListens names the listen settings ("listen",
	// "metrics_listen") that Load found set by no file, variable or flag:
	// their addresses are the embedded default's (ListenIsDefault). Not a
	// setting: Load fills it in.
	DefaultListens []string `yaml:"-"`
}

// ListenIsDefault reports whether the address of setting ("listen" or
// "metrics_listen") is the embedded default's: Load found it set by no
// config file, environment variable or flag. When that address is taken
// (another llmrelay, or another program on 9464), the server may listen
// on a free port of the same host instead and say so; an address someone
// chose is used as it is, or the server fails.
func (c *Config) ListenIsDefault(setting string) bool {
	return slices.Contains(c.DefaultListens, setting)
}

// Resume bounds resumable calls: how long one runs without a reader and
// how long its events are kept after it ended (Grace), and how many bytes
// of events are kept per call and for all the calls of a replica. A call
// past a bound stops being resumable (RESUME_BUFFER_FULL).
type Resume struct {
	// Grace is how long a resumable call keeps running after its client
	// went away, waiting for a Resume, and how long its events are kept
	// after it ended.
	Grace time.Duration `yaml:"grace"`
	// MaxCallBytes bounds the events kept for one call (each counts its
	// encoded size plus 64 bytes).
	MaxCallBytes int64 `yaml:"max_call_bytes"`
	// MaxBufferedBytes bounds what all the resumable calls of this replica
	// keep (their events, and a fixed cost each), in memory or, with the
	// redis store, in Redis.
	MaxBufferedBytes int64 `yaml:"max_buffered_bytes"`
	// MaxReadersPerKey bounds the Resume streams one API key has open at
	// once (across the replicas that share a redis store), or the key's
	// max_concurrent_streams when that is higher: one key's readers cannot
	// crowd out another's.
	MaxReadersPerKey int `yaml:"max_readers_per_key"`
}

// OutlierDetection configures route target health (state.OutlierPolicy):
// ConsecutiveFailures attempts failing in a row (for reasons that are the
// target's, not the request's) eject a target for BaseEjectionTime, the
// n-th ejection in a row n times as long, at most MaxEjectionTime; one
// success restores it.
type OutlierDetection struct {
	ConsecutiveFailures int           `yaml:"consecutive_failures"`
	BaseEjectionTime    time.Duration `yaml:"base_ejection_time"`
	MaxEjectionTime     time.Duration `yaml:"max_ejection_time"`
}

// Heartbeat keeps quiet Generate streams alive through proxies that cut
// streams silent for longer than their idle timeout: a call with a
// heartbeat sends its response headers at once, and a heartbeat event
// whenever it has sent nothing else for the interval (see
// docs/deployment.md, "Timeouts of what sits in front").
type Heartbeat struct {
	// Interval turns the heartbeat on for every Generate call, with this
	// interval, unless a request asks for another one; 0 (the default)
	// leaves it to requests (heartbeat_interval).
	Interval time.Duration `yaml:"interval"`
	// MinInterval is the shortest heartbeat_interval a request may ask
	// for; shorter ones are INVALID_ARGUMENT.
	MinInterval time.Duration `yaml:"min_interval"`
}

// Log configures logging.
type Log struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is text or json.
	Format string `yaml:"format"`
}

// Retry holds the server's retry defaults and limits; requests may ask for
// less, never for more.
type Retry struct {
	// DefaultMaxAttempts applies when a request does not set max_attempts.
	DefaultMaxAttempts int `yaml:"default_max_attempts"`
	// MaxAttemptsLimit caps any request's max_attempts.
	MaxAttemptsLimit int `yaml:"max_attempts_limit"`
	// InitialBackoff is the default wait before the first retry.
	InitialBackoff time.Duration `yaml:"initial_backoff"`
	// MaxBackoff is the default cap on the backoff.
	MaxBackoff time.Duration `yaml:"max_backoff"`
	// MaxRetryAfter is the longest provider retry hint llmrelay waits for; a
	// longer hint fails the call at once with RetryInfo carrying the hint.
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
	// Budget bounds the retries in flight per provider.
	Budget RetryBudget `yaml:"budget"`
	// Hedging bounds what requests (and routes' defaults) may ask of
	// hedged attempts; see docs/retries.md.
	Hedging Hedging `yaml:"hedging"`
}

// Hedging bounds hedged attempts (GenerateRequest.hedging): a request may
// ask for fewer hedges, never for more, and no shorter delay than the floor.
type Hedging struct {
	// MaxHedges caps the hedges of any call (0, 1 or 2); 0 turns hedging
	// off on this server: calls that ask for it run without hedges.
	MaxHedges int `yaml:"max_hedges"`
	// MinHedgeAfter is the shortest hedge_after a request may ask for
	// (shorter is INVALID_ARGUMENT) and the least an adaptive delay waits.
	MinHedgeAfter time.Duration `yaml:"min_hedge_after"`
}

// RetryBudget is Envoy's retry budget, per provider: the retries in flight
// to a provider (from the decision to retry until its attempt starts) may
// not exceed BudgetPercent of its attempts in flight, and
// MinRetryConcurrency retries may always be in flight. It counts what is in
// flight, never history, so it recovers as soon as retries end. Retries of
// failures a caller caused (a stall under its own stricter idle or first
// event timeout) and structured-output re-asks do not count. See
// docs/retries.md.
type RetryBudget struct {
	// Enabled turns the budget on (the default); off, the call's own
	// max_attempts is the only bound on retries.
	Enabled bool `yaml:"enabled"`
	// BudgetPercent is the retries in flight allowed per 100 attempts in
	// flight to the same provider.
	BudgetPercent float64 `yaml:"budget_percent"`
	// MinRetryConcurrency is how many retries may be in flight to a
	// provider whatever its attempts in flight.
	MinRetryConcurrency int `yaml:"min_retry_concurrency"`
}

// Deadlines bounds every call.
type Deadlines struct {
	// Default applies to calls that arrive without a deadline.
	Default time.Duration `yaml:"default"`
	// Max clamps longer client deadlines.
	Max time.Duration `yaml:"max"`
	// StreamIdle is the default stream_idle_timeout: how long a streaming
	// attempt may show no sign of life.
	StreamIdle time.Duration `yaml:"stream_idle"`
	// MaxStreamIdle clamps a request's stream_idle_timeout.
	MaxStreamIdle time.Duration `yaml:"max_stream_idle"`
	// FirstEvent is the default first_event_timeout (how long an attempt
	// may wait for the provider's first byte) of providers that set no
	// first_event_timeout of their own.
	FirstEvent time.Duration `yaml:"first_event"`
	// MaxFirstEvent clamps first_event_timeout.
	MaxFirstEvent time.Duration `yaml:"max_first_event"`
	// MinStreamTimeout is the floor of a request's stream_idle_timeout and
	// first_event_timeout: shorter ones are refused with INVALID_ARGUMENT.
	MinStreamTimeout time.Duration `yaml:"min_stream_timeout"`
}

// Auth lists the API keys. With none, the server is open, which Validate
// allows only on a loopback address (IsLoopback).
type Auth struct {
	Keys []APIKey `yaml:"keys"`
	// Throttle limits failed authentications per caller address.
	Throttle AuthThrottle `yaml:"throttle"`
}

// AuthThrottle limits failed authentications per caller address (a token
// bucket per address, see interceptors.AuthThrottle): after Burst failures
// in a row, an address's calls are refused (UNAUTHENTICATED,
// AUTHENTICATION_THROTTLED, with RetryInfo) until it earns back a try, one
// per 1/PerSecond. Failures are logged at most once per address and
// LogInterval.
type AuthThrottle struct {
	// Burst: failures an address may make in a row; 0 turns throttling off.
	Burst int `yaml:"burst"`
	// PerSecond: how fast a throttled address earns back tries.
	PerSecond float64 `yaml:"per_second"`
	// LogInterval: at most one log line per address and interval.
	LogInterval time.Duration `yaml:"log_interval"`
}

// APIKey is one client key, stored as the SHA-256 of the key; its fields
// and their meaning are auth.KeyConfig's.
type APIKey = auth.KeyConfig

// TLS configures transport security. Both files or neither.
type TLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Enabled reports whether TLS is configured.
func (t TLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Limits bounds what one client can ask of the server.
type Limits struct {
	// MaxRecvMsgBytes is gRPC's hard cap on one received message
	// (grpc.MaxRecvMsgSize); gRPC refuses larger ones itself, with a plain
	// RESOURCE_EXHAUSTED.
	MaxRecvMsgBytes int `yaml:"max_recv_msg_bytes"`
	// MaxRequestBytes caps a request's total encoded size; larger requests
	// fail RESOURCE_EXHAUSTED with reason REQUEST_TOO_LARGE. At most
	// MaxRecvMsgBytes.
	MaxRequestBytes int `yaml:"max_request_bytes"`
	// MaxConcurrentStreamsPerConn caps HTTP/2 streams per connection.
	MaxConcurrentStreamsPerConn uint32 `yaml:"max_concurrent_streams_per_conn"`
	// ProviderQueue is how many calls may wait, per provider, for one of
	// the provider's max_concurrent slots; beyond it calls fail at once
	// with UNAVAILABLE (PROVIDER_BUSY).
	ProviderQueue int `yaml:"provider_queue"`
	// KeepaliveMinTime is the shortest interval at which clients may send
	// keepalive pings; clients pinging more often are disconnected
	// (GOAWAY "too_many_pings"). Pings are allowed without calls in flight.
	KeepaliveMinTime time.Duration `yaml:"keepalive_min_time"`
	// KeepaliveTime is how long a connection may be idle before the server
	// pings it, and KeepaliveTimeout how long it waits for the answer
	// before closing the connection.
	KeepaliveTime    time.Duration `yaml:"keepalive_time"`
	KeepaliveTimeout time.Duration `yaml:"keepalive_timeout"`
	// DefaultMaxOutputBytes is the output limit of a request that sets
	// none (output_limit.max_bytes): the most bytes of output (text,
	// refusals, tool calls, reasoning) one attempt may stream.
	DefaultMaxOutputBytes int64 `yaml:"default_max_output_bytes"`
	// MaxOutputBytes caps any request's output limit. Final repeats the
	// reply, so above about 3.5 MiB clients must raise their receive
	// limit (4 MiB by default in gRPC libraries).
	MaxOutputBytes int64 `yaml:"max_output_bytes"`
	// MaxConnectionAge is how long a client connection may live: then the
	// server sends GOAWAY, the client opens a new connection for its next
	// calls (which a load balancer may send to another replica), and calls
	// already running on the old one may finish within
	// MaxConnectionAgeGrace. gRPC adds ±10% jitter. 0 keeps connections
	// forever.
	MaxConnectionAge time.Duration `yaml:"max_connection_age"`
	// MaxConnectionAgeGrace is how long calls on an aged connection may
	// still run before the connection is closed under them; 0 means
	// deadlines.max, so no call within its deadline is cut (see
	// Config.ConnectionAgeGrace).
	MaxConnectionAgeGrace time.Duration `yaml:"max_connection_age_grace"`
	// StreamWorkers is how many goroutines gRPC keeps to serve calls
	// (grpc.NumStreamWorkers): a call served by one reuses the stack an
	// earlier call grew instead of growing a new one; calls beyond them get
	// a goroutine of their own, as without the pool. 0 picks 8 per CPU
	// (GOMAXPROCS); -1 turns the pool off.
	StreamWorkers int `yaml:"stream_workers"`
}

// StreamWorkerCount returns the number of stream workers StreamWorkers
// asks for: 8 per CPU when it is 0, none when it is negative.
func (l Limits) StreamWorkerCount() int {
	switch {
	case l.StreamWorkers < 0:
		return 0
	case l.StreamWorkers == 0:
		return 8 * runtime.GOMAXPROCS(0)
	}
	return l.StreamWorkers
}

// StructuredOutput bounds structured-output requests.
type StructuredOutput struct {
	// DefaultValidationRetries applies when a request does not set max_validation_retries.
	DefaultValidationRetries int `yaml:"default_validation_retries"`
	// MaxValidationRetries caps a request's max_validation_retries.
	MaxValidationRetries int `yaml:"max_validation_retries"`
	// MaxSchemaBytes rejects larger schemas.
	MaxSchemaBytes int `yaml:"max_schema_bytes"`
	// SchemaCacheSize bounds the compiled-schema cache.
	SchemaCacheSize int `yaml:"schema_cache_size"`
	// ValidationBudget bounds the work of checking one reply against its
	// schema, in validation steps (schema.Config.ValidationBudget).
	ValidationBudget int `yaml:"validation_budget"`
	// PartialObjectMinInterval is the shortest time between two
	// partial_object events of an attempt; a request's
	// partial_object_interval can only ask for longer. 0: none.
	PartialObjectMinInterval time.Duration `yaml:"partial_object_min_interval"`
}

// ConnectionAgeGrace returns how long calls on a connection past
// limits.max_connection_age may still run: max_connection_age_grace, or
// deadlines.max when that is 0.
func (c *Config) ConnectionAgeGrace() time.Duration {
	if c.Limits.MaxConnectionAgeGrace > 0 {
		return c.Limits.MaxConnectionAgeGrace
	}
	return c.Deadlines.Max
}

// Default returns the embedded default configuration: loopback, the mock
// provider, no keys.
func Default() *Config {
	return &Config{
		Listen:        "127.0.0.1:50051",
		MetricsListen: "127.0.0.1:9464",
		ShutdownGrace: 15 * time.Second,
		Log:           Log{Level: "info", Format: "text"},
		Retry: Retry{
			DefaultMaxAttempts: 3,
			MaxAttemptsLimit:   10,
			InitialBackoff:     500 * time.Millisecond,
			MaxBackoff:         8 * time.Second,
			MaxRetryAfter:      60 * time.Second,
			Budget:             RetryBudget{Enabled: true, BudgetPercent: 20, MinRetryConcurrency: 3},
			Hedging:            Hedging{MaxHedges: 2, MinHedgeAfter: 50 * time.Millisecond},
		},
		Deadlines: Deadlines{
			Default:          120 * time.Second,
			Max:              600 * time.Second,
			StreamIdle:       30 * time.Second,
			MaxStreamIdle:    300 * time.Second,
			FirstEvent:       120 * time.Second,
			MaxFirstEvent:    600 * time.Second,
			MinStreamTimeout: 100 * time.Millisecond,
		},
		Auth: Auth{Throttle: AuthThrottle{Burst: 20, PerSecond: 1, LogInterval: time.Minute}},
		Limits: Limits{
			MaxRecvMsgBytes:             8 << 20,
			MaxRequestBytes:             4 << 20,
			MaxConcurrentStreamsPerConn: 1000,
			ProviderQueue:               64,
			KeepaliveMinTime:            10 * time.Second,
			KeepaliveTime:               2 * time.Minute,
			KeepaliveTimeout:            20 * time.Second,
			DefaultMaxOutputBytes:       2 << 20,
			MaxOutputBytes:              3 << 20,
			MaxConnectionAge:            30 * time.Minute,
		},
		Heartbeat: Heartbeat{MinInterval: time.Second},
		StructuredOutput: StructuredOutput{
			DefaultValidationRetries: 2,
			MaxValidationRetries:     5,
			MaxSchemaBytes:           64 << 10,
			SchemaCacheSize:          256,
			ValidationBudget:         schema.DefaultValidationBudget,
		},
		OutlierDetection: OutlierDetection{
			ConsecutiveFailures: state.DefaultOutlierPolicy.Failures,
			BaseEjectionTime:    state.DefaultOutlierPolicy.BaseEjection,
			MaxEjectionTime:     state.DefaultOutlierPolicy.MaxEjection,
		},
		State:   state.DefaultConfig(),
		Pricing: Pricing{Currency: "USD"},
		Resume:  Resume{Grace: 60 * time.Second, MaxCallBytes: 8 << 20, MaxBufferedBytes: 256 << 20, MaxReadersPerKey: 32},
	}
}

// OutlierPolicy returns the outlier_detection section as internal/state's
// OutlierPolicy.
func (c *Config) OutlierPolicy() state.OutlierPolicy {
	o := c.OutlierDetection
	return state.OutlierPolicy{Failures: o.ConsecutiveFailures, BaseEjection: o.BaseEjectionTime, MaxEjection: o.MaxEjectionTime}
}

// RetryLimits returns the retry section and the stall timeouts (stream
// idle, first event) as internal/retry's Limits: Default's values are the
// only defaults.
func (c *Config) RetryLimits() retry.Limits {
	r, d := c.Retry, c.Deadlines
	return retry.Limits{
		DefaultMaxAttempts:       r.DefaultMaxAttempts,
		MaxAttemptsLimit:         r.MaxAttemptsLimit,
		InitialBackoff:           r.InitialBackoff,
		MaxBackoff:               r.MaxBackoff,
		MaxRetryAfter:            r.MaxRetryAfter,
		DefaultIdleTimeout:       d.StreamIdle,
		MaxIdleTimeout:           d.MaxStreamIdle,
		DefaultFirstEventTimeout: d.FirstEvent,
		MaxFirstEventTimeout:     d.MaxFirstEvent,
		MinStreamTimeout:         d.MinStreamTimeout,
		MaxHedges:                r.Hedging.MaxHedges,
		MinHedgeAfter:            r.Hedging.MinHedgeAfter,
	}
}

// RetryBudget returns retry.budget as internal/retry's BudgetConfig; ok is
// false when the budget is off.
func (c *Config) RetryBudget() (b retry.BudgetConfig, ok bool) {
	rb := c.Retry.Budget
	return retry.BudgetConfig{Percent: rb.BudgetPercent, MinRetryConcurrency: rb.MinRetryConcurrency}, rb.Enabled
}

// ResumeConfig returns the resume section as internal/resume's Config.
func (c *Config) ResumeConfig() resume.Config {
	r := c.Resume
	return resume.Config{Grace: r.Grace, MaxCallBytes: r.MaxCallBytes, MaxBufferedBytes: r.MaxBufferedBytes}
}

// SchemaConfig returns the structured_output section as internal/schema's
// Config: Default's values are the only defaults.
func (c *Config) SchemaConfig() schema.Config {
	so := c.StructuredOutput
	return schema.Config{
		MaxSchemaBytes:           so.MaxSchemaBytes,
		SchemaCacheSize:          so.SchemaCacheSize,
		ValidationBudget:         so.ValidationBudget,
		DefaultValidationRetries: so.DefaultValidationRetries,
		MaxValidationRetries:     so.MaxValidationRetries,
		PartialObjectMinInterval: so.PartialObjectMinInterval,
	}
}

// MaxHedges is the most hedges a server may allow a call
// (retry.hedging.max_hedges), as the contract's max_hedges is bounded.
const MaxHedges = 2

// DefaultProviders is the provider list used when the config names none.
func DefaultProviders() []provider.Config {
	return []provider.Config{{Name: "mock", Kind: "mock"}}
}

// EnvMetricsListen names the environment variable that overrides
// `metrics_listen`; "off" turns the endpoint off.
const EnvMetricsListen = "LLMRELAY_METRICS_LISTEN"

// Flags are the command-line overrides; empty fields override nothing.
type Flags struct {
	ConfigPath string
	Listen     string
	// MetricsListen, when not nil, overrides metrics_listen; "" or "off"
	// turns the endpoint off.
	MetricsListen *string
}

// fromCommandLine is how messages name a value that a flag set.
const fromCommandLine = "the command line"

// Load builds the configuration: defaults, then the file named by
// flags.ConfigPath or $LLMRELAY_CONFIG (if any), then $LLMRELAY_LISTEN and
// $LLMRELAY_METRICS_LISTEN, then the flags; and validates the result. A
// configuration with problems gives Problems, each naming its setting and
// the file's line (or the variable or flag that set it).
func Load(flags Flags, getenv func(string) string) (*Config, error) {
	cfg := Default()
	o := &origin{lines: map[string]int{}, sources: map[string]string{}}
	path, from := flags.ConfigPath, ""
	if path == "" {
		path, from = getenv(EnvConfig), " (from $"+EnvConfig+")"
	}
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("config file %s%s: %w", path, from, err)
		}
		o.file = path
		o.lines, err = cfg.decodeFile(path, f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	if v := getenv(EnvListen); v != "" {
		cfg.Listen = v
		o.override("listen", "$"+EnvListen)
	}
	if v := getenv(EnvMetricsListen); v != "" {
		cfg.MetricsListen = v
		o.override("metrics_listen", "$"+EnvMetricsListen)
	}
	if flags.Listen != "" {
		cfg.Listen = flags.Listen
		o.override("listen", fromCommandLine)
	}
	if flags.MetricsListen != nil {
		cfg.MetricsListen = *flags.MetricsListen
		o.override("metrics_listen", fromCommandLine)
	}
	if err := cfg.finish(o); err != nil {
		return nil, err
	}
	for _, setting := range []string{"listen", "metrics_listen"} {
		if _, inFile := o.lines[setting]; !inFile && o.sources[setting] == "" {
			cfg.DefaultListens = append(cfg.DefaultListens, setting)
		}
	}
	return cfg, nil
}

// Parse decodes YAML over the defaults, without the environment or flags,
// and validates the result. Tests use it; problems name the file "config".
func Parse(data []byte) (*Config, error) {
	cfg := Default()
	lines, err := cfg.decodeFile("config", bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if err := cfg.finish(&origin{file: "config", lines: lines}); err != nil {
		return nil, err
	}
	return cfg, nil
}

// finish completes a configuration whose sources have all been applied:
// the default provider list when there is none, each provider's transport
// and redirect defaults (so the effective configuration shows them), "off"
// as no metrics endpoint; then Validate, with each problem located by o.
func (c *Config) finish(o *origin) error {
	if len(c.Providers) == 0 {
		c.Providers = DefaultProviders()
	}
	if strings.EqualFold(c.MetricsListen, "off") {
		c.MetricsListen = ""
	}
	ps := c.validate()
	o.locate(ps)
	if err := ps.err(); err != nil {
		return err
	}
	// Checked as written (a transport timeout the operator set), then
	// completed, so that the effective configuration shows the defaults.
	for i := range c.Providers {
		c.Providers[i] = c.Providers[i].WithDefaults()
	}
	return nil
}

// Validate checks the configuration as a whole. It returns nil or
// Problems: every problem found, each naming its setting.
func (c *Config) Validate() error { return c.validate().err() }

func (c *Config) validate() Problems {
	var p problems
	bad := func(path, format string, args ...any) { p.add(path, nil, format, args...) }
	// badBoth reports a problem between two settings on the first; the
	// second gives the line when only it was set in the file.
	badBoth := func(path, other, format string, args ...any) { p.add(path, []string{other}, format, args...) }

	listenOK := true
	if msg := addrProblem(c.Listen, "127.0.0.1:50051"); msg != "" {
		bad("listen", "%s", msg)
		listenOK = false
	}
	if c.MetricsListen != "" {
		if msg := addrProblem(c.MetricsListen, "127.0.0.1:9464"); msg != "" {
			bad("metrics_listen", `%s; "" or off turns the metrics endpoint off`, msg)
		}
	}
	if c.DrainDelay < 0 {
		bad("drain_delay", "must not be negative")
	}
	if c.ShutdownGrace < 0 {
		bad("shutdown_grace", "must not be negative")
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "%q is not one of debug, info, warn, error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format", "%q is not text or json", c.Log.Format)
	}

	names := map[string]int{}
	for i, pr := range c.Providers {
		at := func(field string) string { return fmt.Sprintf("providers[%d].%s", i, field) }
		switch first, dup := names[pr.Name]; {
		case provider.CheckName(pr.Name) != nil:
			// The rule request models' provider part follows: a name
			// that breaks it could never be called.
			bad(at("name"), "%v", provider.CheckName(pr.Name))
		case dup:
			bad(at("name"), "%q is listed twice (also providers[%d])", pr.Name, first)
		default:
			names[pr.Name] = i
		}
		if pr.Kind == "" {
			kinds := ""
			if k := provider.Kinds(); len(k) > 0 {
				kinds = "; one of " + strings.Join(k, ", ")
			}
			bad(at("kind"), "required%s", kinds)
		}
		if pr.Timeout < 0 {
			bad(at("timeout"), "must not be negative")
		}
		if pr.MaxConcurrent < 0 {
			bad(at("max_concurrent"), "must not be negative")
		}
		var cp *provider.ConfigProblem
		if err := provider.CheckRedirects(pr.Redirects); errors.As(err, &cp) {
			bad(at(cp.Field), "%s", cp.Problem)
		}
		if err := pr.Transport.Check(); errors.As(err, &cp) {
			bad(at(cp.Field), "%s", cp.Problem)
		}
		// A transport timeout the first event timeout always ends first
		// could never fire: refuse it rather than let the stall timer
		// override it silently.
		first, firstAt := c.Deadlines.FirstEvent, "deadlines.first_event"
		if pr.FirstEventTimeout > 0 {
			first, firstAt = pr.FirstEventTimeout, at("first_event_timeout")
		}
		for _, tt := range []struct {
			name string
			v    time.Duration
		}{
			{"transport.dial_timeout", pr.Transport.DialTimeout},
			{"transport.tls_handshake_timeout", pr.Transport.TLSHandshakeTimeout},
			{"transport.response_header_timeout", pr.Transport.ResponseHeaderTimeout},
		} {
			if tt.v > 0 && first > 0 && tt.v >= first {
				badBoth(at(tt.name), firstAt, "%s is not shorter than the first event timeout (%s), which bounds the wait for the provider's first byte and would always end it first; raise %s or leave this unset",
					formatDuration(tt.v), formatDuration(first), firstAt)
			}
		}
		if pr.FirstEventTimeout < 0 || pr.FirstEventTimeout > 0 && pr.FirstEventTimeout < c.Deadlines.MinStreamTimeout {
			badBoth(at("first_event_timeout"), "deadlines.min_stream_timeout", "%s is not 0 (the server's deadlines.first_event) or at least min_stream_timeout (%s)",
				formatDuration(pr.FirstEventTimeout), formatDuration(c.Deadlines.MinStreamTimeout))
		}
		for j, k := range pr.ProviderOptions.Allow {
			if k == "" {
				bad(at(fmt.Sprintf("provider_options.allow[%d]", j)), "must not be empty")
			} else if slices.Contains(pr.ProviderOptions.Deny, k) {
				bad(at(fmt.Sprintf("provider_options.allow[%d]", j)), "%q is also in provider_options.deny", k)
			}
		}
		for j, k := range pr.ProviderOptions.Deny {
			if k == "" {
				bad(at(fmt.Sprintf("provider_options.deny[%d]", j)), "must not be empty")
			}
		}
	}

	r := c.Retry
	if r.MaxAttemptsLimit < 1 || r.MaxAttemptsLimit > 10 {
		bad("retry.max_attempts_limit", "%d is not within 1..10", r.MaxAttemptsLimit)
	}
	if r.DefaultMaxAttempts < 1 || r.DefaultMaxAttempts > r.MaxAttemptsLimit {
		badBoth("retry.default_max_attempts", "retry.max_attempts_limit", "%d is not within 1..max_attempts_limit (%d)", r.DefaultMaxAttempts, r.MaxAttemptsLimit)
	}
	if r.InitialBackoff <= 0 {
		bad("retry.initial_backoff", "must be positive")
	} else if r.MaxBackoff < r.InitialBackoff {
		badBoth("retry.max_backoff", "retry.initial_backoff", "%s is shorter than initial_backoff (%s)", formatDuration(r.MaxBackoff), formatDuration(r.InitialBackoff))
	}
	if r.MaxRetryAfter <= 0 {
		bad("retry.max_retry_after", "must be positive")
	}
	if b := r.Budget; b.BudgetPercent < 0 || b.BudgetPercent > 1000 {
		bad("retry.budget.budget_percent", "%v is not within 0..1000 (retries in flight per 100 attempts in flight)", b.BudgetPercent)
	}
	if r.Budget.MinRetryConcurrency < 0 {
		bad("retry.budget.min_retry_concurrency", "must not be negative")
	}
	if h := r.Hedging; h.MaxHedges < 0 || h.MaxHedges > MaxHedges {
		bad("retry.hedging.max_hedges", "%d is not within 0..%d (0 turns hedging off)", h.MaxHedges, MaxHedges)
	}
	if h := r.Hedging; h.MinHedgeAfter <= 0 || h.MinHedgeAfter > time.Minute {
		bad("retry.hedging.min_hedge_after", "%s is not within 1ms..1m", formatDuration(h.MinHedgeAfter))
	}
	for i, rt := range c.Routes {
		h := rt.Defaults.Hedging
		if h == nil || h.HedgeAfter <= 0 || h.HedgeAfter >= r.Hedging.MinHedgeAfter {
			continue
		}
		badBoth(fmt.Sprintf("routes[%d].defaults.hedging.hedge_after", i), "retry.hedging.min_hedge_after",
			"%s is shorter than retry.hedging.min_hedge_after (%s)", formatDuration(h.HedgeAfter), formatDuration(r.Hedging.MinHedgeAfter))
	}
	if b := r.Budget; b.Enabled && b.BudgetPercent == 0 && b.MinRetryConcurrency == 0 {
		badBoth("retry.budget.min_retry_concurrency", "retry.budget.budget_percent",
			"0 with budget_percent 0 would deny every retry; set max_attempts to 1 for that, or enabled: false for no budget")
	}

	d := c.Deadlines
	if d.Default <= 0 {
		bad("deadlines.default", "must be positive")
	} else if d.Max < d.Default {
		badBoth("deadlines.max", "deadlines.default", "%s is shorter than default (%s)", formatDuration(d.Max), formatDuration(d.Default))
	}
	if d.MinStreamTimeout <= 0 {
		bad("deadlines.min_stream_timeout", "must be positive")
	}
	if d.StreamIdle < d.MinStreamTimeout || d.StreamIdle <= 0 {
		badBoth("deadlines.stream_idle", "deadlines.min_stream_timeout", "%s is shorter than min_stream_timeout (%s)", formatDuration(d.StreamIdle), formatDuration(d.MinStreamTimeout))
	} else if d.MaxStreamIdle < d.StreamIdle {
		badBoth("deadlines.max_stream_idle", "deadlines.stream_idle", "%s is shorter than stream_idle (%s)", formatDuration(d.MaxStreamIdle), formatDuration(d.StreamIdle))
	}
	if d.FirstEvent < d.MinStreamTimeout || d.FirstEvent <= 0 {
		badBoth("deadlines.first_event", "deadlines.min_stream_timeout", "%s is shorter than min_stream_timeout (%s)", formatDuration(d.FirstEvent), formatDuration(d.MinStreamTimeout))
	} else if d.MaxFirstEvent < d.FirstEvent {
		badBoth("deadlines.max_first_event", "deadlines.first_event", "%s is shorter than first_event (%s)", formatDuration(d.MaxFirstEvent), formatDuration(d.FirstEvent))
	}

	switch {
	case c.TLS.CertFile != "" && c.TLS.KeyFile == "":
		badBoth("tls.key_file", "tls.cert_file", "required with cert_file: tls needs the certificate and its private key")
	case c.TLS.CertFile == "" && c.TLS.KeyFile != "":
		badBoth("tls.cert_file", "tls.key_file", "required with key_file: tls needs the certificate and its private key")
	}
	l := c.Limits
	if l.MaxRecvMsgBytes <= 0 {
		bad("limits.max_recv_msg_bytes", "must be positive")
	}
	if l.MaxRequestBytes < 0 || l.MaxRequestBytes > l.MaxRecvMsgBytes {
		badBoth("limits.max_request_bytes", "limits.max_recv_msg_bytes", "%d is not within 0..max_recv_msg_bytes (%d)", l.MaxRequestBytes, l.MaxRecvMsgBytes)
	}
	if l.ProviderQueue < 0 {
		bad("limits.provider_queue", "must not be negative")
	}
	if l.StreamWorkers < -1 {
		bad("limits.stream_workers", "%d is not -1 (off), 0 (8 per CPU) or a count", l.StreamWorkers)
	}
	if l.KeepaliveMinTime <= 0 {
		bad("limits.keepalive_min_time", "must be positive")
	}
	if l.KeepaliveTime <= 0 {
		bad("limits.keepalive_time", "must be positive")
	}
	if l.KeepaliveTimeout <= 0 {
		bad("limits.keepalive_timeout", "must be positive")
	}
	if l.MaxOutputBytes <= 0 {
		bad("limits.max_output_bytes", "must be positive")
	}
	if l.DefaultMaxOutputBytes <= 0 || l.DefaultMaxOutputBytes > l.MaxOutputBytes {
		badBoth("limits.default_max_output_bytes", "limits.max_output_bytes", "%d is not within 1..max_output_bytes (%d)", l.DefaultMaxOutputBytes, l.MaxOutputBytes)
	}
	if r := c.Resume; r.Grace <= 0 {
		bad("resume.grace", "must be positive")
	}
	if r := c.Resume; r.MaxCallBytes <= 0 {
		bad("resume.max_call_bytes", "must be positive")
	} else if r.MaxBufferedBytes < r.MaxCallBytes {
		bad("resume.max_buffered_bytes", "%d is below resume.max_call_bytes (%d)", r.MaxBufferedBytes, r.MaxCallBytes)
	}
	if r := c.Resume; r.MaxReadersPerKey <= 0 {
		bad("resume.max_readers_per_key", "must be positive")
	}
	if h := c.Heartbeat; h.MinInterval <= 0 {
		bad("heartbeat.min_interval", "must be positive")
	} else if h.Interval < 0 || (h.Interval > 0 && h.Interval < h.MinInterval) {
		badBoth("heartbeat.interval", "heartbeat.min_interval", "%s is not 0 (off) or at least min_interval (%s)", formatDuration(h.Interval), formatDuration(h.MinInterval))
	}
	if l.MaxConnectionAge < 0 {
		bad("limits.max_connection_age", "must not be negative (0 keeps connections forever)")
	}
	if l.MaxConnectionAgeGrace < 0 {
		bad("limits.max_connection_age_grace", "must not be negative (0 means deadlines.max)")
	}

	if _, err := auth.NewKeyring(c.Auth.Keys); err != nil {
		var ke *auth.KeyError
		if errors.As(err, &ke) {
			badBoth(fmt.Sprintf("auth.keys[%d].%s", ke.Index, ke.Field), fmt.Sprintf("auth.keys[%d]", ke.Index), "%s", ke.Problem)
		} else {
			bad("auth.keys", "%v", err)
		}
	}
	if th := c.Auth.Throttle; th.Burst < 0 {
		bad("auth.throttle.burst", "must not be negative")
	} else if th.Burst > 0 && th.PerSecond <= 0 {
		bad("auth.throttle.per_second", "must be positive when burst is (burst: 0 turns the throttle off)")
	}
	if c.Auth.Throttle.LogInterval <= 0 {
		bad("auth.throttle.log_interval", "must be positive")
	}
	if listenOK && len(c.Auth.Keys) == 0 && !IsLoopback(c.Listen) {
		bad("listen", "%s is not a loopback address and auth.keys is empty: refusing to serve without authentication; "+
			"add keys (`llmrelay hash-key` prints a key's sha256) or listen on 127.0.0.1", c.Listen)
	}

	so := c.StructuredOutput
	if so.MaxValidationRetries < 0 {
		bad("structured_output.max_validation_retries", "must not be negative")
	}
	if so.DefaultValidationRetries < 0 || so.DefaultValidationRetries > so.MaxValidationRetries {
		badBoth("structured_output.default_validation_retries", "structured_output.max_validation_retries",
			"%d is not within 0..max_validation_retries (%d)", so.DefaultValidationRetries, so.MaxValidationRetries)
	}
	if so.MaxSchemaBytes <= 0 {
		bad("structured_output.max_schema_bytes", "must be positive")
	}
	if so.SchemaCacheSize <= 0 {
		bad("structured_output.schema_cache_size", "must be positive")
	}
	if so.ValidationBudget <= 0 {
		bad("structured_output.validation_budget", "must be positive")
	}
	if so.PartialObjectMinInterval < 0 || so.PartialObjectMinInterval > time.Minute {
		bad("structured_output.partial_object_min_interval", "%s is not within 0..1m", formatDuration(so.PartialObjectMinInterval))
	}

	providerNames := make([]string, 0, len(c.Providers))
	for _, pr := range c.Providers {
		providerNames = append(providerNames, pr.Name)
	}
	for _, rp := range route.Check(c.Routes, providerNames) {
		bad(rp.Path, "%s", rp.Message)
	}
	c.checkRouteSchemas(bad)
	od := c.OutlierDetection
	if od.ConsecutiveFailures < 1 {
		bad("outlier_detection.consecutive_failures", "must be at least 1")
	}
	if od.BaseEjectionTime <= 0 {
		bad("outlier_detection.base_ejection_time", "must be positive")
	} else if od.MaxEjectionTime < od.BaseEjectionTime {
		badBoth("outlier_detection.max_ejection_time", "outlier_detection.base_ejection_time", "%s is shorter than base_ejection_time (%s)",
			formatDuration(od.MaxEjectionTime), formatDuration(od.BaseEjectionTime))
	}
	c.State.Check(func(path, format string, args ...any) { bad("state."+path, format, args...) })
	c.checkPricing(bad)
	return p.list
}

// checkRouteSchemas compiles every route's default response_format
// schema, as a request's would be, so that a bad one stops the server at
// start rather than failing every call.
func (c *Config) checkRouteSchemas(bad func(path, format string, args ...any)) {
	var cache *schema.Cache
	for i, r := range c.Routes {
		rf := r.Defaults.ResponseFormat
		if rf == nil || len(rf.JSONSchema) == 0 {
			continue
		}
		at := fmt.Sprintf("routes[%d].defaults.response_format.json_schema", i)
		b, err := json.Marshal(rf.JSONSchema)
		if err != nil {
			bad(at, "is not JSON: %v", err)
			continue
		}
		if cache == nil {
			cache = schema.NewCache(c.SchemaConfig())
		}
		s, err := cache.Compile(b)
		if err == nil {
			err = s.Admit()
		}
		if err != nil {
			bad(at, "%v", err)
		}
	}
}

// addrProblem says what is wrong with a listen address, or returns "". A
// port alone gets the host:port forms that mean what was likely meant.
func addrProblem(addr, example string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		if n, err := strconv.Atoi(addr); err == nil && n >= 0 && n <= 65535 {
			return fmt.Sprintf("%q is a port without a host; use 127.0.0.1:%s (this machine only) or 0.0.0.0:%s (every interface)", addr, addr, addr)
		}
		return fmt.Sprintf("%q is not host:port, such as %s", addr, example)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("%q: the port must be a number from 0 to 65535, as in %s", addr, example)
	}
	return ""
}

// IsLoopback reports whether the host:port address listens only on the
// loopback interface: "localhost" or a loopback IP. An empty host, 0.0.0.0,
// :: and every other name or address are not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
