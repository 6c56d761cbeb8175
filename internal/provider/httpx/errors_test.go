package httpx

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

func TestRetryHint(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"none", nil, 0, false},
		{"retry-after-ms", map[string]string{"Retry-After-Ms": "1500"}, 1500 * time.Millisecond, true},
		{"fractional ms", map[string]string{"Retry-After-Ms": "12.5"}, 12500 * time.Microsecond, true},
		{"ms wins over seconds", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second, true},
		{"zero seconds", map[string]string{"Retry-After": "0"}, 0, true},
		{"http date", map[string]string{"Retry-After": "Sun, 22 Nov 2026 10:00:30 GMT"}, 30 * time.Second, true},
		{"http date in the past", map[string]string{"Retry-After": "Sun, 22 Nov 2026 09:59:00 GMT"}, 0, true},
		{"bad ms falls back to seconds", map[string]string{"Retry-After-Ms": "soon", "Retry-After": "3"}, 3 * time.Second, true},
		{"negative", map[string]string{"Retry-After": "-4"}, 0, false},
		{"garbage", map[string]string{"Retry-After": "later"}, 0, false},
		{"absurd", map[string]string{"Retry-After": "1e12"}, 0, false},
		{"not a number", map[string]string{"Retry-After": "NaN"}, 0, false},
		{"infinite", map[string]string{"Retry-After": "+Inf"}, 0, false},
		{"not a number of ms", map[string]string{"Retry-After-Ms": "nan"}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			got, ok := RetryHint(h, now)
			if got != tc.want || ok != tc.ok {
				t.Errorf("RetryHint = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestShouldRetry(t *testing.T) {
	for v, want := range map[string]string{"true": "true", "False": "false", "": "nil", "maybe": "nil"} {
		h := http.Header{}
		if v != "" {
			h.Set("X-Should-Retry", v)
		}
		got := "nil"
		if b := ShouldRetry(h); b != nil {
			got = map[bool]string{true: "true", false: "false"}[*b]
		}
		if got != want {
			t.Errorf("x-should-retry %q = %s, want %s", v, got, want)
		}
	}
}

func TestResponseError(t *testing.T) {
	parse := func(b []byte, e *provider.Error) {
		if strings.HasPrefix(string(b), "{") {
			e.Type, e.Message = "overloaded_error", "Overloaded\n\x1b[2Jnow"
		}
	}
	const page = "<html><body>502 Bad Gateway: upstream 10.0.0.7 token=sk-proxy-secret</body></html>"
	tests := []struct {
		name     string
		status   int
		header   map[string]string
		body     string
		wantType string
		wantMsg  string
	}{
		{"parsed body, cleaned", 529, nil, `{"error":{}}`, "overloaded_error", "Overloaded [2Jnow"},
		{"unparsed body is no message", 502, nil, "  " + page + "\n", "", ""},
		{"unparsed 4xx body is no message", 404, nil, page, "", ""},
		{"empty body", 503, nil, "", "", ""},
		{"redirect", 307, map[string]string{"Location": "https://elsewhere.test/v1"}, page, "", RedirectMessage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			h.Set("Retry-After", "3")
			h.Set("X-Should-Retry", "false")
			for k, v := range tc.header {
				h.Set(k, v)
			}
			resp := &http.Response{StatusCode: tc.status, Header: h, Body: io.NopCloser(strings.NewReader(tc.body))}
			e := ResponseError(resp, time.Now(), parse)
			if e.Kind != provider.KindHTTP || e.Status != tc.status || e.Type != tc.wantType || e.Message != tc.wantMsg {
				t.Errorf("got %+v, want HTTP %d type %q message %q", e, tc.status, tc.wantType, tc.wantMsg)
			}
			if !e.HasRetryAfter || e.RetryAfter != 3*time.Second || e.ShouldRetry == nil || *e.ShouldRetry {
				t.Errorf("hints %v/%v should_retry %v, want 3s and false", e.RetryAfter, e.HasRetryAfter, e.ShouldRetry)
			}
			if strings.Contains(e.Error(), "sk-proxy-secret") {
				t.Errorf("Error() carries the raw body: %s", e.Error())
			}
			if !strings.Contains(e.Raw, tc.body) || !strings.Contains(e.Raw, tc.header["Location"]) {
				t.Errorf("Raw = %q, want the body (and a redirect's Location) for the debug log", e.Raw)
			}
		})
	}
}

func TestResponseErrorBoundsTheParsedMessage(t *testing.T) {
	parse := func(_ []byte, e *provider.Error) {
		e.Type, e.Code, e.Message = strings.Repeat("t", 500), "c\nc", strings.Repeat("m", 5000)
	}
	resp := &http.Response{StatusCode: 400, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}"))}
	e := ResponseError(resp, time.Now(), parse)
	if len(e.Message) > provider.MaxMessageLen+len("…") || len(e.Type) > provider.MaxTypeLen+len("…") || e.Code != "c c" {
		t.Errorf("message of %d bytes, type of %d, code %q: want them bounded and clean", len(e.Message), len(e.Type), e.Code)
	}
}

func TestProtocolErrorWrapsBothAndKeepsTheEvent(t *testing.T) {
	cause := errors.New("invalid character 'x'")
	data := []byte(`{"choices": x` + strings.Repeat(" ", 2*MaxRaw))
	e := ProtocolError(cause, data)
	if e.Kind != provider.KindProtocol || e.FailureClass() != provider.ClassProtocol || !errors.Is(e, ErrMalformed) || !errors.Is(e, cause) {
		t.Errorf("ProtocolError = %v, want KindProtocol/ClassProtocol wrapping ErrMalformed and the cause", e)
	}
	if e.Raw != string(data[:MaxRaw]) {
		t.Errorf("Raw holds %d bytes, want the event's first %d", len(e.Raw), MaxRaw)
	}
	if strings.Contains(e.Error(), "choices") {
		t.Errorf("Error() = %q shows the event; it belongs to Raw, for debug logs only", e.Error())
	}
}
