package interceptors

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine"
)

// throttled serves the auth links with a throttle of burst failures, one
// try back per second, and a log interval of a minute, on a fake clock,
// inside the links that give a refusal its request id as the server's
// chain does; the throttle's and the logging link's lines go to logs.
func throttled(t *testing.T, burst int) (testConn, *fakeClock, *logBuffer) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}
	logs := &logBuffer{}
	th := auth.NewThrottle(auth.ThrottleConfig{Burst: burst, PerSecond: 1, LogInterval: time.Minute}, logs.logger())
	th.SetClock(clock.now)
	a := &engine.Authenticator{Keys: authKeys(t), Throttle: th}
	c := serve(t, &fakeService{}, Guard(discardLogger()), APIOnly(Pushback()), Recovery(discardLogger()), Logging(logs.logger()), APIOnly(Auth(a)))
	return c, clock, logs
}

func TestAuthThrottleRefusesAnAddressAfterRepeatedFailures(t *testing.T) {
	c, clock, _ := throttled(t, 3)
	list := func(key string) error {
		_, err := c.llm.ListModels(withKey(testCtx(t), key), &llmrelayv1.ListModelsRequest{})
		return err
	}
	for range 3 {
		wantStatus(t, list("guess"), codes.Unauthenticated, ReasonAPIKeyUnknown)
	}
	// The bucket is empty: the next failure is refused as throttled.
	st := wantStatus(t, list("guess"), codes.Unauthenticated, ReasonAuthThrottled)
	if d := findDetail[*errdetails.RetryInfo](st).GetRetryDelay().AsDuration(); d != time.Second {
		t.Errorf("RetryInfo %v, want 1s (one try back per second)", d)
	}
	_, err := c.generate(withKey(testCtx(t), "guess"), validRequest())
	wantStatus(t, err, codes.Unauthenticated, ReasonAuthThrottled)
	// A valid key from the same address is never refused for the others'
	// failures (issue 23 item 9: behind a proxy, every client shares it).
	if err := list(fullKey); err != nil {
		t.Fatalf("a valid key from a throttled address: %v", err)
	}
	if _, err := c.generate(withKey(testCtx(t), fullKey), validRequest()); err != nil {
		t.Fatalf("a valid key's Generate from a throttled address: %v", err)
	}

	clock.advance(time.Second)
	// Refused calls took no try: one failure is allowed again, then the
	// bucket is empty again.
	wantStatus(t, list("guess"), codes.Unauthenticated, ReasonAPIKeyUnknown)
	wantStatus(t, list("guess"), codes.Unauthenticated, ReasonAuthThrottled)
}

func TestAuthThrottleLogsOncePerInterval(t *testing.T) {
	c, clock, logs := throttled(t, 5)
	for range 40 {
		_, _ = c.llm.ListModels(withKey(testCtx(t), "guess"), &llmrelayv1.ListModelsRequest{})
		_, _ = c.generate(testCtx(t), validRequest()) // no credentials at all
	}
	lines := logs.lines(t, "failed authentication")
	if len(lines) != 1 || lines[0]["failures"] != float64(1) || lines[0]["peer"] != "local" || lines[0]["level"] != "WARN" {
		t.Fatalf("%d lines for 80 failures within a minute, want one (the first):\n%s", len(lines), logs)
	}
	if n := len(logs.lines(t, "started call")) + len(logs.lines(t, "finished call")); n != 0 {
		t.Errorf("the logging link wrote %d lines for calls refused at authentication", n)
	}
	clock.advance(time.Minute)
	_, _ = c.llm.ListModels(withKey(testCtx(t), "guess"), &llmrelayv1.ListModelsRequest{})
	lines = logs.lines(t, "failed authentication")
	// 5 failures took the tries; the other 75 calls were throttled, and so
	// was the last one (1 try back per second, 60 seconds on: 5 in the bucket).
	if len(lines) != 2 || lines[1]["failures"].(float64)+lines[1]["throttled"].(float64) != 80 {
		t.Errorf("lines %v, want a second one counting the 80 calls since the first", lines)
	}
	if strings.Contains(logs.String(), "guess") {
		t.Error("a presented key reached the log")
	}
}

func TestAuthThrottleOff(t *testing.T) {
	c, _, logs := throttled(t, 0)
	for range 30 {
		_, err := c.llm.ListModels(withKey(testCtx(t), "guess"), &llmrelayv1.ListModelsRequest{})
		wantStatus(t, err, codes.Unauthenticated, ReasonAPIKeyUnknown)
	}
	if _, err := c.llm.ListModels(withKey(testCtx(t), fullKey), &llmrelayv1.ListModelsRequest{}); err != nil {
		t.Fatal(err)
	}
	if n := len(logs.lines(t, "failed authentication")); n != 1 {
		t.Errorf("%d lines, want 1", n)
	}
}

func TestPeerPrefix(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("203.0.113.7"), Port: 4000}, "203.0.113.7"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:203.0.113.7"), Port: 4000}, "203.0.113.7"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1"), Port: 4000}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:bbbb::9"), Port: 1}, "2001:db8:1:2::/64"},
		{&net.UnixAddr{Name: "/run/llmrelay.sock", Net: "unix"}, "local"},
	}
	for _, tc := range tests {
		ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: tc.addr})
		if got := auth.AddrName(auth.AddrKey(peerAddr(ctx))); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.addr, got, tc.want)
		}
	}
	if got := auth.AddrName(auth.AddrKey(peerAddr(context.Background()))); got != "local" {
		t.Errorf("no peer: %s", got)
	}
}

// TestAuthFailureLineNamesItsRefusal: the throttled `failed authentication`
// line carries the request id of the refusal it was written at, the one
// the client's error gives, so that a client's report of that refusal
// finds the line; the refusals it only counts are found by their peer.
func TestAuthFailureLineNamesItsRefusal(t *testing.T) {
	c, clock, logs := throttled(t, 5)
	requestID := func(err error, reason string) string {
		t.Helper()
		id := findDetail[*errdetails.ErrorInfo](wantStatus(t, err, codes.Unauthenticated, reason)).GetMetadata()["request_id"]
		if id == "" {
			t.Fatalf("a refusal without a request id: %v", err)
		}
		return id
	}
	_, err := c.llm.ListModels(withKey(testCtx(t), "guess"), &llmrelayv1.ListModelsRequest{})
	first := requestID(err, ReasonAPIKeyUnknown)
	for range 10 { // counted in the next line, not written at once
		_, _ = c.llm.ListModels(withKey(testCtx(t), "guess"), &llmrelayv1.ListModelsRequest{})
	}
	lines := logs.lines(t, "failed authentication")
	if len(lines) != 1 || lines[0]["request_id"] != first {
		t.Fatalf("lines %v, want one with request_id %s, the first refusal's", lines, first)
	}

	clock.advance(time.Minute)
	_, err = c.generate(testCtx(t), validRequest()) // no credentials at all
	next := requestID(err, ReasonCredentialsMissing)
	lines = logs.lines(t, "failed authentication")
	if len(lines) != 2 || lines[1]["request_id"] != next {
		t.Fatalf("lines %v, want a second one with request_id %s, the Generate refused a minute on", lines, next)
	}
}
