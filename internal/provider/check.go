package provider

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/setting"
)

// Against is what the providers section is checked against: the server's
// first event timeout for providers that set none (the deadlines
// section's first_event) and the floor of stream timeouts (its
// min_stream_timeout).
type Against struct {
	FirstEvent, MinStreamTimeout time.Duration
}

// CheckConfigs reports the providers section's problems, by path from the
// config's root ("providers[1].kind"): names that requests could not use
// or that repeat, a kind missing or not registered (Kinds), negative bounds, redirects and transport
// settings, transport timeouts the first event timeout would always cut
// short, first event timeouts below the floor, and provider_options
// policies.
func CheckConfigs(cfgs []Config, a Against, p setting.Problems) {
	names := map[string]int{}
	for i, pr := range cfgs {
		at := func(field string) string { return fmt.Sprintf("providers[%d].%s", i, field) }
		switch first, dup := names[pr.Name]; {
		case CheckName(pr.Name) != nil:
			// The rule request models' provider part follows: a name
			// that breaks it could never be called.
			p.Bad(at("name"), "%v", CheckName(pr.Name))
		case dup:
			p.Bad(at("name"), "%q is listed twice (also providers[%d])", pr.Name, first)
		default:
			names[pr.Name] = i
		}
		switch kinds := Kinds(); {
		case pr.Kind == "":
			p.Bad(at("kind"), "required; one of %s", strings.Join(kinds, ", "))
		case !slices.Contains(kinds, pr.Kind):
			// Adapters register their kinds (Register) in the program
			// that loads the config: the server links every adapter.
			p.Bad(at("kind"), "%s", setting.NotOneOf(pr.Kind, kinds...))
		}
		if pr.Timeout < 0 {
			p.Bad(at("timeout"), "must not be negative")
		} else if pr.Timeout > 0 && pr.Timeout < a.MinStreamTimeout {
			// The timeout bounds each whole HTTP request, stream included.
			p.Between(at("timeout"), "deadlines.min_stream_timeout", "%s is shorter than deadlines.min_stream_timeout (%s): every request to the provider would end "+
				"before an attempt could wait that long for it; raise timeout or leave it unset", setting.Duration(pr.Timeout), setting.Duration(a.MinStreamTimeout))
		}
		if pr.MaxConcurrent < 0 {
			p.Bad(at("max_concurrent"), "must not be negative")
		}
		var cp *ConfigProblem
		if err := CheckRedirects(pr.Redirects); errors.As(err, &cp) {
			p.Bad(at(cp.Field), "%s", cp.Problem)
		}
		if err := pr.Transport.Check(); errors.As(err, &cp) {
			p.Bad(at(cp.Field), "%s", cp.Problem)
		}
		// A transport timeout the first event timeout always ends first
		// could never fire: refuse it rather than let the stall timer
		// override it silently.
		first, firstAt := a.FirstEvent, "deadlines.first_event"
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
				p.Between(at(tt.name), firstAt, "%s is not shorter than the first event timeout (%s), which bounds the wait for the provider's first byte and would always end it first; raise %s or leave this unset",
					setting.Duration(tt.v), setting.Duration(first), firstAt)
			}
		}
		if pr.FirstEventTimeout < 0 || pr.FirstEventTimeout > 0 && pr.FirstEventTimeout < a.MinStreamTimeout {
			p.Between(at("first_event_timeout"), "deadlines.min_stream_timeout", "%s is not 0 (the server's deadlines.first_event) or at least min_stream_timeout (%s)",
				setting.Duration(pr.FirstEventTimeout), setting.Duration(a.MinStreamTimeout))
		}
		checkOptionNames(pr.ProviderOptions, at, p)
	}
}

// checkOptionNames reports the entries of an options policy that could
// never match a request's key, and so would guard nothing while looking
// as if they did: empty names, paths (the policy names top-level keys
// only), names with spaces or other characters no provider's key has, a
// name listed twice; and names both allowed and denied. A name no adapter
// knows is fine: providers add options.
func checkOptionNames(pol OptionsPolicy, at func(string) string, p setting.Problems) {
	for _, list := range []struct {
		name  string
		names []string
	}{{"allow", pol.Allow}, {"deny", pol.Deny}} {
		for j, k := range list.names {
			field := at(fmt.Sprintf("provider_options.%s[%d]", list.name, j))
			switch {
			case k == "":
				p.Bad(field, "must not be empty")
			case strings.IndexAny(k, ".[") > 0:
				p.Bad(field, "%q is a path; the policy names top-level keys only (%q refuses or allows the whole key)", k, k[:strings.IndexAny(k, ".[")])
			case !optionName(k):
				p.Bad(field, "%q is not a provider option's name: letters, digits, '_' and '-' only, as the provider's API spells it", k)
			case slices.Index(list.names, k) < j:
				p.Bad(field, "%q is listed twice (also provider_options.%s[%d])", k, list.name, slices.Index(list.names, k))
			case list.name == "allow" && slices.Contains(pol.Deny, k):
				p.Bad(field, "%q is also in provider_options.deny", k)
			}
		}
	}
}

// optionName reports whether k could be a top-level key of a provider's
// request body: at most 128 letters, digits, '_' or '-' (mcp_servers,
// generationConfig, extra_headers).
func optionName(k string) bool {
	if len(k) > 128 {
		return false
	}
	for _, c := range []byte(k) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
