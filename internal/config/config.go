// Package config owns llmrelay's server configuration: its YAML shape, its
// defaults, and the order in which sources override one another
// (defaults → file → environment → flags), followed by Validate.
//
// Secrets never live in the config: API keys are listed by their SHA-256 and
// provider keys are read from environment variables named in the config.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/provider"
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
	// ShutdownGrace bounds how long in-flight calls may run after a shutdown
	// signal before they are cut off with UNAVAILABLE.
	ShutdownGrace time.Duration `yaml:"shutdown_grace"`

	Log              Log               `yaml:"log"`
	Providers        []provider.Config `yaml:"providers"`
	Retry            Retry             `yaml:"retry"`
	Deadlines        Deadlines         `yaml:"deadlines"`
	Auth             Auth              `yaml:"auth"`
	TLS              TLS               `yaml:"tls"`
	Limits           Limits            `yaml:"limits"`
	StructuredOutput StructuredOutput  `yaml:"structured_output"`
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
	// Budget throttles retries per provider.
	Budget RetryBudget `yaml:"budget"`
}

// RetryBudget is a per-provider token bucket (gRFC A6 retry throttling):
// each failed attempt takes one token, each success gives back TokenRatio;
// retries stop while the bucket holds MaxTokens/2 or less.
type RetryBudget struct {
	MaxTokens  float64 `yaml:"max_tokens"`
	TokenRatio float64 `yaml:"token_ratio"`
}

// Deadlines bounds every call.
type Deadlines struct {
	// Default applies to calls that arrive without a deadline.
	Default time.Duration `yaml:"default"`
	// Max clamps longer client deadlines.
	Max time.Duration `yaml:"max"`
	// StreamIdle is the default stream_idle_timeout.
	StreamIdle time.Duration `yaml:"stream_idle"`
	// MaxStreamIdle clamps a request's stream_idle_timeout.
	MaxStreamIdle time.Duration `yaml:"max_stream_idle"`
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
			Budget:             RetryBudget{MaxTokens: 100, TokenRatio: 0.1},
		},
		Deadlines: Deadlines{
			Default:       120 * time.Second,
			Max:           600 * time.Second,
			StreamIdle:    30 * time.Second,
			MaxStreamIdle: 300 * time.Second,
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
		},
		StructuredOutput: StructuredOutput{
			DefaultValidationRetries: 2,
			MaxValidationRetries:     5,
			MaxSchemaBytes:           64 << 10,
			SchemaCacheSize:          256,
		},
	}
}

// DefaultProviders is the provider list used when the config names none.
func DefaultProviders() []provider.Config {
	return []provider.Config{{Name: "mock", Kind: "mock"}}
}

// Flags are the command-line overrides; empty fields override nothing.
type Flags struct {
	ConfigPath string
	Listen     string
}

// Load builds the configuration: defaults, then the file named by
// flags.ConfigPath or $LLMRELAY_CONFIG (if any), then $LLMRELAY_LISTEN, then
// the flags; and validates the result.
func Load(flags Flags, getenv func(string) string) (*Config, error) {
	cfg := Default()
	path := flags.ConfigPath
	if path == "" {
		path = getenv(EnvConfig)
	}
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		err = cfg.decode(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
	}
	if v := getenv(EnvListen); v != "" {
		cfg.Listen = v
	}
	if flags.Listen != "" {
		cfg.Listen = flags.Listen
	}
	if len(cfg.Providers) == 0 {
		cfg.Providers = DefaultProviders()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Parse decodes YAML over the defaults, without the environment or flags,
// and validates the result. Tests use it.
func Parse(data []byte) (*Config, error) {
	cfg := Default()
	if err := cfg.decode(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(cfg.Providers) == 0 {
		cfg.Providers = DefaultProviders()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// decode reads YAML over cfg. Unknown fields are errors: a typo must not
// silently fall back to a default.
func (c *Config) decode(r io.Reader) error {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Validate checks the configuration as a whole and returns every problem
// found, joined.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen: %q is not host:port: %v", c.Listen, err)
	}
	if c.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(c.MetricsListen); err != nil {
			bad("metrics_listen: %q is not host:port: %v", c.MetricsListen, err)
		}
	}
	if c.ShutdownGrace < 0 {
		bad("shutdown_grace: must not be negative")
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level: %q is not one of debug, info, warn, error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format: %q is not text or json", c.Log.Format)
	}

	names := map[string]bool{}
	for i, p := range c.Providers {
		if err := provider.CheckName(p.Name); err != nil {
			bad("providers[%d].name: %w", i, err)
		} else if names[p.Name] {
			bad("providers[%d].name: %q is listed twice", i, p.Name)
		}
		names[p.Name] = true
		if p.Kind == "" {
			bad("providers[%d].kind: required", i)
		}
		if p.Timeout < 0 || p.MaxConcurrent < 0 {
			bad("providers[%d]: timeout and max_concurrent must not be negative", i)
		}
		if err := provider.CheckRedirects(p.Redirects); err != nil {
			bad("providers[%d].%w", i, err)
		}
		if err := p.Transport.Check(); err != nil {
			bad("providers[%d].%w", i, err)
		}
	}

	r := c.Retry
	if r.MaxAttemptsLimit < 1 || r.MaxAttemptsLimit > 10 {
		bad("retry.max_attempts_limit: %d is not within 1..10", r.MaxAttemptsLimit)
	}
	if r.DefaultMaxAttempts < 1 || r.DefaultMaxAttempts > r.MaxAttemptsLimit {
		bad("retry.default_max_attempts: %d is not within 1..max_attempts_limit (%d)", r.DefaultMaxAttempts, r.MaxAttemptsLimit)
	}
	if r.InitialBackoff <= 0 || r.MaxBackoff < r.InitialBackoff {
		bad("retry: initial_backoff must be positive and max_backoff at least initial_backoff")
	}
	if r.MaxRetryAfter <= 0 {
		bad("retry.max_retry_after: must be positive")
	}
	if r.Budget.MaxTokens < 0 || r.Budget.TokenRatio < 0 {
		bad("retry.budget: max_tokens and token_ratio must not be negative")
	}

	d := c.Deadlines
	if d.Default <= 0 || d.Max < d.Default {
		bad("deadlines: default must be positive and max at least default")
	}
	if d.StreamIdle <= 0 || d.MaxStreamIdle < d.StreamIdle {
		bad("deadlines: stream_idle must be positive and max_stream_idle at least stream_idle")
	}

	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		bad("tls: cert_file and key_file go together")
	}
	l := c.Limits
	if l.MaxRecvMsgBytes <= 0 {
		bad("limits.max_recv_msg_bytes: must be positive")
	}
	if l.MaxRequestBytes < 0 || l.MaxRequestBytes > l.MaxRecvMsgBytes {
		bad("limits.max_request_bytes: %d is not within 0..max_recv_msg_bytes (%d)", l.MaxRequestBytes, l.MaxRecvMsgBytes)
	}
	if l.ProviderQueue < 0 {
		bad("limits.provider_queue: must not be negative")
	}
	if l.StreamWorkers < -1 {
		bad("limits.stream_workers: %d is not -1 (off), 0 (8 per CPU) or a count", l.StreamWorkers)
	}
	if l.KeepaliveMinTime <= 0 || l.KeepaliveTime <= 0 || l.KeepaliveTimeout <= 0 {
		bad("limits: keepalive_min_time, keepalive_time and keepalive_timeout must be positive")
	}

	if _, err := auth.NewKeyring(c.Auth.Keys); err != nil {
		bad("%w", err)
	}
	if th := c.Auth.Throttle; th.Burst < 0 || (th.Burst > 0 && th.PerSecond <= 0) || th.LogInterval <= 0 {
		bad("auth.throttle: burst must not be negative, per_second must be positive when burst is, and log_interval must be positive")
	}
	if len(c.Auth.Keys) == 0 && !IsLoopback(c.Listen) {
		bad("listen: %s is not a loopback address and auth.keys is empty: refusing to serve without authentication; "+
			"add keys (`llmrelay hash-key` prints a key's sha256) or listen on 127.0.0.1", c.Listen)
	}

	so := c.StructuredOutput
	if so.MaxValidationRetries < 0 || so.DefaultValidationRetries < 0 || so.DefaultValidationRetries > so.MaxValidationRetries {
		bad("structured_output: default_validation_retries must be within 0..max_validation_retries")
	}
	if so.MaxSchemaBytes <= 0 || so.SchemaCacheSize <= 0 {
		bad("structured_output: max_schema_bytes and schema_cache_size must be positive")
	}
	return errors.Join(errs...)
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

// Redacted returns a copy safe to log: nothing secret is in the config by
// design, but key hashes are shortened all the same.
func (c *Config) Redacted() Config {
	cp := *c
	cp.Auth.Keys = make([]APIKey, len(c.Auth.Keys))
	for i, k := range c.Auth.Keys {
		k.SHA256 = shorten(k.SHA256)
		cp.Auth.Keys[i] = k
	}
	return cp
}

func shorten(h string) string {
	if len(h) <= 8 {
		return h
	}
	return h[:8] + "…"
}
