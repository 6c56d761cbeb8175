package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/interceptors"
	"github.com/llmrelay/llmrelay/internal/logtest"
	"github.com/llmrelay/llmrelay/internal/metrics"
)

const (
	keyOld  = "old-key-0123456789abcdef"
	keyKeep = "keep-key-0123456789abcdef"
	keyNew  = "new-key-0123456789abcdef"
)

// gatedUpstream is an OpenAI-compatible upstream that sends the first
// chunk of "Hello world" at once and the rest only once release is
// closed, so a stream through it is in flight for as long as the test
// wants.
func gatedUpstream(t *testing.T) (url string, release func()) {
	gate := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}`+"\n\n")
		f.Flush()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"stop"}]}`+"\n\n"+"data: [DONE]\n\n")
		f.Flush()
	}))
	t.Cleanup(srv.Close)
	var released bool
	return srv.URL + "/v1", func() {
		if !released {
			released = true
			close(gate)
		}
	}
}

// configYAML is a config with the named keys (each allowed everything),
// the mock provider and an openai-kind provider "up" at upURL; extra is
// appended as is.
func configYAML(upURL string, keys map[string]string, extra string) string {
	var b strings.Builder
	b.WriteString("metrics_listen: \"\"\nauth:\n  keys:\n")
	for name, secret := range keys {
		fmt.Fprintf(&b, "    - {name: %s, sha256: %s, scopes: [generate], models: [\"*\"]}\n", name, auth.HashKey(secret))
	}
	fmt.Fprintf(&b, "providers:\n  - {name: mock, kind: mock}\n  - {name: up, kind: openai, base_url: %q, models: [gpt-test]}\n", upURL)
	b.WriteString(extra)
	return b.String()
}

// writeFile replaces path's content at once (a rename), as editors and
// deploy tools do.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// reloadHarness is a server serving on loopback from a config file, with
// its signal channel and its reloads reported on reloaded.
type reloadHarness struct {
	s        *Server
	sigs     chan os.Signal
	reloaded chan error
	logs     *logtest.Buffer
	client   llmrelayv1.LLMServiceClient
	path     string
	addr     string // where it serves
}

func startReloadable(t *testing.T, path string) *reloadHarness {
	t.Helper()
	load := func() (*config.Config, error) {
		return config.Load(config.Flags{ConfigPath: path}, func(string) string { return "" })
	}
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	h := &reloadHarness{sigs: make(chan os.Signal), reloaded: make(chan error, 8), logs: &logtest.Buffer{}, path: path}
	h.s, err = New(cfg, WithLogger(slog.New(slog.NewTextHandler(h.logs, nil))), WithConfigSource(path, load))
	if err != nil {
		t.Fatal(err)
	}
	h.s.reloader.done = func(err error) { h.reloaded <- err }
	// The configured addresses (a test may configure a network address,
	// to see what the server does with one) are listened on as a free
	// loopback port: tests listen on loopback only, and a fixed port may
	// be taken.
	h.s.listenAt = func(setting, _ string) (net.Listener, error) { return listen(setting, "127.0.0.1:0") }
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = lis.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- h.s.serveOn(ctx, lis, h.sigs) }()
	t.Cleanup(func() {
		stop()
		<-ran
	})
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	h.client = llmrelayv1.NewLLMServiceClient(conn)
	return h
}

// waitReload waits for the next reload's result.
func (h *reloadHarness) waitReload(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.reloaded:
		return err
	case <-time.After(time.Minute): // a guard against hangs only
		t.Fatal("no reload happened")
		return nil
	}
}

// echo makes a mock/echo call with key and returns its status error.
func (h *reloadHarness) echo(t *testing.T, key string) error { return h.call(t, key, "mock/echo") }

// call makes a call to model with key and returns its status error.
func (h *reloadHarness) call(t *testing.T, key, model string) error {
	t.Helper()
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+key)
	stream, err := h.client.Generate(ctx, &llmrelayv1.GenerateRequest{
		Model: model, Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "ping"}},
	})
	if err != nil {
		return err
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// TestReloadOnSIGHUP is the done-when test of reload: with a stream in
// flight, SIGHUP with a new key added and an old one removed: the stream
// completes, the new key works, the removed key gets UNAUTHENTICATED (and
// an added provider serves); an
// invalid config on SIGHUP leaves everything as it was and is logged and
// counted; a setting that needs a restart is logged as such.
func TestReloadOnSIGHUP(t *testing.T) {
	upURL, release := gatedUpstream(t)
	defer release()
	path := filepath.Join(t.TempDir(), "llmrelay.yaml")
	writeFile(t, path, configYAML(upURL, map[string]string{"old": keyOld, "keep": keyKeep}, ""))
	h := startReloadable(t, path)

	// A stream of the key about to be removed, in flight: the upstream
	// holds its second chunk until release.
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+keyOld)
	inFlight, err := h.client.Generate(ctx, &llmrelayv1.GenerateRequest{
		Model: "up/gpt-test", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := inFlight.Recv(); err != nil || ev.GetDelta().GetText() != "Hello" {
		t.Fatalf("first event %v, %v; want the delta Hello", ev, err)
	}
	if err := h.echo(t, keyNew); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("the new key before the reload: %v, want UNAUTHENTICATED", err)
	}

	if err := h.call(t, keyKeep, "spare/echo"); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a provider not configured yet: %v, want INVALID_ARGUMENT", err)
	}
	// The new config: a key added, one removed, a provider added, and a
	// setting that needs a restart.
	writeFile(t, path, configYAML(upURL, map[string]string{"keep": keyKeep, "new": keyNew}, "  - {name: spare, kind: mock}\ndrain_delay: 5s\n"))
	h.sigs <- syscall.SIGHUP
	if err := h.waitReload(t); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if err := h.echo(t, keyNew); err != nil {
		t.Errorf("the new key after the reload: %v", err)
	}
	if err := h.echo(t, keyKeep); err != nil {
		t.Errorf("a kept key after the reload: %v", err)
	}
	if err := h.echo(t, keyOld); status.Code(err) != codes.Unauthenticated {
		t.Errorf("the removed key after the reload: %v, want UNAUTHENTICATED", err)
	}
	if err := h.call(t, keyKeep, "spare/echo"); err != nil {
		t.Errorf("the added provider after the reload: %v", err)
	}

	release()
	var final string
	for {
		ev, err := inFlight.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the stream in flight during the reload: %v", err)
		}
		if f := ev.GetFinal(); f != nil {
			final = f.GetMessage().GetContent()
		}
	}
	if final != "Hello world" {
		t.Errorf("the stream in flight ended with %q, want the whole reply", final)
	}

	// An invalid config is refused whole: the new key still works, the
	// removed one is still refused.
	writeFile(t, path, configYAML(upURL, map[string]string{"keep": keyKeep}, "retry:\n  max_attempts_limit: 99\n"))
	h.sigs <- syscall.SIGHUP
	if err := h.waitReload(t); err == nil {
		t.Fatal("an invalid config was applied")
	}
	if err := h.echo(t, keyNew); err != nil {
		t.Errorf("the new key after a refused reload: %v", err)
	}
	if err := h.echo(t, keyOld); status.Code(err) != codes.Unauthenticated {
		t.Errorf("the removed key after a refused reload: %v, want UNAUTHENTICATED", err)
	}
	logs := h.logs.String()
	for _, want := range []string{
		`msg="config reloaded: new calls use it`,
		// Both values: what the server still runs with, and what the
		// file asks for after a restart.
		`needs a restart; still using its running value" setting=drain_delay running=0s new=5s`,
		`msg="config reload refused: still serving with the previous config" trigger=SIGHUP`,
		`retry.max_attempts_limit`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %s:\n%s", want, logs)
		}
	}
	body := h.s.Metrics().Text()
	for _, want := range []string{
		metrics.NameConfigReloads + `{result="success"} 1`,
		metrics.NameConfigReloads + `{result="failure"} 1`,
		metrics.NameConfigLastReloadSuccessful + ` 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestConfigWarningsAreLogged: a config that is valid but holds a setting
// that does nothing (here a team's cost cap with no model priced, which
// never stops a call) runs, and the server says so at WARN, with the
// setting's path and line, at start and again at each reload whose
// config still has it; a reload without it logs none.
func TestConfigWarningsAreLogged(t *testing.T) {
	const team = "teams:\n  - name: research\n    budgets: [{window: day, max_cost_usd: 5}]\n"
	const warning = `level=WARN msg="config warning: a setting that does nothing as the rest of the config stands" ` +
		`setting=teams[0].budgets[0].max_cost_usd warning="pricing prices no model: calls to unpriced models cost nothing, so team \"research\"'s cap never stops one (max_tokens would)" config=`
	path := filepath.Join(t.TempDir(), "llmrelay.yaml")
	writeFile(t, path, configYAML("http://127.0.0.1:1/v1", map[string]string{"keep": keyKeep}, team))
	h := startReloadable(t, path)
	// The server logs its start before it serves a call.
	if err := h.echo(t, keyKeep); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(h.logs.String(), warning+path+":10\n"); n != 1 {
		t.Fatalf("the warning logged %d times at start, want once:\n%s", n, h.logs.String())
	}

	writeFile(t, path, configYAML("http://127.0.0.1:1/v1", map[string]string{"keep": keyKeep}, ""))
	h.sigs <- syscall.SIGHUP
	if err := h.waitReload(t); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if n := strings.Count(h.logs.String(), "config warning"); n != 1 {
		t.Fatalf("after a reload without the warning, %d warnings logged in all, want the one at start:\n%s", n, h.logs.String())
	}

	writeFile(t, path, configYAML("http://127.0.0.1:1/v1", map[string]string{"keep": keyKeep}, "drain_delay: 0s\n"+team))
	h.sigs <- syscall.SIGHUP
	if err := h.waitReload(t); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if n := strings.Count(h.logs.String(), warning+path+":11\n"); n != 1 {
		t.Fatalf("a reload with the warning logged it %d times, want once:\n%s", n, h.logs.String())
	}
}

// TestReloadKeepsAuthenticationOffLoopback: a server listening on a
// network address with keys, sent a config that has none (a file emptied,
// or written half, under reload.watch; keys moved elsewhere), would have
// served everyone without a key on that address: the reload checked the
// file's own listen (the loopback default) and then kept the running one,
// which needs a restart. It is refused, as starting with it is, and the
// keys keep working.
func TestReloadKeepsAuthenticationOffLoopback(t *testing.T) {
	for _, tc := range []struct{ name, listen string }{
		{"gRPC", "listen: 0.0.0.0:50051\nhttp_listen: \"\"\n"},
		{"HTTP", "http_listen: 0.0.0.0:8080\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "llmrelay.yaml")
			writeFile(t, path, tc.listen+configYAML("http://127.0.0.1:1/v1", map[string]string{"keep": keyKeep}, ""))
			h := startReloadable(t, path)
			for _, emptied := range []string{"", "metrics_listen: \"\"\n"} {
				writeFile(t, path, emptied)
				h.sigs <- syscall.SIGHUP
				if err := h.waitReload(t); err == nil || !strings.Contains(err.Error(), "auth.keys is empty") {
					t.Fatalf("reload of %q: %v, want it refused for serving a network address without keys", emptied, err)
				}
				if err := h.echo(t, ""); status.Code(err) != codes.Unauthenticated {
					t.Errorf("a call without a key after the reload of %q: %v, want UNAUTHENTICATED", emptied, err)
				}
				if err := h.echo(t, keyKeep); err != nil {
					t.Errorf("the key after the reload of %q: %v", emptied, err)
				}
			}
		})
	}
}

// TestReloadRefusalNamesTheRestartOnlySettings: a file that raises
// limits.max_recv_msg_bytes (restart only) and max_request_bytes with it
// is checked with the running max_recv_msg_bytes, and refused. The
// refusal said "max_request_bytes: ... is not within
// 0..max_recv_msg_bytes (8388608)", a value the file does not hold; it
// now says which settings kept their running values, and why.
func TestReloadRefusalNamesTheRestartOnlySettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llmrelay.yaml")
	writeFile(t, path, configYAML("http://127.0.0.1:1/v1", map[string]string{"keep": keyKeep}, ""))
	h := startReloadable(t, path)
	writeFile(t, path, "limits:\n  max_recv_msg_bytes: 41943040\n  max_request_bytes: 41943040\n"+
		configYAML("http://127.0.0.1:1/v1", map[string]string{"keep": keyKeep}, ""))
	h.sigs <- syscall.SIGHUP
	err := h.waitReload(t)
	if err == nil || !strings.Contains(err.Error(), "max_request_bytes") ||
		!strings.Contains(err.Error(), "checked with the running value of limits.max_recv_msg_bytes, which the file changes but only a restart applies") {
		t.Fatalf("reload: %v, want it refused, naming limits.max_recv_msg_bytes as needing a restart", err)
	}
	if err := h.echo(t, keyKeep); err != nil {
		t.Errorf("a call after the refused reload: %v", err)
	}
}

// TestReloadAppliesTheProviderOptionsPolicy: a reload that denies a
// provider option refuses it from the next call on (PERMISSION_DENIED
// PROVIDER_OPTION_NOT_ALLOWED), without a restart; one that lifts the
// deny lets it through again.
func TestReloadAppliesTheProviderOptionsPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llmrelay.yaml")
	open := "metrics_listen: \"\"\nproviders:\n  - {name: mock, kind: mock}\n"
	writeFile(t, path, open)
	h := startReloadable(t, path)
	withWords := func() error {
		stream, err := h.client.Generate(t.Context(), &llmrelayv1.GenerateRequest{
			Model: "mock/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "ping"}},
			ProviderOptions: &structpb.Struct{Fields: map[string]*structpb.Value{"words": structpb.NewNumberValue(3)}},
		})
		if err != nil {
			return err
		}
		for {
			if _, err := stream.Recv(); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}
	if err := withWords(); err != nil {
		t.Fatalf("before the reload: %v", err)
	}
	for i, tc := range []struct {
		config string
		want   codes.Code
	}{
		{"metrics_listen: \"\"\nproviders:\n  - {name: mock, kind: mock, provider_options: {deny: [words]}}\n", codes.PermissionDenied},
		{open, codes.OK},
	} {
		writeFile(t, path, tc.config)
		h.sigs <- syscall.SIGHUP
		if err := h.waitReload(t); err != nil {
			t.Fatalf("reload %d: %v", i+1, err)
		}
		if err := withWords(); status.Code(err) != tc.want {
			t.Errorf("after reload %d: %v, want %v", i+1, err, tc.want)
		}
	}
}

// TestReloadWatch: with reload.watch, a config file replaced in place or
// by a Kubernetes ConfigMap update (a symbolic link swapped) is reloaded
// without a signal.
func TestReloadWatch(t *testing.T) {
	upURL, release := gatedUpstream(t)
	defer release()
	const watch = "reload:\n  watch: true\n"
	tests := []struct {
		name   string
		layout func(t *testing.T, dir string) (path string, update func(content string))
	}{
		{"file replaced", func(t *testing.T, dir string) (string, func(string)) {
			path := filepath.Join(dir, "llmrelay.yaml")
			return path, func(c string) { writeFile(t, path, c) }
		}},
		{"ConfigMap symlink swap", func(t *testing.T, dir string) (string, func(string)) {
			// Kubernetes mounts config.yaml -> ..data/config.yaml, and
			// ..data -> ..<timestamp>; an update writes a new timestamped
			// directory and swaps ..data.
			n := 0
			update := func(c string) {
				n++
				ts := filepath.Join(dir, fmt.Sprintf("..v%d", n))
				if err := os.Mkdir(ts, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(ts, "config.yaml"), []byte(c), 0o600); err != nil {
					t.Fatal(err)
				}
				tmp := filepath.Join(dir, "..data_tmp")
				if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, "config.yaml")
			if err := os.Symlink(filepath.Join("..data", "config.yaml"), path); err != nil {
				t.Fatal(err)
			}
			return path, update
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, update := tt.layout(t, t.TempDir())
			update(configYAML(upURL, map[string]string{"keep": keyKeep}, watch))
			h := startReloadable(t, path)
			if err := h.echo(t, keyNew); status.Code(err) != codes.Unauthenticated {
				t.Fatalf("the new key before the change: %v, want UNAUTHENTICATED", err)
			}
			update(configYAML(upURL, map[string]string{"keep": keyKeep, "new": keyNew}, watch))
			if err := h.waitReload(t); err != nil {
				t.Fatalf("reload: %v", err)
			}
			if err := h.echo(t, keyNew); err != nil {
				t.Errorf("the new key after the change: %v", err)
			}
			if !strings.Contains(h.logs.String(), `trigger="config file changed"`) {
				t.Errorf("the log does not say the file change reloaded:\n%s", h.logs.String())
			}
		})
	}
}

// TestReloadKeepsAndAppliesTheAuthThrottle: the failed-authentication
// throttle is the server's, not the config's (issue 23 item 7): an address
// throttled before a reload of the same settings stays throttled, a
// reload that changes auth.throttle takes effect at once, and a valid key
// from that address passes throughout.
func TestReloadKeepsAndAppliesTheAuthThrottle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llmrelay.yaml")
	throttle := func(burst int) string {
		return fmt.Sprintf("  throttle: {burst: %d, per_second: 0.001, log_interval: 1m}\n", burst)
	}
	// configYAML's keys come last under auth: the throttle follows them.
	cfg := func(burst int) string {
		return strings.Replace(configYAML("http://127.0.0.1:1", map[string]string{"keep": keyKeep}, ""), "providers:", throttle(burst)+"providers:", 1)
	}
	writeFile(t, path, cfg(3))
	h := startReloadable(t, path)
	reason := func() string { return client.FromError(h.echo(t, "wrong-key")).Reason }
	reload := func(content string) {
		t.Helper()
		writeFile(t, path, content)
		h.sigs <- syscall.SIGHUP
		if err := h.waitReload(t); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if r := reason(); r != interceptors.ReasonAPIKeyUnknown {
			t.Fatalf("a failure within the burst: %s", r)
		}
	}
	if r := reason(); r != interceptors.ReasonAuthThrottled {
		t.Fatalf("after the burst: %s, want %s", r, interceptors.ReasonAuthThrottled)
	}

	reload(cfg(3))
	if r := reason(); r != interceptors.ReasonAuthThrottled {
		t.Errorf("after a reload of the same settings: %s, want the address still throttled", r)
	}
	if err := h.echo(t, keyKeep); err != nil {
		t.Errorf("a valid key from the throttled address: %v", err)
	}

	// Throttling off takes effect at once.
	reload(cfg(0))
	for range 5 {
		if r := reason(); r != interceptors.ReasonAPIKeyUnknown {
			t.Fatalf("with the throttle off: %s, want %s", r, interceptors.ReasonAPIKeyUnknown)
		}
	}
	// And so does a new burst: 2 failures, then throttled.
	reload(cfg(2))
	for range 2 {
		if r := reason(); r != interceptors.ReasonAPIKeyUnknown {
			t.Fatalf("within the new burst of 2: %s", r)
		}
	}
	if r := reason(); r != interceptors.ReasonAuthThrottled {
		t.Errorf("after the new burst of 2: %s, want throttled", r)
	}
}

// TestReloadWatchStopsAtShutdown: once a shutdown begins, a change to the
// config file is not reloaded, as a SIGHUP then is ignored: the watch
// stops, and says so. (It went on reloading through the drain delay and
// the grace period.)
func TestReloadWatchStopsAtShutdown(t *testing.T) {
	upURL, release := gatedUpstream(t)
	defer release()
	const extra = "reload:\n  watch: true\ndrain_delay: 1h\nshutdown_grace: 1h\n"
	path := filepath.Join(t.TempDir(), "llmrelay.yaml")
	writeFile(t, path, configYAML(upURL, map[string]string{"keep": keyKeep}, extra))
	h := startReloadable(t, path)
	if err := h.echo(t, keyKeep); err != nil {
		t.Fatalf("a call before the shutdown: %v", err)
	}

	h.sigs <- syscall.SIGTERM
	// The drain delay is an hour: a second signal stops the server at once
	// (before the harness's cleanup, which waits for it to stop).
	t.Cleanup(func() { h.sigs <- syscall.SIGINT })
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitNotServing(t, healthpb.NewHealthClient(conn))

	// In the drain delay: a new key in the file must not be applied.
	writeFile(t, path, configYAML(upURL, map[string]string{"keep": keyKeep, "new": keyNew}, extra))
	const stopped = "shutting down: no longer watching the config file"
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	guard := time.After(time.Minute) // a guard against hangs only
	for !strings.Contains(h.logs.String(), stopped) {
		select {
		case err := <-h.reloaded:
			t.Fatalf("the config file changed during the shutdown and was reloaded (error %v)", err)
		case <-tick.C:
		case <-guard:
			t.Fatalf("the log does not say %q:\n%s", stopped, h.logs.String())
		}
	}
	if err := h.echo(t, keyNew); status.Code(err) != codes.Unauthenticated {
		t.Errorf("the new key during the drain: %v, want UNAUTHENTICATED (the change was not applied)", err)
	}
	if err := h.echo(t, keyKeep); err != nil {
		t.Errorf("a call during the drain: %v", err)
	}
}
