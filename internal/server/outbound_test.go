package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// Secrets that must never leave for anywhere but their provider, nor reach
// a client.
const (
	upstreamKey     = "sk-upstream-key-must-stay-home"
	configuredValue = "tenant-secret-header-value"
	promptText      = "the user's confidential prompt"
	proxySecret     = "sk-proxy-page-leak-7f3a9c"
)

// kinds are the HTTP adapters, with where each sends its key.
var kinds = []struct {
	kind, model, keyHeader string
}{
	{"openai", "gpt-4o", "Authorization"},
	{"anthropic", "claude-sonnet-4-5", "X-Api-Key"},
	{"gemini", "gemini-2.5-flash", "X-Goog-Api-Key"},
}

// recorder is a loopback HTTP server that records the requests it gets and
// answers each with its handler.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recordedRequest
}

type recordedRequest struct {
	path   string
	header http.Header
	body   string
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	t.Helper()
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, recordedRequest{req.URL.Path, req.Header.Clone(), string(body)})
		r.mu.Unlock()
		if h != nil {
			h(w, req)
		}
	}))
	t.Cleanup(r.Close)
	t.Cleanup(httpx.CloseIdleConnections)
	return r
}

func (r *recorder) requests() []recordedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedRequest(nil), r.reqs...)
}

// outboundProvider is a provider "up" of the given kind in front of
// baseURL, with its key and a configured header holding secrets.
func outboundProvider(t *testing.T, kind, baseURL string) provider.Config {
	t.Setenv("LLMRELAY_TEST_UPSTREAM_KEY", upstreamKey)
	return provider.Config{Name: "up", Kind: kind, BaseURL: baseURL, APIKeyEnv: "LLMRELAY_TEST_UPSTREAM_KEY",
		Headers: map[string]string{"X-Tenant-Token": configuredValue}}
}

func outboundRequest(model string) *llmrelayv1.GenerateRequest {
	return &llmrelayv1.GenerateRequest{
		Model:    "up/" + model,
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: promptText}},
		Retry:    &llmrelayv1.RetryPolicy{MaxAttempts: 3},
	}
}

// TestRedirectToAnotherHostGetsNoCredentialsOrPrompt: an upstream (or a
// proxy at base_url) that redirects to another host must not make
// llmrelay send the provider's key, the configured headers or the prompt
// there. The redirect is a provider error with its status, not retried,
// with either redirect policy.
func TestRedirectToAnotherHostGetsNoCredentialsOrPrompt(t *testing.T) {
	for _, k := range kinds {
		for _, policy := range []string{"", provider.RedirectsSameOrigin} {
			for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
				t.Run(k.kind+"/"+policy+"/"+strconv.Itoa(code), func(t *testing.T) {
					elsewhere := newRecorder(t, nil)
					up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
						http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), code)
					})
					cfg := config.Default()
					p := outboundProvider(t, k.kind, up.URL)
					p.Redirects = policy
					cfg.Providers = []provider.Config{p}
					in := servertest.Start(t, cfg)

					_, err := servertest.Collect(t.Context(), in.Client, outboundRequest(k.model))
					st := wantError(t, err, codes.InvalidArgument, "PROVIDER_REJECTED")
					if md := detail[*errdetails.ErrorInfo](st).GetMetadata(); md["provider_status"] != strconv.Itoa(code) || md["attempts"] != "1" {
						t.Errorf("metadata %v, want provider_status %d after 1 attempt", md, code)
					}
					if got := elsewhere.requests(); len(got) != 0 {
						t.Fatalf("the redirect's target received %d requests: %+v", len(got), got)
					}
					if got := up.requests(); len(got) != 1 || got[0].header.Get(k.keyHeader) == "" {
						t.Errorf("the provider received %d requests, want 1 carrying its key", len(got))
					}
				})
			}
		}
	}
}

// TestSameOriginRedirectIsFollowedOnlyWhenAllowed: with redirects:
// same_origin, a 307 to another path of the same host is followed (key and
// body included); by default it is not.
func TestSameOriginRedirectIsFollowedOnlyWhenAllowed(t *testing.T) {
	for _, policy := range []string{"", provider.RedirectsNever, provider.RedirectsSameOrigin} {
		t.Run("policy="+policy, func(t *testing.T) {
			up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/v1/chat/completions" {
					http.Redirect(w, r, "/v2/chat/completions", http.StatusTemporaryRedirect)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"moved"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			})
			cfg := config.Default()
			p := outboundProvider(t, "openai", up.URL+"/v1")
			p.Redirects = policy
			cfg.Providers = []provider.Config{p}
			in := servertest.Start(t, cfg)
			events, err := servertest.Collect(t.Context(), in.Client, outboundRequest("gpt-4o"))
			reqs := up.requests()
			if policy != provider.RedirectsSameOrigin {
				wantError(t, err, codes.InvalidArgument, "PROVIDER_REJECTED")
				if len(reqs) != 1 {
					t.Errorf("%d requests, want the redirect alone", len(reqs))
				}
				return
			}
			if err != nil || events[len(events)-1].GetFinal().GetMessage().GetContent() != "moved" {
				t.Fatalf("Generate: %v, %v; want the redirected stream", events, err)
			}
			if len(reqs) != 2 || reqs[1].path != "/v2/chat/completions" || reqs[1].header.Get("Authorization") != "Bearer "+upstreamKey ||
				!strings.Contains(reqs[1].body, promptText) {
				t.Errorf("requests %+v, want the redirected one with key and body", reqs)
			}
		})
	}
}

// TestRawUpstreamBodiesNeverReachClients: a 4xx body that is not in the
// provider's error format (a proxy's or internal gateway's HTML page) does
// not reach the client's status; the status says what happened with the
// HTTP status, and the body goes to the debug log with the request id.
func TestRawUpstreamBodiesNeverReachClients(t *testing.T) {
	page := "<html><head><title>Gateway</title></head><body><h1>Denied</h1>\n<pre>route=internal-llm-gw token=" +
		proxySecret + "\r\nupstream=10.1.2.3</pre></body></html>"
	for _, k := range kinds {
		for _, code := range []int{http.StatusBadRequest, http.StatusNotFound} {
			t.Run(k.kind+"/"+strconv.Itoa(code), func(t *testing.T) {
				up := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(code)
					_, _ = io.WriteString(w, page)
				})
				var logs servertest.LockedBuffer
				logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				cfg := config.Default()
				cfg.Providers = []provider.Config{outboundProvider(t, k.kind, up.URL)}
				in := servertest.Start(t, cfg, server.WithLogger(logger))

				req := outboundRequest(k.model)
				req.RequestId = "5b7e4a8e-8f5c-4d69-9a43-3f7b1e7e2a10"
				_, err := servertest.Collect(t.Context(), in.Client, req)
				st := wantError(t, err, codes.InvalidArgument, "PROVIDER_REJECTED")
				wire, _ := proto.Marshal(st.Proto())
				for _, leak := range []string{proxySecret, "internal-llm-gw", "<html", "10.1.2.3"} {
					if bytes.Contains(wire, []byte(leak)) {
						t.Errorf("the client's status carries %q: %q", leak, st.Message())
					}
				}
				if !strings.Contains(st.Message(), "HTTP "+strconv.Itoa(code)) {
					t.Errorf("message %q, want it to name the HTTP status", st.Message())
				}
				found := false
				for line := range strings.SplitSeq(logs.String(), "\n") {
					var l map[string]any
					if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == "provider error response" {
						found = l["request_id"] == req.RequestId && l["level"] == "DEBUG" && strings.Contains(l["body"].(string), proxySecret)
					}
				}
				if !found {
					t.Errorf("no debug line with the request id and the body:\n%s", logs.String())
				}
			})
		}
	}
}

// TestDotSegmentModelIsRefusedBeforeAnyUpstreamCall: a model whose path
// steps out of its segment ("..", ".", "") is INVALID_ARGUMENT on the
// model field, for every adapter, and no request leaves llmrelay; a key
// limited to "up/gemini-2.5-flash*" cannot reach another model through it.
func TestDotSegmentModelIsRefusedBeforeAnyUpstreamCall(t *testing.T) {
	const key = "flash-only-key-0123456789abcdef"
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			up := newRecorder(t, nil)
			cfg := config.Default()
			cfg.Providers = []provider.Config{outboundProvider(t, k.kind, up.URL)}
			cfg.Auth.Keys = []config.APIKey{{Name: "flash", SHA256: auth.HashKey(key), Scopes: []string{"generate"},
				Models: []string{"up/gemini-2.5-flash*"}}}
			in := servertest.Start(t, cfg)
			ctx := bearer(t.Context(), key)
			for _, model := range []string{
				"gemini-2.5-flash/../../v1beta/models/gemini-2.5-pro",
				"gemini-2.5-flash/./x", "gemini-2.5-flash//x", "gemini-2.5-flash/",
			} {
				_, err := servertest.Collect(ctx, in.Client, outboundRequest(model))
				st := wantError(t, err, codes.InvalidArgument, "INVALID_REQUEST")
				v := detail[*errdetails.BadRequest](st).GetFieldViolations()
				if len(v) != 1 || v[0].GetField() != "model" {
					t.Errorf("model %q: violations %v, want one on model", model, v)
				}
			}
			// A fallback model follows the same rule.
			req := outboundRequest("gemini-2.5-flash")
			req.FallbackModels = []string{"up/gemini-2.5-flash/../../v1beta/models/gemini-2.5-pro"}
			_, err := servertest.Collect(ctx, in.Client, req)
			st := wantError(t, err, codes.InvalidArgument, "INVALID_REQUEST")
			if v := detail[*errdetails.BadRequest](st).GetFieldViolations(); len(v) != 1 || v[0].GetField() != "fallback_models[0]" {
				t.Errorf("fallback model: violations %v, want one on fallback_models[0]", v)
			}
			// A clean path under the pattern's prefix is another model: the
			// key's "*" does not cross "/".
			_, err = servertest.Collect(ctx, in.Client, outboundRequest("gemini-2.5-flash/x"))
			wantError(t, err, codes.PermissionDenied, "MODEL_NOT_ALLOWED")
			if n := len(up.requests()); n != 0 {
				t.Errorf("the upstream received %d requests", n)
			}
		})
	}
}

// TestTheIdleTimeoutDoesNotCutTheHeaderWaitShort: the stream idle timeout
// (1s here) does not bound the wait for a provider's response headers (3s),
// which the first event timeout and the provider's response_header_timeout
// bound (the latter as a transport failure, not a stall).
func TestTheIdleTimeoutDoesNotCutTheHeaderWaitShort(t *testing.T) {
	const slowHeaders = 3 * time.Second
	tests := []struct {
		name          string
		headerTimeout time.Duration
		wantCode      codes.Code
		wantMessage   string
	}{
		{"headers later than the idle timeout", 0, codes.OK, ""},
		{"headers later than response_header_timeout", 300 * time.Millisecond, codes.Unavailable, "did not answer in time"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := openaitest.Start(t, openaitest.Options{Chunks: 3, Faults: []openaitest.Fault{{FirstByteDelay: slowHeaders}}})
			t.Cleanup(httpx.CloseIdleConnections)
			cfg := config.Default()
			cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL(),
				Transport: provider.Transport{ResponseHeaderTimeout: tc.headerTimeout}}}
			in := servertest.Start(t, cfg)
			req := outboundRequest("fake")
			req.Retry.MaxAttempts = 1
			req.StreamIdleTimeout = durationpb.New(slowHeaders / 3)
			events, err := servertest.Collect(t.Context(), in.Client, req)
			if tc.wantCode == codes.OK {
				if err != nil || events[len(events)-1].GetFinal().GetMessage().GetContent() != openaitest.Text(3) {
					t.Fatalf("Generate: %v; want the whole reply", err)
				}
				return
			}
			st := status.Convert(err)
			if st.Code() != tc.wantCode || !strings.Contains(st.Message(), tc.wantMessage) {
				t.Errorf("status %v, want %v mentioning %q", st, tc.wantCode, tc.wantMessage)
			}
		})
	}
}

// TestUpstreamErrorsEchoingCredentialsAreRedacted: an upstream that quotes
// the credentials it was sent in its error message ("Incorrect API key
// provided: sk-...", an internal gateway naming a header's value) must not
// make llmrelay pass them on: not to the client, whose rejected requests
// show the provider's message, nor to the log, at any level, nor as the
// error the call's finish line carries. The rest of the message stays.
func TestUpstreamErrorsEchoingCredentialsAreRedacted(t *testing.T) {
	bodies := map[string]string{
		"openai":    `{"error": {"message": %q, "type": "invalid_request_error"}}`,
		"anthropic": `{"type": "error", "error": {"type": "invalid_request_error", "message": %q}}`,
		"gemini":    `{"error": {"code": 400, "message": %q, "status": "INVALID_ARGUMENT"}}`,
	}
	for _, k := range kinds {
		for _, code := range []int{http.StatusBadRequest, http.StatusUnauthorized} {
			t.Run(k.kind+"/"+strconv.Itoa(code), func(t *testing.T) {
				up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
					msg := "Incorrect credentials provided: " + r.Header.Get(k.keyHeader) +
						" with X-Tenant-Token " + r.Header.Get("X-Tenant-Token")
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(code)
					_, _ = io.WriteString(w, fmt.Sprintf(bodies[k.kind], msg))
				})
				var logs servertest.LockedBuffer
				logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				cfg := config.Default()
				cfg.Providers = []provider.Config{outboundProvider(t, k.kind, up.URL)}
				in := servertest.Start(t, cfg, server.WithLogger(logger))

				_, err := servertest.Collect(t.Context(), in.Client, outboundRequest(k.model))
				st := status.Convert(err)
				if st.Code() == codes.OK {
					t.Fatal("the call succeeded, want the provider's error")
				}
				wire, _ := proto.Marshal(st.Proto())
				for _, secret := range []string{upstreamKey, configuredValue} {
					if bytes.Contains(wire, []byte(secret)) {
						t.Errorf("the client's status carries %q: %q", secret, st.Message())
					}
				}
				if code == http.StatusBadRequest && !strings.Contains(st.Message(), "Incorrect credentials provided") {
					t.Errorf("message %q, want the provider's message, redacted", st.Message())
				}
				// The finish line is written before the status is sent.
				for _, secret := range []string{upstreamKey, configuredValue} {
					if strings.Contains(logs.String(), secret) {
						t.Errorf("the log carries %q:\n%s", secret, logs.String())
					}
				}
			})
		}
	}
}

// TestInStreamErrorsEchoingCredentialsAreRedacted: the same for an error
// the provider sends inside its event stream, after a 200.
func TestInStreamErrorsEchoingCredentialsAreRedacted(t *testing.T) {
	events := map[string]string{
		"openai":    "data: {\"error\": {\"message\": %q, \"type\": \"invalid_request_error\"}}\n\n",
		"anthropic": "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"invalid_request_error\", \"message\": %q}}\n\n",
	}
	for _, k := range kinds[:2] {
		t.Run(k.kind, func(t *testing.T) {
			up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				msg := "Incorrect credentials provided: " + r.Header.Get(k.keyHeader) +
					" with X-Tenant-Token " + r.Header.Get("X-Tenant-Token")
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, fmt.Sprintf(events[k.kind], msg))
			})
			var logs servertest.LockedBuffer
			logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			cfg := config.Default()
			cfg.Providers = []provider.Config{outboundProvider(t, k.kind, up.URL)}
			in := servertest.Start(t, cfg, server.WithLogger(logger))

			_, err := servertest.Collect(t.Context(), in.Client, outboundRequest(k.model))
			st := status.Convert(err)
			if st.Code() == codes.OK {
				t.Fatal("the call succeeded, want the provider's error")
			}
			wire, _ := proto.Marshal(st.Proto())
			for _, secret := range []string{upstreamKey, configuredValue} {
				if bytes.Contains(wire, []byte(secret)) {
					t.Errorf("the client's status carries %q: %q", secret, st.Message())
				}
				if strings.Contains(logs.String(), secret) {
					t.Errorf("the log carries %q:\n%s", secret, logs.String())
				}
			}
		})
	}
}
