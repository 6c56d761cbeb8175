package auth

import (
	"errors"
	"fmt"
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
