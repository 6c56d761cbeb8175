package auth

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/setting"
)

// Config is the auth section of llmrelay's configuration: the API keys
// (none: the server is open, which the server allows only on a loopback
// address), the failed-authentication throttle, and the proxies whose
// X-Forwarded-For names the client.
type Config struct {
	Keys []KeyConfig `yaml:"keys"`
	// Throttle limits failed authentications per client address.
	Throttle ThrottleConfig `yaml:"throttle"`
	// TrustedProxies lists the proxies in front of the server (IP
	// addresses or CIDR prefixes) whose X-Forwarded-For header names the
	// client, so that failed authentications count against the client
	// rather than the proxy; from any other peer the header is ignored
	// (ClientAddr).
	TrustedProxies []string `yaml:"trusted_proxies"`
}

// DefaultConfig returns the auth section's defaults: no keys, and a
// throttle of 20 failures in a row, one try back per second.
func DefaultConfig() Config {
	return Config{Throttle: ThrottleConfig{Burst: 20, PerSecond: 1, LogInterval: time.Minute}}
}

// Check reports the section's problems: each key's (NewKeyring's
// *KeyError, on the key's setting), the throttle's and the trusted
// proxies'.
func (c Config) Check(p setting.Problems) {
	if _, err := NewKeyring(c.Keys); err != nil {
		errs := []error{err}
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			errs = joined.Unwrap()
		}
		for _, err := range errs {
			var ke *KeyError
			if errors.As(err, &ke) {
				p.Between(fmt.Sprintf("keys[%d].%s", ke.Index, ke.Field), fmt.Sprintf("keys[%d]", ke.Index), "%s", ke.Problem)
			} else {
				p.Bad("keys", "%v", err)
			}
		}
	}
	if th := c.Throttle; th.Burst < 0 {
		p.Bad("throttle.burst", "must not be negative")
	} else if th.Burst > 0 && th.PerSecond <= 0 {
		p.Bad("throttle.per_second", "must be positive when burst is (burst: 0 turns the throttle off)")
	}
	if c.Throttle.LogInterval <= 0 {
		p.Bad("throttle.log_interval", "must be positive")
	}
	if _, i, err := ParseTrustedProxies(c.TrustedProxies); err != nil {
		p.Bad(fmt.Sprintf("trusted_proxies[%d]", i), "%q is not an IP address or a CIDR prefix such as 10.0.0.0/8", c.TrustedProxies[i])
	}
}

// Reach is what the keys' patterns and budgets are looked at against for
// Warn: what the rest of the configuration offers.
type Reach struct {
	// Models are the "<provider>/<model>" names of the providers that list
	// their models.
	Models []string
	// OpenProviders name the providers that list none, and so allow any
	// model.
	OpenProviders []string
	// Routes maps each route's name to its targets' "<provider>/<model>".
	Routes map[string][]string
	// ToolServers name the MCP servers (tools.mcp_servers).
	ToolServers []string
	// Priced are the models the pricing table prices ("<provider>/<model>").
	Priced []string
}

// Warn reports the keys' settings that are valid but, as the rest of the
// configuration stands (r), do nothing: model patterns that match no
// model or route of it, tool patterns that match no MCP server's tools,
// tools on a key that cannot call Generate, cost caps on a key none of
// whose models is priced. They are not problems: a pattern may name a
// provider or a server to be added later, and a config that runs today
// must not stop loading. Paths are within the section, as Check's. The
// keys are valid (Check).
func (c Config) Warn(w setting.Problems, r Reach) {
	for i, k := range c.Keys {
		at := fmt.Sprintf("keys[%d].", i)
		// A key that may use no model needs no word on its cost caps.
		if r.warnModels(w, at, k) {
			r.warnCost(w, at, k)
		}
		r.warnTools(w, at, k)
	}
}

// reaches reports whether the model pattern matches a model or a route of
// r.
func (r Reach) reaches(pattern string) bool {
	for _, m := range r.Models {
		if MatchPattern(pattern, m) {
			return true
		}
	}
	for _, p := range r.OpenProviders {
		if MatchPatternUnder(pattern, p+"/") {
			return true
		}
	}
	for name := range r.Routes {
		if MatchPattern(pattern, name) {
			return true
		}
	}
	return false
}

// providers names every configured provider, for "did you mean".
func (r Reach) providers() []string {
	names := slices.Clone(r.OpenProviders)
	for _, m := range r.Models {
		if p, _, _ := strings.Cut(m, "/"); !slices.Contains(names, p) {
			names = append(names, p)
		}
	}
	return names
}

// warnModels reports k's model patterns that match nothing of r, and
// whether any does (or k lists none).
func (r Reach) warnModels(w setting.Problems, at string, k KeyConfig) (some bool) {
	var dead []int
	for j, m := range k.Models {
		if !r.reaches(m) {
			dead = append(dead, j)
		}
	}
	if len(dead) == 0 {
		return true
	}
	if len(dead) == len(k.Models) {
		msg := fmt.Sprintf("no pattern of key %q matches a configured provider's model or a route: every call of the key is refused MODEL_NOT_ALLOWED", k.Name)
		w.Bad(at+"models", "%s%s", msg, meant(k.Models, r.providers()))
		return false
	}
	for _, j := range dead {
		w.Bad(fmt.Sprintf("%smodels[%d]", at, j), "%q matches no configured provider's model and no route, so it allows nothing%s",
			k.Models[j], meant(k.Models[j:j+1], r.providers()))
	}
	return true
}

func (r Reach) warnTools(w setting.Problems, at string, k KeyConfig) {
	if len(k.Tools) == 0 {
		return
	}
	if !slices.Contains(k.Scopes, string(ScopeGenerate)) {
		w.Bad(at+"tools", "key %q has no generate scope, and only Generate offers server tools: its tools allow nothing", k.Name)
		return
	}
	if len(r.ToolServers) == 0 {
		w.Bad(at+"tools", "no MCP server is configured (tools.mcp_servers): key %q may offer no server tools", k.Name)
		return
	}
	for j, t := range k.Tools {
		if !slices.ContainsFunc(r.ToolServers, func(s string) bool { return MatchPatternUnder(t, s+"/") }) {
			w.Bad(fmt.Sprintf("%stools[%d]", at, j), "%q matches no tool of a configured MCP server (%s), so it allows nothing%s",
				t, strings.Join(r.ToolServers, ", "), meant([]string{t}, r.ToolServers))
		}
	}
}

func (r Reach) warnCost(w setting.Problems, at string, k KeyConfig) {
	priced := slices.ContainsFunc(r.Priced, func(m string) bool {
		return slices.ContainsFunc(k.Models, func(p string) bool { return MatchPattern(p, m) })
	})
	for name, targets := range r.Routes {
		priced = priced || slices.ContainsFunc(k.Models, func(p string) bool { return MatchPattern(p, name) }) &&
			slices.ContainsFunc(targets, func(t string) bool { return slices.Contains(r.Priced, t) })
	}
	if priced {
		return
	}
	why := fmt.Sprintf("pricing prices none of the models key %q may use", k.Name)
	if len(r.Priced) == 0 {
		why = "pricing prices no model"
	}
	for j, b := range k.Budgets {
		if b.MaxCostUSD > 0 {
			w.Bad(fmt.Sprintf("%sbudgets[%d].max_cost_usd", at, j),
				"%s: calls to unpriced models cost nothing, so this cap never stops one (max_tokens would)", why)
		}
	}
}

// meant suggests what the first of patterns whose provider (or server)
// part is a near miss of one of names was likely meant to be: "; did you
// mean openai/*?", or "".
func meant(patterns, names []string) string {
	for _, p := range patterns {
		head, rest, ok := strings.Cut(p, "/")
		if !ok || slices.Contains(names, head) {
			continue
		}
		if c := setting.Closest(head, names); c != "" {
			return "; did you mean " + c + "/" + rest + "?"
		}
	}
	return ""
}
