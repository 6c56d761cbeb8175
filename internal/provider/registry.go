package provider

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/internal/setting"
)

// Config configures one provider, as listed under `providers:` in the
// server's config file.
type Config struct {
	// Name is the prefix clients use in "<name>/<model>".
	Name string `yaml:"name"`
	// Kind selects the adapter: "mock", "openai", "anthropic" or "gemini".
	Kind string `yaml:"kind"`
	// BaseURL is the provider's API root, e.g. https://api.openai.com/v1.
	// Empty means the kind's default.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable that holds the API key. The
	// key itself never appears in the config file or in logs.
	APIKeyEnv string `yaml:"api_key_env"`
	// Models lists the models ListModels reports and requests may use.
	// Empty allows any model (and lists the adapter's defaults, if any).
	Models []string `yaml:"models"`
	// Headers are extra HTTP headers sent with every request.
	Headers map[string]string `yaml:"headers"`
	// Timeout bounds one attempt from request to last byte. Zero means no
	// bound beyond the call's deadline.
	Timeout time.Duration `yaml:"timeout"`
	// MaxConcurrent bounds the calls in flight to this provider; zero means
	// no bound.
	MaxConcurrent int `yaml:"max_concurrent"`
	// FirstEventTimeout is this provider's default first_event_timeout: how
	// long an attempt waits for the provider's first byte when the request
	// sets none. Zero means the server's deadlines.first_event.
	FirstEventTimeout time.Duration `yaml:"first_event_timeout"`
	// ProviderOptions says which provider_options keys requests may use
	// with this provider.
	ProviderOptions OptionsPolicy `yaml:"provider_options"`
	// Options are settings of the adapter kind, read by its Factory: the
	// mock reads `fault`, a standing fault every attempt gets (see
	// internal/provider/mock). Adapters that read none refuse any
	// (OptionReader).
	Options map[string]any `yaml:"options"`
	// Redirects says which HTTP redirects the provider's calls follow:
	// RedirectsNever (the default) or RedirectsSameOrigin.
	Redirects string `yaml:"redirects"`
	// Transport tunes the HTTP connections to the provider.
	Transport Transport `yaml:"transport"`
}

// OptionsPolicy is an operator's rule for the provider_options keys of a
// provider's requests, on top of the adapter's own (an adapter refuses the
// keys it sets itself). The provider's parameters reach it with the
// operator's credentials, so some are the operator's to decide: which MCP
// servers the account connects to (Anthropic's mcp_servers), which
// code-execution container it reuses (container), what it pays for
// (service_tier). The engine checks the policy of every target a call may
// reach before the first attempt (Config.CheckOptions).
type OptionsPolicy struct {
	// Allow, when not empty, lists the only top-level keys requests may
	// use (extra_headers included).
	Allow []string `yaml:"allow"`
	// Deny lists keys requests may never use.
	Deny []string `yaml:"deny"`
}

// Check returns an *OptionNotAllowedError naming the first key of opts, in
// sorted order, that the policy refuses, or nil. Its Provider is left
// empty (Config.CheckOptions sets it).
func (p OptionsPolicy) Check(opts map[string]any) error {
	if len(p.Allow) == 0 && len(p.Deny) == 0 {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		if slices.Contains(p.Deny, k) || len(p.Allow) > 0 && !slices.Contains(p.Allow, k) {
			return &OptionNotAllowedError{Option: k, Allowed: p.Allow}
		}
	}
	return nil
}

// OptionNotAllowedError says that the operator's policy for a provider
// (Config.ProviderOptions) refuses a provider_options key of the request,
// or that the provider's configuration does not let through an API beta
// the request's extra_headers ask for (Beta: the anthropic adapter's
// options.client_betas). It is the operator's decision, not a mistake in
// the request, so it becomes PERMISSION_DENIED, reason
// PROVIDER_OPTION_NOT_ALLOWED (internal/apierr), where a *FieldError is
// INVALID_ARGUMENT.
type OptionNotAllowedError struct {
	// Provider is the configured name of the provider whose policy
	// refuses the key.
	Provider string
	// Option is the top-level key refused, e.g. "mcp_servers";
	// "extra_headers" for a beta.
	Option string
	// Header and Beta, for a beta refused: the extra_headers header that
	// asks for it, as the request spells it (anthropic-beta), and the
	// beta's name.
	Header, Beta string
	// Allowed is the policy's allow list, when it has one: the keys (for
	// a beta, the betas) the request may use instead.
	Allowed []string
}

// Field is the request field refused: "provider_options.<Option>", and
// for a beta "provider_options.extra_headers.<Header>".
func (e *OptionNotAllowedError) Field() string {
	if e.Beta != "" {
		return "provider_options." + e.Option + "." + e.Header
	}
	return "provider_options." + e.Option
}

// Description says why, for the caller.
func (e *OptionNotAllowedError) Description() string {
	what := "not allowed"
	if e.Beta != "" {
		what = fmt.Sprintf("beta %q is not allowed", e.Beta)
	}
	d := fmt.Sprintf("%s with provider %q (the server's configuration forbids it)", what, e.Provider)
	if len(e.Allowed) > 0 {
		d = fmt.Sprintf("%s with provider %q; allowed: %s", what, e.Provider, strings.Join(e.Allowed, ", "))
	}
	return d
}

// Error implements error.
func (e *OptionNotAllowedError) Error() string { return e.Field() + ": " + e.Description() }

// ExtraHeadersKey is the provider_options key whose value, an object of
// header names to strings, adds HTTP headers to the provider request
// instead of body fields (internal/provider/httpx reads it).
const ExtraHeadersKey = "extra_headers"

// CheckOptions returns an error for the first key of opts, a request's
// provider_options, that this provider's configuration refuses: an
// *OptionNotAllowedError for a key ProviderOptions refuses, or a
// *FieldError for a header of extra_headers that Headers sets (matched
// without regard to case). A header the operator configured (a project to
// bill, a gateway's credential) is never the request's to replace, as the
// headers no request may set are not (internal/provider/httpx). nil when
// the configuration takes every key.
func (c Config) CheckOptions(opts map[string]any) error {
	if err := c.ProviderOptions.Check(opts); err != nil {
		// errors.AsType, not errors.As: As's target would escape, an
		// allocation for every call.
		if ne, ok := errors.AsType[*OptionNotAllowedError](err); ok {
			ne.Provider = c.Name
		}
		return err
	}
	extra, _ := opts[ExtraHeadersKey].(map[string]any)
	if len(extra) == 0 || len(c.Headers) == 0 {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		for configured := range c.Headers {
			if strings.EqualFold(name, configured) {
				return &FieldError{Field: "provider_options." + ExtraHeadersKey + "." + name,
					Description: "cannot be set: the server's configuration sets this header for this provider"}
			}
		}
	}
	return nil
}

// OptionReader is implemented by adapters whose Factory reads
// Config.Options (the mock). NewSet refuses options for any other adapter,
// so a setting in the wrong place is an error, not silently ignored.
type OptionReader interface {
	// ReadsOptions marks the adapter; it does nothing.
	ReadsOptions()
}

// Redirect policies for Config.Redirects.
const (
	// RedirectsNever: a redirect is not followed; the call fails with the
	// redirect's status as a provider error. The default ("" means it).
	RedirectsNever = "never"
	// RedirectsSameOrigin: 307 and 308 redirects (which keep the method and
	// body) to the same scheme, host and port are followed, at most
	// MaxRedirects in a row; any other redirect is not.
	RedirectsSameOrigin = "same_origin"
)

// MaxRedirects bounds how many same-origin redirects one attempt follows.
const MaxRedirects = 5

// Transport configures the HTTP connections to one provider. Zero values
// take DefaultTransport's.
type Transport struct {
	// DialTimeout bounds establishing a TCP connection (default 10s).
	DialTimeout time.Duration `yaml:"dial_timeout"`
	// TLSHandshakeTimeout bounds the TLS handshake (default 10s).
	TLSHandshakeTimeout time.Duration `yaml:"tls_handshake_timeout"`
	// ResponseHeaderTimeout bounds the wait for the response headers once
	// the request is sent (default none: the attempt's first event timeout
	// bounds the wait for the provider's first byte, headers included).
	ResponseHeaderTimeout time.Duration `yaml:"response_header_timeout"`
	// IdleConnTimeout is how long an idle keep-alive connection is kept
	// (default 90s).
	IdleConnTimeout time.Duration `yaml:"idle_conn_timeout"`
	// PingInterval: an HTTP/2 connection that received nothing for this
	// long is sent a ping (default 10s), and PingTimeout: a connection whose
	// ping is not answered within it is closed, failing its streams
	// (default 5s).
	PingInterval time.Duration `yaml:"ping_interval"`
	PingTimeout  time.Duration `yaml:"ping_timeout"`
	// MaxConns bounds the connections to the provider's host, idle or in
	// use; requests beyond it wait for one (0: no bound).
	MaxConns int `yaml:"max_conns"`
	// MaxIdleConns bounds the idle connections kept (default 256).
	MaxIdleConns int `yaml:"max_idle_conns"`
	// CAFile is a PEM bundle of the certificate authorities trusted for the
	// provider's TLS certificate, instead of the system's.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are a PEM client certificate and its key, sent
	// when the provider asks for one (mutual TLS). Both or neither.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// DefaultTransport is the transport a provider gets for the settings it
// leaves at zero. Streams are long and many run at once, so the idle pool
// is large. Connection set-up is bounded here; the wait for the response
// headers is bounded by the attempt's first event timeout (which the
// service owns), unless ResponseHeaderTimeout is set. Over HTTP/2, a
// connection silent for PingInterval is pinged and closed, failing its
// streams, when the answer takes longer than PingTimeout: a black-holed
// connection fails within about 15 seconds.
var DefaultTransport = Transport{
	DialTimeout:         10 * time.Second,
	TLSHandshakeTimeout: 10 * time.Second,
	IdleConnTimeout:     90 * time.Second,
	PingInterval:        10 * time.Second,
	PingTimeout:         5 * time.Second,
	// net/http's default is 2 idle connections per host.
	MaxIdleConns: 256,
}

// WithDefaults returns t with its zero settings taken from
// DefaultTransport (MaxConns and ResponseHeaderTimeout stay 0: no bound).
func (t Transport) WithDefaults() Transport {
	d := DefaultTransport
	set := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	set(&t.DialTimeout, d.DialTimeout)
	set(&t.TLSHandshakeTimeout, d.TLSHandshakeTimeout)
	set(&t.IdleConnTimeout, d.IdleConnTimeout)
	set(&t.PingInterval, d.PingInterval)
	set(&t.PingTimeout, d.PingTimeout)
	if t.MaxIdleConns == 0 {
		t.MaxIdleConns = d.MaxIdleConns
	}
	return t
}

// WithDefaults returns c with its transport's zero settings defaulted
// (Transport.WithDefaults) and, for an empty redirects, RedirectsNever.
func (c Config) WithDefaults() Config {
	c.Transport = c.Transport.WithDefaults()
	if c.Redirects == "" {
		c.Redirects = RedirectsNever
	}
	return c
}

// ConfigProblem is a problem with one setting of a provider's
// configuration: Field is the setting's path below the provider, e.g.
// "transport.dial_timeout".
type ConfigProblem struct {
	Field, Problem string
}

// Error implements error.
func (p *ConfigProblem) Error() string { return p.Field + ": " + p.Problem }

// Check reports, as a *ConfigProblem, the first problem with the transport
// settings that can be seen without reading files: a negative value, or a
// certificate without its key.
func (t Transport) Check() error {
	for _, d := range []struct {
		name string
		v    int64
	}{
		{"dial_timeout", int64(t.DialTimeout)}, {"tls_handshake_timeout", int64(t.TLSHandshakeTimeout)},
		{"response_header_timeout", int64(t.ResponseHeaderTimeout)}, {"idle_conn_timeout", int64(t.IdleConnTimeout)},
		{"ping_interval", int64(t.PingInterval)}, {"ping_timeout", int64(t.PingTimeout)},
		{"max_conns", int64(t.MaxConns)}, {"max_idle_conns", int64(t.MaxIdleConns)},
	} {
		if d.v < 0 {
			return &ConfigProblem{"transport." + d.name, "must not be negative"}
		}
	}
	switch {
	case t.CertFile != "" && t.KeyFile == "":
		return &ConfigProblem{"transport.key_file", "required with cert_file (cert_file and key_file go together)"}
	case t.CertFile == "" && t.KeyFile != "":
		return &ConfigProblem{"transport.cert_file", "required with key_file (cert_file and key_file go together)"}
	}
	return nil
}

// CheckRedirects reports, as a *ConfigProblem, whether r is not a known
// redirect policy.
func CheckRedirects(r string) error {
	switch r {
	case "", RedirectsNever, RedirectsSameOrigin:
		return nil
	}
	return &ConfigProblem{"redirects", setting.NotOneOf(r, RedirectsNever, RedirectsSameOrigin)}
}

// Factory builds a Provider from its configuration.
type Factory func(cfg Config) (Provider, error)

var (
	kindsMu sync.RWMutex
	kinds   = map[string]Factory{}
)

// Register makes an adapter kind available to configuration. It panics when
// the kind is registered twice, which is a programming error. Adapters call
// it from an init function.
func Register(kind string, f Factory) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if _, dup := kinds[kind]; dup {
		panic("provider: kind registered twice: " + kind)
	}
	kinds[kind] = f
}

// Kinds returns the registered adapter kinds, sorted.
func Kinds() []string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ErrUnknownProvider is returned (wrapped) by Set.Resolve for a model whose
// provider is not configured.
var ErrUnknownProvider = errors.New("unknown provider")

// ErrUnknownModel is returned (wrapped) by Set.Resolve for a model that the
// provider's configured model list does not include.
var ErrUnknownModel = errors.New("unknown model")

// Target is where an attempt goes: a configured provider and the model
// name it is asked for. Set.Resolve makes the call's target from the
// request's "<provider>/<model>".
type Target struct {
	Entry *Entry
	// Model is the provider's model name: the part after the first "/".
	Model string
}

// String returns the target as "<provider>/<model>".
func (t Target) String() string {
	if t.Entry == nil {
		return t.Model
	}
	return t.Entry.Config.Name + "/" + t.Model
}

// ModelServer is implemented by adapters that serve only a fixed set of
// models (the mock provider): Set.Resolve refuses any other model with
// ErrUnknownModel, so the decision stays in resolution.
type ModelServer interface {
	ServesModel(model string) bool
}

// Entry is one configured provider.
type Entry struct {
	Config   Config
	Provider Provider
	// Models is what ListModels reports for this provider.
	Models []string
}

// AllowsModel reports whether requests may use the named model: the
// configured models (all when none are configured), and of those only the
// ones the adapter serves when it is a ModelServer.
func (e *Entry) AllowsModel(model string) bool {
	if len(e.Config.Models) > 0 && !slices.Contains(e.Config.Models, model) {
		return false
	}
	if ms, ok := e.Provider.(ModelServer); ok {
		return ms.ServesModel(model)
	}
	return true
}

// OpenModels reports whether requests may use any model name: no models
// are configured and the adapter is not a ModelServer, so the model is
// the client's choice (the metrics bound its label).
func (e *Entry) OpenModels() bool {
	_, fixed := e.Provider.(ModelServer)
	return len(e.Config.Models) == 0 && !fixed
}

// Set is the configured providers by name. It is immutable once built and
// safe for concurrent use.
type Set struct {
	byName map[string]*Entry
	names  []string
}

// NewSet builds every configured provider with its kind's Factory. It
// fails on an unknown kind (naming the known ones and the likely one), a
// duplicate name, options an adapter does not read, or a factory's error
// (a *ConfigProblem names its setting): every provider's problems at
// once, as a setting.List with each problem's path from the config's root
// ("providers[1].base_url").
func NewSet(cfgs []Config) (*Set, error) {
	s := &Set{byName: make(map[string]*Entry, len(cfgs))}
	var problems setting.List
	for i, c := range cfgs {
		item := fmt.Sprintf("providers[%d]", i)
		at := func(field string) string { return item + "." + field }
		if err := CheckName(c.Name); err != nil {
			problems.Between(at("name"), item, "%v", err)
			continue
		}
		if _, dup := s.byName[c.Name]; dup {
			problems.Between(at("name"), item, "%q is listed twice", c.Name)
			continue
		}
		kindsMu.RLock()
		f, ok := kinds[c.Kind]
		kindsMu.RUnlock()
		if !ok {
			problems.Between(at("kind"), item, "%s", setting.NotOneOf(c.Kind, Kinds()...))
			continue
		}
		p, err := f(c)
		if err != nil {
			if cp := (*ConfigProblem)(nil); errors.As(err, &cp) {
				problems.Between(at(cp.Field), item, "%s", cp.Problem)
			} else {
				problems.Add(item, err)
			}
			continue
		}
		if _, reads := p.(OptionReader); len(c.Options) > 0 && !reads {
			problems.Between(at("options"), item, "the %s adapter takes no options", c.Kind)
			continue
		}
		models := slices.Clone(c.Models)
		if len(models) == 0 {
			if l, ok := p.(ModelLister); ok {
				models = l.DefaultModels()
			}
		}
		s.byName[c.Name] = &Entry{Config: c, Provider: p, Models: models}
		s.names = append(s.names, c.Name)
	}
	if err := problems.Err(); err != nil {
		return nil, err
	}
	sort.Strings(s.names)
	return s, nil
}

// Names returns the configured provider names, sorted.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Get returns the provider with the given name.
func (s *Set) Get(name string) (*Entry, bool) {
	e, ok := s.byName[name]
	return e, ok
}

// Resolve is the one place a request's "<provider>/<model>" is parsed: it
// splits it at the first "/" and returns the provider's entry and the model
// name. It returns an error wrapping ErrUnknownProvider or ErrUnknownModel
// when the request cannot be routed. The error names only what was asked
// for, never the configured providers or models: a caller's key may not be
// allowed to see them (ListModels lists what it may use).
func (s *Set) Resolve(model string) (*Entry, string, error) {
	name, m, ok := SplitModel(model)
	if !ok {
		return nil, "", fmt.Errorf("%w: model %q is not of the form <provider>/<model>", ErrUnknownProvider, model)
	}
	e, found := s.byName[name]
	if !found {
		return nil, "", fmt.Errorf("%w %q", ErrUnknownProvider, name)
	}
	if !e.AllowsModel(m) {
		return nil, "", fmt.Errorf("%w %q for provider %q", ErrUnknownModel, m, name)
	}
	return e, m, nil
}
