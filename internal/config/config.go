// Package config owns llmrelay's server configuration as a whole: it
// composes the sections (each section's type, defaults and rules live in
// the package that uses it: retry.Config, auth.Config, schema.Config,
// resume.Config, state.Config, engine's Deadlines, Limits, Heartbeat and
// Streaming, route's and provider's lists, usage.Pricing; see
// internal/setting),
// decodes YAML over the defaults, applies the order in which sources
// override one another (defaults → file → environment → flags), and
// reports every section's problems with their setting's path and line, in
// one report. A section that needs only itself (a setting.Checker) is
// checked by being a field of Config, with no other wiring. It
// holds the server's own settings (listeners, shutdown, logging, TLS, the
// gRPC server's limits) and no rule about another package's section.
//
// Secrets never live in the config: API keys are listed by their SHA-256 and
// provider keys are read from environment variables named in the config.
package config

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/netip"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/resume"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/schema"
	"github.com/llmrelay/llmrelay/internal/servertools"
	"github.com/llmrelay/llmrelay/internal/setting"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// EnvConfig names the environment variable holding the config file's path.
const EnvConfig = "LLMRELAY_CONFIG"

// EnvListen names the environment variable that overrides `listen`.
const EnvListen = "LLMRELAY_LISTEN"

// Config is the whole server configuration.
type Config struct {
	// Listen is the gRPC address, host:port.
	Listen string `yaml:"listen"`
	// HTTPListen is the address of the HTTP doors (OpenAI's and
	// Anthropic's APIs, docs/http.md); empty ("off" in the file) turns
	// them off.
	HTTPListen string `yaml:"http_listen"`
	// HTTPTLS is the HTTP listener's own TLS; none when empty.
	HTTPTLS TLS `yaml:"http_tls"`
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
	Streaming        Streaming         `yaml:"streaming"`
	StructuredOutput StructuredOutput  `yaml:"structured_output"`
	// State chooses where the state shared by replicas lives: this
	// process (memory, the default) or Redis; see docs/scale-out.md.
	State state.Config `yaml:"state"`
	// Tracing adjusts the traces the OTEL_* environment turns on; see
	// docs/observability.md.
	Tracing Tracing `yaml:"tracing"`
	// Pricing is the optional price table that turns tokens into cost.
	Pricing Pricing `yaml:"pricing"`
	// Teams are the teams API keys may belong to, each with the budgets
	// its keys share (see docs/keys.md).
	Teams []spend.Team `yaml:"teams"`
	// Governance says what a call reserves against its budgets and how
	// long the usage per key and team is kept.
	Governance Governance `yaml:"governance"`
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
	// Tools are the MCP servers whose tools llmrelay runs for the model
	// (GenerateRequest.server_tools), and the tool loop's bounds; see
	// docs/tools.md.
	Tools servertools.Config `yaml:"tools"`

	// DefaultListens names the listen settings ("listen", "http_listen",
	// "metrics_listen") that Load found set by no file, variable or flag:
	// their addresses are the embedded default's (ListenIsDefault). Not a
	// setting: Load fills it in.
	DefaultListens []string `yaml:"-"`

	// origin is where each setting came from (Load, Parse), for Locate.
	origin *origin
}

// ListenIsDefault reports whether the address of setting ("listen",
// "http_listen" or "metrics_listen") is the embedded default's: Load found it set by no
// config file, environment variable or flag. When that address is taken
// (another llmrelay, or another program on 9464), the server may listen
// on a free port of the same host instead and say so; an address someone
// chose is used as it is, or the server fails.
func (c *Config) ListenIsDefault(setting string) bool {
	return slices.Contains(c.DefaultListens, setting)
}

// The sections each package owns: their types, defaults and checks live
// there; config composes them.
type (
	// Resume is the resume section (resume.Config); see docs/resume.md.
	Resume = resume.Config
	// OutlierDetection is the outlier_detection section
	// (state.OutlierPolicy): when a route target that keeps failing is
	// ejected, and for how long.
	OutlierDetection = state.OutlierPolicy
	// Heartbeat is the heartbeat section (engine.Heartbeat).
	Heartbeat = engine.Heartbeat
	// Streaming is the streaming section (engine.Streaming): how deltas
	// reach the client.
	Streaming = engine.Streaming
	// Retry is the retry section (retry.Config): the server's retry
	// defaults and limits; requests may ask for less, never for more.
	Retry = retry.Config
	// RetryBudget is retry.budget (retry.BudgetSettings).
	RetryBudget = retry.BudgetSettings
	// Hedging is retry.hedging (retry.HedgingSettings).
	Hedging = retry.HedgingSettings
	// Auth is the auth section (auth.Config): the API keys, the
	// failed-authentication throttle, the trusted proxies.
	Auth = auth.Config
	// AuthThrottle is auth.throttle (auth.ThrottleConfig).
	AuthThrottle = auth.ThrottleConfig
	// StructuredOutput is the structured_output section (schema.Config).
	StructuredOutput = schema.Config
	// Pricing is the pricing section (usage.Pricing).
	Pricing = usage.Pricing
	// Governance is the governance section (spend.Config).
	Governance = spend.Config
)

// Deadlines is the deadlines section: the call's deadline
// (engine.Deadlines: default, max) and the attempts' stall timeouts
// (retry.StallSettings), owned by the two packages that decide them.
type Deadlines struct {
	engine.Deadlines    `yaml:",inline"`
	retry.StallSettings `yaml:",inline"`
}

// Log configures logging.
type Log struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is text or json.
	Format string `yaml:"format"`
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

// Certificate reads the certificate and its key; an error starts with
// setting, the section's name ("tls", "http_tls").
func (t TLS) Certificate(setting string) (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	return &cert, nil
}

// Limits bounds what one client can ask of the server: the gRPC server's
// own limits, and the engine's (engine.Limits: request size, provider
// queue, output limits).
type Limits struct {
	engine.Limits `yaml:",inline"`
	// MaxRecvMsgBytes is gRPC's hard cap on one received message
	// (grpc.MaxRecvMsgSize); gRPC refuses larger ones itself, with a plain
	// RESOURCE_EXHAUSTED.
	MaxRecvMsgBytes int `yaml:"max_recv_msg_bytes"`
	// MaxConcurrentStreamsPerConn caps HTTP/2 streams per connection.
	MaxConcurrentStreamsPerConn uint32 `yaml:"max_concurrent_streams_per_conn"`
	// KeepaliveMinTime is the shortest interval at which clients may send
	// keepalive pings; clients pinging more often are disconnected
	// (GOAWAY "too_many_pings"). Pings are allowed without calls in flight.
	KeepaliveMinTime time.Duration `yaml:"keepalive_min_time"`
	// KeepaliveTime is how long a connection may be idle before the server
	// pings it, and KeepaliveTimeout how long it waits for the answer
	// before closing the connection.
	KeepaliveTime    time.Duration `yaml:"keepalive_time"`
	KeepaliveTimeout time.Duration `yaml:"keepalive_timeout"`
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
		HTTPListen:    "127.0.0.1:8080",
		MetricsListen: "127.0.0.1:9464",
		ShutdownGrace: 15 * time.Second,
		Log:           Log{Level: "info", Format: "text"},
		Retry:         retry.DefaultConfig(),
		Deadlines:     Deadlines{Deadlines: engine.DefaultDeadlines(), StallSettings: retry.DefaultStall()},
		Auth:          auth.DefaultConfig(),
		Limits: Limits{
			Limits:                      engine.DefaultLimits(),
			MaxRecvMsgBytes:             8 << 20,
			MaxConcurrentStreamsPerConn: 1000,
			KeepaliveMinTime:            10 * time.Second,
			KeepaliveTime:               2 * time.Minute,
			KeepaliveTimeout:            20 * time.Second,
			MaxConnectionAge:            30 * time.Minute,
		},
		Heartbeat:        engine.DefaultHeartbeat(),
		Streaming:        engine.DefaultStreaming(),
		StructuredOutput: schema.DefaultConfig(),
		OutlierDetection: state.DefaultOutlierPolicy,
		State:            state.DefaultConfig(),
		Pricing:          usage.DefaultPricing(),
		Governance:       spend.DefaultConfig(),
		Resume:           resume.DefaultConfig(),
		Tools:            servertools.DefaultConfig(),
	}
}

// ToolScopes returns which server tools each API key may use (its
// `tools`), for internal/servertools; without keys, every tool.
func (c *Config) ToolScopes() servertools.Scopes {
	s := servertools.Scopes{Open: len(c.Auth.Keys) == 0, Keys: map[string][]string{}}
	for _, k := range c.Auth.Keys {
		s.Keys[k.Name] = k.Tools
	}
	return s
}

// RetryLimits returns the attempt plan's limits: the retry section and
// the deadlines section's stall timeouts (retry.Config.Limits).
func (c *Config) RetryLimits() retry.Limits { return c.Retry.Limits(c.Deadlines.StallSettings) }

// DefaultProviders is the provider list used when the config names none.
func DefaultProviders() []provider.Config {
	return []provider.Config{{Name: "mock", Kind: "mock"}}
}

// EnvMetricsListen names the environment variable that overrides
// `metrics_listen`; "off" turns the endpoint off.
const EnvMetricsListen = "LLMRELAY_METRICS_LISTEN"

// EnvHTTPListen names the environment variable that overrides
// `http_listen`; "off" turns the HTTP doors off.
const EnvHTTPListen = "LLMRELAY_HTTP_LISTEN"

// Flags are the command-line overrides; empty fields override nothing.
type Flags struct {
	ConfigPath string
	Listen     string
	// MetricsListen, when not nil, overrides metrics_listen; "" or "off"
	// turns the endpoint off.
	MetricsListen *string
	// HTTPListen, when not nil, overrides http_listen; "" or "off" turns
	// the HTTP doors off.
	HTTPListen *string
}

// fromCommandLine is how messages name a value that a flag set.
const fromCommandLine = "the command line"

// Load builds the configuration: defaults, then the file named by
// flags.ConfigPath or $LLMRELAY_CONFIG (if any), then $LLMRELAY_LISTEN,
// $LLMRELAY_HTTP_LISTEN and $LLMRELAY_METRICS_LISTEN, then the flags; and validates the result. A
// configuration with problems gives Problems, each naming its setting and
// the file's line (or the variable or flag that set it).
func Load(flags Flags, getenv func(string) string) (*Config, error) {
	cfg := Default()
	o := &origin{lines: map[string]int{}, sources: map[string]string{}}
	var shape Problems
	path, from := flags.ConfigPath, ""
	if path == "" {
		path, from = getenv(EnvConfig), " (from $"+EnvConfig+")"
	}
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fileError(path, from, err)
		}
		o.file = path
		o.lines, shape, err = cfg.decodeFile(path, f)
		f.Close()
		if err != nil {
			if ps := Problems(nil); !errors.As(err, &ps) {
				return nil, fileError(path, from, err) // opened, not read: a directory, say
			}
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
	if v := getenv(EnvHTTPListen); v != "" {
		cfg.HTTPListen = v
		o.override("http_listen", "$"+EnvHTTPListen)
	}
	if flags.Listen != "" {
		cfg.Listen = flags.Listen
		o.override("listen", fromCommandLine)
	}
	if flags.MetricsListen != nil {
		cfg.MetricsListen = *flags.MetricsListen
		o.override("metrics_listen", fromCommandLine)
	}
	if flags.HTTPListen != nil {
		cfg.HTTPListen = *flags.HTTPListen
		o.override("http_listen", fromCommandLine)
	}
	// Known before Validate, which compares only the addresses someone
	// set (checkListenersApart).
	for _, setting := range []string{"listen", "http_listen", "metrics_listen"} {
		if _, inFile := o.lines[setting]; !inFile && o.sources[setting] == "" {
			cfg.DefaultListens = append(cfg.DefaultListens, setting)
		}
	}
	if err := cfg.finish(o, shape); err != nil {
		return nil, err
	}
	return cfg, nil
}

// fileError says why the config file at path (set by from, "" for the
// flag) could not be read: "config file /etc/llmrelay: is a directory",
// without the operation's own "open" or "read".
func fileError(path, from string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("config file %s%s: %w", path, from, err)
}

// Parse decodes YAML over the defaults, without the environment or flags,
// and validates the result. Tests use it; problems name the file "config".
func Parse(data []byte) (*Config, error) {
	cfg := Default()
	lines, shape, err := cfg.decodeFile("config", bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if err := cfg.finish(&origin{file: "config", lines: lines}, shape); err != nil {
		return nil, err
	}
	return cfg, nil
}

// finish completes a configuration whose sources have all been applied:
// the default provider list when there is none, each provider's transport
// and redirect defaults (so the effective configuration shows them), "off"
// as no metrics endpoint; then Validate, with each problem located by o.
// shape are the file's problems of shape (decodeFile), which left their
// settings out: reported with Validate's, without what follows from
// leaving them out.
func (c *Config) finish(o *origin, shape Problems) error {
	if len(c.Providers) == 0 {
		c.Providers = DefaultProviders()
	}
	if strings.EqualFold(c.MetricsListen, "off") {
		c.MetricsListen = ""
	}
	if strings.EqualFold(c.HTTPListen, "off") {
		c.HTTPListen = ""
	}
	ps := c.validate()
	o.locate(ps)
	ps = slices.DeleteFunc(ps, func(e *FieldError) bool { return shape.cover(e) })
	if err := append(shape, ps...).err(); err != nil {
		return err
	}
	c.origin = o
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

// Locate returns err, an error of something built from c (provider.NewSet,
// route.NewTable), with the problems it lists (a setting.List) placed on
// the lines of c's file, as Problems; any other error as it is.
func (c *Config) Locate(err error) error {
	var l setting.List
	if !errors.As(err, &l) {
		return err
	}
	ps := make(Problems, 0, len(l))
	for _, p := range l {
		fe := &FieldError{Path: p.Path, Problem: p.Message}
		if p.Other != "" {
			fe.related = []string{p.Other}
		}
		ps = append(ps, fe)
	}
	c.origin.locate(ps)
	return ps.err()
}

// validate runs every check: the server's own settings', then each
// section's. A section that needs only itself (a setting.Checker) is
// checked by being a field of Config (checkSections); one whose rules
// depend on other sections is called here with them.
func (c *Config) validate() Problems {
	p := &problems{}
	c.checkServer(p)
	checkSections(reflect.ValueOf(c).Elem(), "", p)

	providerNames := make([]string, 0, len(c.Providers))
	for _, pr := range c.Providers {
		providerNames = append(providerNames, pr.Name)
	}
	floor := c.Deadlines.MinStreamTimeout
	provider.CheckConfigs(c.Providers, provider.Against{FirstEvent: c.Deadlines.FirstEvent, MinStreamTimeout: floor}, p)
	c.Deadlines.Deadlines.Check(setting.Under(p, "deadlines."), floor)
	c.Limits.Limits.Check(setting.Under(p, "limits."), c.Limits.MaxRecvMsgBytes)
	route.CheckSection(c.Routes, route.Against{
		Providers: providerNames, MinHedgeAfter: c.Retry.Hedging.MinHedgeAfter, MinStreamTimeout: floor, Schemas: c.StructuredOutput,
	}, p)
	c.Pricing.Check(setting.Under(p, "pricing."), c.Providers)
	keyTeams, keyBudgets := make([]string, len(c.Auth.Keys)), make([][]spend.Budget, len(c.Auth.Keys))
	for i, k := range c.Auth.Keys {
		keyTeams[i], keyBudgets[i] = k.Team, k.Budgets
	}
	spend.CheckSection(c.Teams, spend.Against{KeyTeams: keyTeams, KeyBudgets: keyBudgets, Currency: c.Pricing.Currency}, p)
	return p.list
}

// Warnings returns what c, a valid configuration, sets that does
// nothing as the rest of it stands: a key's model pattern that matches no
// provider's model and no route, a key's tool pattern that matches no MCP
// server's tools, tools on a key without the generate scope, a cost cap
// (max_cost_usd) where pricing prices none of the models it would count.
// Each names its setting and the file's line, as a problem does. They are
// not problems: a pattern may name a provider or a server to be added
// later, and a config that runs today must keep loading, so Load accepts
// them; the server logs them at start and at each reload, and
// check-config prints them (docs/configuration.md#warnings). Each section
// whose settings may be warned of owns its rule, as it owns its checks.
func (c *Config) Warnings() []*FieldError {
	w := &problems{}
	r := auth.Reach{Routes: map[string][]string{}, Priced: slices.Sorted(maps.Keys(c.Pricing.Models))}
	for _, p := range c.Providers {
		if len(p.Models) == 0 {
			r.OpenProviders = append(r.OpenProviders, p.Name)
		}
		for _, m := range p.Models {
			r.Models = append(r.Models, p.Name+"/"+m)
		}
	}
	for _, rc := range c.Routes {
		for _, t := range rc.Targets {
			r.Routes[rc.Name] = append(r.Routes[rc.Name], t.Model)
		}
	}
	for _, s := range c.Tools.MCPServers {
		r.ToolServers = append(r.ToolServers, s.Name)
	}
	c.Auth.Warn(setting.Under(w, "auth."), r)
	spend.WarnTeams(c.Teams, len(r.Priced) > 0, w)
	c.origin.locate(w.list)
	w.list.sort()
	return w.list
}

var (
	checkerType = reflect.TypeFor[setting.Checker]()
	configPkg   = reflect.TypeFor[Config]().PkgPath()
)

// checkSections runs the Check of every section in v, a struct of this
// package's, that is a setting.Checker, with the section's path as the
// prefix of its problems; the parts of a section of this package (Limits,
// Deadlines: an inline part's settings are its parent's) are looked at
// the same way.
func checkSections(v reflect.Value, prefix string, p setting.Problems) {
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		if !f.IsExported() || yamlName(f) == "-" {
			continue
		}
		at := prefix + yamlName(f) + "."
		if isInline(f) {
			at = prefix
		}
		switch {
		case f.Type.Implements(checkerType):
			fv.Interface().(setting.Checker).Check(setting.Under(p, at))
		case reflect.PointerTo(f.Type).Implements(checkerType):
			fv.Addr().Interface().(setting.Checker).Check(setting.Under(p, at))
		case f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == configPkg:
			checkSections(fv, at, p)
		}
	}
}

// checkServer checks the server's own settings.
func (c *Config) checkServer(p *problems) {
	bad, badBoth := p.Bad, p.Between

	// The server's own settings.
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
	httpListenOK := c.HTTPListen != ""
	if httpListenOK {
		if msg := addrProblem(c.HTTPListen, "127.0.0.1:8080"); msg != "" {
			bad("http_listen", `%s; "" or off turns the HTTP endpoints off`, msg)
			httpListenOK = false
		}
	}
	c.checkListenersApart(p, listenOK, httpListenOK)
	if c.DrainDelay < 0 {
		bad("drain_delay", "must not be negative")
	}
	if c.ShutdownGrace < 0 {
		bad("shutdown_grace", "must not be negative")
	}
	if levels := []string{"debug", "info", "warn", "error"}; !slices.Contains(levels, strings.ToLower(c.Log.Level)) {
		bad("log.level", "%s", setting.NotOneOf(c.Log.Level, levels...))
	}
	if formats := []string{"text", "json"}; !slices.Contains(formats, c.Log.Format) {
		bad("log.format", "%s", setting.NotOneOf(c.Log.Format, formats...))
	}
	for _, t := range []struct {
		name string
		tls  TLS
	}{{"tls", c.TLS}, {"http_tls", c.HTTPTLS}} {
		switch {
		case t.tls.CertFile != "" && t.tls.KeyFile == "":
			badBoth(t.name+".key_file", t.name+".cert_file", "required with cert_file: "+t.name+" needs the certificate and its private key")
		case t.tls.CertFile == "" && t.tls.KeyFile != "":
			badBoth(t.name+".cert_file", t.name+".key_file", "required with key_file: "+t.name+" needs the certificate and its private key")
		}
	}
	l := c.Limits
	if l.MaxRecvMsgBytes <= 0 {
		bad("limits.max_recv_msg_bytes", "must be positive")
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
	if l.MaxConnectionAge < 0 {
		bad("limits.max_connection_age", "must not be negative (0 keeps connections forever)")
	}
	if l.MaxConnectionAgeGrace < 0 {
		bad("limits.max_connection_age_grace", "must not be negative (0 means deadlines.max)")
	}
	if listenOK && len(c.Auth.Keys) == 0 && !IsLoopback(c.Listen) {
		bad("listen", "%s is not a loopback address and auth.keys is empty: refusing to serve without authentication; "+
			"add keys (`llmrelay hash-key` prints a key's sha256) or listen on 127.0.0.1", c.Listen)
	}
	if httpListenOK && len(c.Auth.Keys) == 0 && !IsLoopback(c.HTTPListen) {
		bad("http_listen", "%s is not a loopback address and auth.keys is empty: refusing to serve without authentication; "+
			"add keys (`llmrelay hash-key` prints a key's sha256), listen on 127.0.0.1, or turn the HTTP endpoints off", c.HTTPListen)
	}
}

// checkListenersApart refuses two listeners set to one address: the
// second would fail to bind at start with "already in use", as though
// another program held the port, and check-config would have called the
// file valid. An address left at its default is not compared: when
// another listener takes it, the server moves to a free port
// (ListenIsDefault). listenOK and httpListenOK say which addresses
// checkServer found well-formed.
func (c *Config) checkListenersApart(p *problems, listenOK, httpListenOK bool) {
	type listener struct{ setting, addr string }
	var set []listener
	for _, l := range []struct {
		listener
		ok bool
	}{
		{listener{"listen", c.Listen}, listenOK},
		{listener{"http_listen", c.HTTPListen}, httpListenOK},
		{listener{"metrics_listen", c.MetricsListen}, c.MetricsListen != "" && addrProblem(c.MetricsListen, "") == ""},
	} {
		if !l.ok || c.ListenIsDefault(l.setting) {
			continue
		}
		for _, earlier := range set {
			if sameListenAddr(earlier.addr, l.addr) {
				p.Between(l.setting, earlier.setting, "%s is also %s's address: each listener needs a port of its own", l.addr, earlier.setting)
			}
		}
		set = append(set, l.listener)
	}
}

// sameListenAddr reports whether listening on a and on b, both
// well-formed host:port addresses, would claim the same port: the same
// port (not 0, which picks a free one) on the same host, or on every
// interface ("", 0.0.0.0, ::) for either.
func sameListenAddr(a, b string) bool {
	hostA, portA, _ := net.SplitHostPort(a)
	hostB, portB, _ := net.SplitHostPort(b)
	nA, _ := strconv.Atoi(portA)
	nB, _ := strconv.Atoi(portB)
	if nA == 0 || nA != nB {
		return false
	}
	everywhere := func(host string) bool {
		ip, err := netip.ParseAddr(host)
		return host == "" || err == nil && ip.IsUnspecified()
	}
	return strings.EqualFold(hostA, hostB) || everywhere(hostA) || everywhere(hostB)
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
