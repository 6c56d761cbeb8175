package httpx

import (
	"net/url"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

func TestDialTimeout(t *testing.T) {
	if d := dialer(provider.Transport{}); d.Timeout != provider.DefaultTransport.DialTimeout {
		t.Errorf("default dial timeout %v, want %v", d.Timeout, provider.DefaultTransport.DialTimeout)
	}
	if d := dialer(provider.Transport{DialTimeout: 1500 * time.Millisecond}); d.Timeout != 1500*time.Millisecond {
		t.Errorf("dial timeout %v, want the configured 1.5s", d.Timeout)
	}
}

func TestSameOrigin(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"https://api.test/v1/x", "https://api.test/v2/y?z", true},
		{"https://api.test/v1", "https://API.test:443/v1", true},
		{"http://api.test/v1", "http://api.test:80/v1", true},
		{"https://api.test/v1", "http://api.test/v1", false},
		{"https://api.test/v1", "https://api.test:8443/v1", false},
		{"https://api.test/v1", "https://evil.test/v1", false},
		{"https://api.test/v1", "https://api.test.evil.test/v1", false},
	}
	for _, tc := range tests {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := sameOrigin(a, b); got != tc.want {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
