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
		for j, k := range pr.ProviderOptions.Allow {
			if k == "" {
				p.Bad(at(fmt.Sprintf("provider_options.allow[%d]", j)), "must not be empty")
			} else if slices.Contains(pr.ProviderOptions.Deny, k) {
				p.Bad(at(fmt.Sprintf("provider_options.allow[%d]", j)), "%q is also in provider_options.deny", k)
			}
		}
		for j, k := range pr.ProviderOptions.Deny {
			if k == "" {
				p.Bad(at(fmt.Sprintf("provider_options.deny[%d]", j)), "must not be empty")
			}
		}
	}
}
