package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// TestFinishLineNamesTheServingTarget: a call on the route search, whose
// first target (down) answers 503 to every attempt, is served by its
// next (mock/echo) after a fallback; the "finished call" line of every
// door names that target, provider=mock served_model=echo, beside the
// model and route the client named, after its 4 attempts. A call that
// failed names none.
func TestFinishLineNamesTheServingTarget(t *testing.T) {
	for _, tt := range []struct {
		name string
		call func(t *testing.T, in *servertest.Instance) (requestID string)
		want map[string]string
	}{
		{"Generate", func(t *testing.T, in *servertest.Instance) string {
			id := uuid.NewString()
			req := echoRequest("hello")
			req.Model, req.RequestId = "search", id
			if _, err := generate(t.Context(), in, "app-secret", req); err != nil {
				t.Fatal(err)
			}
			return id
		}, map[string]string{"model": "search", "route": "search", "provider": "mock", "served_model": "echo", "grpc.method": "Generate", "attempts": "4"}},
		{"Embed", func(t *testing.T, in *servertest.Instance) string {
			id := uuid.NewString()
			req := &llmrelayv1.EmbedRequest{Model: "search", Inputs: []string{"hello"}, RequestId: id}
			if _, err := in.Client.Embed(bearer(t.Context(), "indexer-secret"), req); err != nil {
				t.Fatal(err)
			}
			return id
		}, map[string]string{"model": "search", "route": "search", "provider": "mock", "served_model": "echo", "grpc.method": "Embed", "attempts": "4"}},
		{"a failed Embed names no target", func(t *testing.T, in *servertest.Instance) string {
			id := uuid.NewString()
			req := &llmrelayv1.EmbedRequest{Model: "down/echo", Inputs: []string{"hello"}, RequestId: id}
			if _, err := in.Client.Embed(bearer(t.Context(), "indexer-secret"), req); err == nil {
				t.Fatal("the Embed on down succeeded")
			}
			return id
		}, map[string]string{"model": "down/echo", "provider": "", "served_model": "", "grpc.code": "Unavailable"}},
		{"chat completions", func(t *testing.T, in *servertest.Instance) string {
			return postJSON(t, in.HTTP(t), "/v1/chat/completions", "app-secret", `{"model":"search","messages":[{"role":"user","content":"hello"}]}`)
		}, map[string]string{"model": "search", "route": "search", "provider": "mock", "served_model": "echo", "interface": "openai", "attempts": "4"}},
		{"embeddings", func(t *testing.T, in *servertest.Instance) string {
			return postJSON(t, in.HTTP(t), "/v1/embeddings", "indexer-secret", `{"model":"search","input":"hello"}`)
		}, map[string]string{"model": "search", "route": "search", "provider": "mock", "served_model": "echo", "interface": "openai", "attempts": "4"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A server of its own: the route's first target is not
			// ejected by an earlier call's failures.
			cfg, _ := embedConfig(t)
			var logs servertest.LockedBuffer
			in := servertest.Start(t, cfg, server.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
			id := tt.call(t, in)
			line := finishedLine(t, &logs, id)
			for k, want := range tt.want {
				got := ""
				if v, ok := line[k]; ok {
					got = fmt.Sprint(v)
				}
				if got != want {
					t.Errorf("%s=%q, want %q; the line: %v", k, got, want, line)
				}
			}
		})
	}
}

// finishedLine returns the "finished call" record of the call with
// requestID, in JSON logs, waiting for it to be written.
func finishedLine(t *testing.T, logs *servertest.LockedBuffer, requestID string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == "finished call" && rec["request_id"] == requestID {
				return rec
			}
		}
	}
	t.Fatalf("no finished call line of %s:\n%s", requestID, logs.String())
	return nil
}

// postJSON posts body to the HTTP doors at base with key, fails the test
// unless the answer is 200, and returns the call's request id.
func postJSON(t *testing.T, base, path, key, body string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	return resp.Header.Get("X-Request-Id")
}
