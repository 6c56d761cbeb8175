package server_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	adminv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/admin/v1"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

// revokeCheck is the key check's interval in these tests: short, so that
// they are quick; what they wait on is the stream's end, with a wide bound.
const revokeCheck = 20 * time.Millisecond

// heldUpstream is an OpenAI-compatible upstream that streams n chunks and
// then holds every stream until release (or the test's end), and a config
// on it with the admin key (and redis, when set, shared).
func heldUpstream(t *testing.T, redis *redistest.Server, n int) (cfg *config.Config, release func()) {
	t.Helper()
	hold := make(chan struct{})
	release = sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release)
	up := openaitest.Start(t, openaitest.Options{Chunks: 20, Pause: &openaitest.Pause{After: n, Until: hold}})
	cfg = governanceConfig(redis, "revoke-"+t.Name()+":")
	cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL(), Models: []string{"fake-model"}}}
	return cfg, release
}

// openHeld starts a call with the key secret and reads its deltas until
// they spell want: the call is then held open by its upstream.
func openHeld(t *testing.T, in *servertest.Instance, secret, want string) grpc.ServerStreamingClient[llmrelayv1.GenerateEvent] {
	t.Helper()
	stream, err := in.Client.Generate(bearer(t.Context(), secret), budgetRequest())
	if err != nil {
		t.Fatal(err)
	}
	for streamed := ""; streamed != want; {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("after %q: %v", streamed, err)
		}
		if streamed += ev.GetDelta().GetText(); len(streamed) > len(want) {
			t.Fatalf("streamed %q, more than the %q before the upstream pauses", streamed, want)
		}
	}
	return stream
}

// wantEnded reads the held stream to its end, which must be the status
// UNAUTHENTICATED with reason and the key named key in its metadata, within a wide bound (a guard against hangs:
// the key check runs every revokeCheck).
func wantEnded(t *testing.T, stream grpc.ServerStreamingClient[llmrelayv1.GenerateEvent], key, reason string) {
	t.Helper()
	ended := make(chan error, 1)
	go func() {
		for {
			ev, err := stream.Recv()
			if err != nil {
				ended <- err
				return
			}
			if ev.GetFinal() != nil {
				ended <- nil
				return
			}
		}
	}()
	select {
	case err := <-ended:
		if code, info, _ := errorInfo(err); code != codes.Unauthenticated || info.GetReason() != reason || info.GetMetadata()["key"] != key {
			t.Fatalf("the held call ended with %v (metadata %v), want UNAUTHENTICATED %s naming key %s", err, info.GetMetadata(), reason, key)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the held call did not end: want UNAUTHENTICATED %s", reason)
	}
}

// wantFinal reads a stream, its upstream released, to its Final.
func wantFinal(t *testing.T, stream grpc.ServerStreamingClient[llmrelayv1.GenerateEvent], what string) {
	t.Helper()
	for {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("%s: %v, want it to run to its Final", what, err)
		}
		if ev.GetFinal() != nil {
			return
		}
	}
}

// wantCounted checks that the server's metrics count the call of the key
// named key that ended with reason: one call of that key with error_type
// reason in gen_ai_server_request_duration_seconds (apart from the calls
// refused at authentication, which have no key), and one Unauthenticated
// call in llmrelay_generate_calls_total.
func wantCounted(t *testing.T, in *servertest.Instance, key, reason string) {
	t.Helper()
	eventually(t, "the ended call in gen_ai_server_request_duration_seconds", func() bool {
		for line := range strings.Lines(in.Server.Metrics().Text()) {
			if strings.HasPrefix(line, "gen_ai_server_request_duration_seconds_count{") && strings.Contains(line, `key="`+key+`"`) &&
				strings.Contains(line, `error_type="`+reason+`"`) && strings.HasSuffix(strings.TrimSpace(line), " 1") {
				return true
			}
		}
		return false
	})
	if got := metricValue(in, "llmrelay_generate_calls_total", `code="Unauthenticated"`); got != "1" {
		t.Errorf("llmrelay_generate_calls_total{code=\"Unauthenticated\"} = %q, want 1", got)
	}
}

func revoke(t *testing.T, in *servertest.Instance, name string) {
	t.Helper()
	if _, err := adminv1.NewKeyServiceClient(in.Conn).RevokeKey(bearer(t.Context(), adminSecret), &adminv1.RevokeKeyRequest{Name: name}); err != nil {
		t.Fatalf("RevokeKey(%s): %v", name, err)
	}
}

// TestRevokingAKeyEndsItsOpenCalls: a stream held open by its upstream
// ends UNAUTHENTICATED, API_KEY_REVOKED, once its key is revoked through
// the admin API; the held call of another key runs on to its Final; the
// revoked key's usage counts the ended call, at an estimate of what it
// streamed.
func TestRevokingAKeyEndsItsOpenCalls(t *testing.T) {
	const n = 3
	cfg, release := heldUpstream(t, nil, n)
	var logs servertest.LockedBuffer
	in := servertest.Start(t, cfg, server.WithKeyCheckInterval(revokeCheck), server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	leaked := createKey(t, in, &adminv1.Key{Name: "leaked", Scopes: []string{"generate"}, Models: []string{"*"}})
	other := createKey(t, in, &adminv1.Key{Name: "other", Scopes: []string{"generate"}, Models: []string{"*"}})

	held := openHeld(t, in, leaked, openaitest.Text(n))
	untouched := openHeld(t, in, other, openaitest.Text(n))
	revoke(t, in, "leaked")
	wantEnded(t, held, "leaked", "API_KEY_REVOKED")
	wantCounted(t, in, "leaked", "API_KEY_REVOKED")

	// The other key's call was checked in the same pass: let it finish.
	release()
	wantFinal(t, untouched, "the other key's call")

	rec := usageOf(t, in, "leaked", 1)
	if rec.GetCalls() != 1 || rec.GetEstimatedOutputTokens() == 0 || rec.GetEstimatedInputTokens() == 0 {
		t.Fatalf("the revoked key's usage %v: want its ended call, with an estimate of what it streamed", rec)
	}
	// The ended call has its finish line (a call refused at
	// authentication has none); it is written as the handler returns.
	var line string
	for deadline := time.Now().Add(30 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		line = grepLines(logs.String(), `msg="finished call"`)
		if !strings.Contains(line, "API_KEY_REVOKED") {
			line = ""
		}
	}
	if !strings.Contains(line, "key=leaked") || !strings.Contains(line, "usage.estimated_output_tokens=") {
		t.Fatalf("no finish line of the ended call, with its key and estimate:\n%s", logs.String())
	}
}

// TestRevokingAKeyEndsItsCallsOnEveryReplica: two replicas share a real
// redis-server; a call held open on replica A ends UNAUTHENTICATED,
// API_KEY_REVOKED, once its key is revoked on replica B.
func TestRevokingAKeyEndsItsCallsOnEveryReplica(t *testing.T) {
	redis := redistest.Start(t)
	const n = 2
	cfg, _ := heldUpstream(t, redis, n)
	a := servertest.Start(t, cfg, server.WithKeyCheckInterval(revokeCheck))
	b := servertest.Start(t, governanceConfig(redis, cfg.State.Redis.KeyPrefix), server.WithKeyCheckInterval(revokeCheck))

	secret := createKey(t, b, &adminv1.Key{Name: "ci", Scopes: []string{"generate"}, Models: []string{"*"}})
	held := openHeld(t, a, secret, openaitest.Text(n))
	revoke(t, b, "ci")
	wantEnded(t, held, "ci", "API_KEY_REVOKED")
}

// TestAnExpiringKeyEndsItsOpenCalls: a call held open when its key's
// expires_at passes (the governance clock moves past it) ends
// UNAUTHENTICATED, API_KEY_EXPIRED.
func TestAnExpiringKeyEndsItsOpenCalls(t *testing.T) {
	const n = 2
	clock := statetest.NewClock()
	cfg, _ := heldUpstream(t, nil, n)
	in := servertest.Start(t, cfg, server.WithKeyCheckInterval(revokeCheck), server.WithGovernanceClock(clock.Now))
	secret := createKey(t, in, &adminv1.Key{Name: "temp", Scopes: []string{"generate"}, Models: []string{"*"},
		ExpiresAt: timestamppb.New(clock.Now().Add(time.Hour))})

	held := openHeld(t, in, secret, openaitest.Text(n))
	clock.Advance(2 * time.Hour)
	wantEnded(t, held, "temp", "API_KEY_EXPIRED")
	wantCounted(t, in, "temp", "API_KEY_EXPIRED")
}

// TestRevokingAKeyEndsItsHTTPStream: the OpenAI door's streamed reply of a
// key revoked while it runs ends with the format's error event, reason
// API_KEY_REVOKED, and no [DONE].
func TestRevokingAKeyEndsItsHTTPStream(t *testing.T) {
	const n = 2
	cfg, _ := heldUpstream(t, nil, n)
	in := servertest.Start(t, cfg, server.WithKeyCheckInterval(revokeCheck))
	base := in.HTTP(t)
	secret := createKey(t, in, &adminv1.Key{Name: "ci", Scopes: []string{"generate"}, Models: []string{"*"}})

	body := `{"model": "up/fake-model", "stream": true, "messages": [{"role": "user", "content": "hello"}]}`
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a guard against hangs only
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for streamed := ""; streamed != openaitest.Text(n); {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", streamed, err)
		}
		if i := strings.Index(line, `"content":"`); i >= 0 {
			streamed += strings.SplitN(line[i+len(`"content":"`):], `"`, 2)[0]
		}
	}
	revoke(t, in, "ci")
	rest, _ := io.ReadAll(r)
	if !strings.Contains(string(rest), `"reason":"API_KEY_REVOKED"`) || strings.Contains(string(rest), "[DONE]") {
		t.Fatalf("the stream's end: %q, want the error event of API_KEY_REVOKED", rest)
	}
}

// withEachKeyStore runs test with no state store configured (the
// process's own key store) and with redis.
func withEachKeyStore(t *testing.T, test func(t *testing.T, redis *redistest.Server)) {
	for _, tc := range []struct {
		name  string
		redis func(testing.TB) *redistest.Server
	}{
		{"no state store", func(testing.TB) *redistest.Server { return nil }},
		{"redis", redistest.Start},
	} {
		t.Run(tc.name, func(t *testing.T) { test(t, tc.redis(t)) })
	}
}

// generateKey is a config key named name, of secret, that may generate.
func generateKey(name, secret string) config.APIKey {
	return config.APIKey{Name: name, SHA256: auth.HashKey(secret), Scopes: []string{"generate"}, Models: []string{"*"}}
}

// TestReloadRemovingAConfigKeyEndsItsOpenCalls: a call held open on a
// config key ends UNAUTHENTICATED, API_KEY_UNKNOWN, once a reload removes
// the key, with no state store configured (the process's own key store)
// as with redis: the key check reads the key again, and no key has its
// secret any more.
func TestReloadRemovingAConfigKeyEndsItsOpenCalls(t *testing.T) {
	withEachKeyStore(t, func(t *testing.T, redis *redistest.Server) {
		const n = 2
		cfg, _ := heldUpstream(t, redis, n)
		cfg.Auth.Keys = append(cfg.Auth.Keys, generateKey("app", "app-secret"))
		in := servertest.Start(t, cfg, server.WithKeyCheckInterval(revokeCheck))

		held := openHeld(t, in, "app-secret", openaitest.Text(n))
		next := *cfg
		next.Auth.Keys = slices.DeleteFunc(slices.Clone(cfg.Auth.Keys), func(k config.APIKey) bool { return k.Name == "app" })
		if _, err := in.Server.Reload(&next); err != nil {
			t.Fatalf("Reload: %v", err)
		}
		wantEnded(t, held, "app", "API_KEY_UNKNOWN")
	})
}

// TestReloadFollowsTheKeyNotItsName: open calls go with their key's
// secret, not its name. A reload that renames a config key (the same
// sha256 under another name) and gives another one's name a new sha256:
// the call held open on the old secret ends UNAUTHENTICATED,
// API_KEY_UNKNOWN, naming its key, while the call held on the renamed
// key, checked in the same pass, runs on to its Final; the old secret is
// refused, the new one and the renamed key work.
func TestReloadFollowsTheKeyNotItsName(t *testing.T) {
	withEachKeyStore(t, func(t *testing.T, redis *redistest.Server) {
		const n = 2
		cfg, release := heldUpstream(t, redis, n)
		cfg.Auth.Keys = append(cfg.Auth.Keys, generateKey("app", "app-secret"), generateKey("rot", "rot-old-secret"))
		in := servertest.Start(t, cfg, server.WithKeyCheckInterval(revokeCheck))

		renamed := openHeld(t, in, "app-secret", openaitest.Text(n))
		rotated := openHeld(t, in, "rot-old-secret", openaitest.Text(n))
		next := *cfg
		next.Auth.Keys = slices.Clone(cfg.Auth.Keys)
		for i, k := range next.Auth.Keys {
			switch k.Name {
			case "app":
				next.Auth.Keys[i].Name = "app2"
			case "rot":
				next.Auth.Keys[i] = generateKey("rot", "rot-new-secret")
			}
		}
		if _, err := in.Server.Reload(&next); err != nil {
			t.Fatalf("Reload: %v", err)
		}
		wantEnded(t, rotated, "rot", "API_KEY_UNKNOWN")

		// The pass that ended it read the reloaded keys, with the renamed
		// key's call among those it checked. A call opened now is not
		// among them: once a revocation has ended it, in a later pass,
		// that pass is over, and the renamed key's call was not ended.
		secret := createKey(t, in, &adminv1.Key{Name: "ci", Scopes: []string{"generate"}, Models: []string{"*"}})
		later := openHeld(t, in, secret, openaitest.Text(n))
		revoke(t, in, "ci")
		wantEnded(t, later, "ci", "API_KEY_REVOKED")
		release()
		wantFinal(t, renamed, "the call of the renamed key")

		for secret, want := range map[string]codes.Code{"rot-old-secret": codes.Unauthenticated, "rot-new-secret": codes.OK, "app-secret": codes.OK} {
			if _, err := generate(t.Context(), in, secret, budgetRequest()); status.Code(err) != want {
				t.Errorf("a new call with %s: %v, want %v", secret, err, want)
			}
		}
	})
}
