package provider

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
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
	// Redirects says which HTTP redirects the provider's calls follow:
	// RedirectsNever (the default) or RedirectsSameOrigin.
	Redirects string `yaml:"redirects"`
	// Transport tunes the HTTP connections to the provider.
	Transport Transport `yaml:"transport"`
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
// take the defaults of internal/provider/httpx.
type Transport struct {
	// DialTimeout bounds establishing a TCP connection (default 10s).
	DialTimeout time.Duration `yaml:"dial_timeout"`
	// TLSHandshakeTimeout bounds the TLS handshake (default 10s).
	TLSHandshakeTimeout time.Duration `yaml:"tls_handshake_timeout"`
	// ResponseHeaderTimeout bounds the wait for the response headers once
	// the request is sent (default 30s). The stream idle timeout starts
	// only once they have arrived.
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

// Check reports the first problem with the transport settings that can be
// seen without reading files: a negative value, or a certificate without
// its key.
func (t Transport) Check() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"dial_timeout", t.DialTimeout}, {"tls_handshake_timeout", t.TLSHandshakeTimeout},
		{"response_header_timeout", t.ResponseHeaderTimeout}, {"idle_conn_timeout", t.IdleConnTimeout},
		{"ping_interval", t.PingInterval}, {"ping_timeout", t.PingTimeout},
	} {
		if d.v < 0 {
			return fmt.Errorf("transport.%s: must not be negative", d.name)
		}
	}
	if t.MaxConns < 0 || t.MaxIdleConns < 0 {
		return errors.New("transport: max_conns and max_idle_conns must not be negative")
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return errors.New("transport: cert_file and key_file go together")
	}
	return nil
}

// CheckRedirects reports whether r is a known redirect policy.
func CheckRedirects(r string) error {
	switch r {
	case "", RedirectsNever, RedirectsSameOrigin:
		return nil
	}
	return fmt.Errorf("redirects: %q is not %s or %s", r, RedirectsNever, RedirectsSameOrigin)
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

// Entry is one configured provider.
type Entry struct {
	Config   Config
	Provider Provider
	// Models is what ListModels reports for this provider.
	Models []string
}

// AllowsModel reports whether requests may use the named model.
func (e *Entry) AllowsModel(model string) bool {
	if len(e.Config.Models) == 0 {
		return true
	}
	return slices.Contains(e.Config.Models, model)
}

// Set is the configured providers by name. It is immutable once built and
// safe for concurrent use.
type Set struct {
	byName map[string]*Entry
	names  []string
}

// NewSet builds every configured provider with its kind's Factory. It fails
// on an unknown kind (naming the known ones), a duplicate name, or a
// factory's error.
func NewSet(cfgs []Config) (*Set, error) {
	s := &Set{byName: make(map[string]*Entry, len(cfgs))}
	for i, c := range cfgs {
		if err := CheckName(c.Name); err != nil {
			return nil, fmt.Errorf("providers[%d].name: %w", i, err)
		}
		if _, dup := s.byName[c.Name]; dup {
			return nil, fmt.Errorf("providers[%d]: duplicate provider name %q", i, c.Name)
		}
		kindsMu.RLock()
		f, ok := kinds[c.Kind]
		kindsMu.RUnlock()
		if !ok {
			return nil, fmt.Errorf("providers[%d] (%s): unknown kind %q; known kinds: %s",
				i, c.Name, c.Kind, strings.Join(Kinds(), ", "))
		}
		p, err := f(c)
		if err != nil {
			return nil, fmt.Errorf("providers[%d] (%s): %w", i, c.Name, err)
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

// Resolve splits "<provider>/<model>" at the first "/" and returns the
// provider's entry and the model name. It returns an error wrapping
// ErrUnknownProvider or ErrUnknownModel when the request cannot be routed.
func (s *Set) Resolve(model string) (*Entry, string, error) {
	name, m, ok := SplitModel(model)
	if !ok {
		return nil, "", fmt.Errorf("%w: model %q is not of the form <provider>/<model>", ErrUnknownProvider, model)
	}
	e, found := s.byName[name]
	if !found {
		return nil, "", fmt.Errorf("%w %q; configured providers: %s", ErrUnknownProvider, name, strings.Join(s.names, ", "))
	}
	if !e.AllowsModel(m) {
		return nil, "", fmt.Errorf("%w %q for provider %q; configured models: %s", ErrUnknownModel, m, name, strings.Join(e.Config.Models, ", "))
	}
	return e, m, nil
}
