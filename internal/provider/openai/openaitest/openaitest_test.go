package openaitest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/anthropic"
	"github.com/llmrelay/llmrelay/internal/provider/gemini"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/provider/openai"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

func TestMain(m *testing.M) {
	leaktest.VerifyTestMain(m, goleak.IgnoreAnyFunction(offstack.WorkerFunction))
}

func adapter(t *testing.T, s *openaitest.Server) provider.Provider {
	t.Helper()
	p, err := openai.New(provider.Config{Name: "fake", Kind: openai.Kind, BaseURL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(httpx.CloseIdleConnections)
	return p
}

func TestFaultsPerRequest(t *testing.T) {
	s := openaitest.Start(t, openaitest.Options{Chunks: 5, Faults: []openaitest.Fault{
		{Kind: openaitest.Status, Status: 429, Header: map[string]string{"retry-after-ms": "700"}, ErrorType: "rate_limit_exceeded"},
		{Kind: openaitest.Drop, After: 2},
		{Kind: openaitest.InStreamError, After: 1},
		{Kind: openaitest.InStreamError, After: 5},
	}})
	p := adapter(t, s)
	req := pt.NewRequest("fake")
	ctx := context.Background()

	r := pt.Collect(ctx, p, req)
	if pe := pt.ProviderError(r.Err); pe == nil || pe.Kind != provider.KindHTTP || pe.Status != 429 || pe.RetryAfter != 700*time.Millisecond || pe.Type != "rate_limit_exceeded" {
		t.Errorf("request 0: %v, want HTTP 429 with a 700ms hint", r.Err)
	}
	r = pt.Collect(ctx, p, req)
	if pe := pt.ProviderError(r.Err); r.Text != openaitest.Text(2) || pe == nil || pe.Kind != provider.KindTransport {
		t.Errorf("request 1: %q, %v; want 2 chunks, then a dropped connection", r.Text, r.Err)
	}
	r = pt.Collect(ctx, p, req)
	if pe := pt.ProviderError(r.Err); r.Text != openaitest.Text(1) || pe == nil || pe.Kind != provider.KindInStream || pe.Status != 500 {
		t.Errorf("request 2: %q, %v; want 1 chunk, then an in-stream server error", r.Text, r.Err)
	}
	r = pt.Collect(ctx, p, req)
	if pe := pt.ProviderError(r.Err); r.Text != openaitest.Text(5) || pe == nil || pe.Kind != provider.KindInStream {
		t.Errorf("request 3: %q, %v; want every chunk, then an in-stream error", r.Text, r.Err)
	}
	r = pt.Collect(ctx, p, req)
	if r.Err != nil || r.Text != openaitest.Text(5) || r.Finish != provider.FinishStop || r.Usage.OutputTokens != 5 {
		t.Errorf("request 4 (past the faults): %q finish %d usage %+v err %v; want a whole stream", r.Text, r.Finish, r.Usage, r.Err)
	}
	if n := s.Requests(); n != 5 {
		t.Errorf("Requests = %d, want 5", n)
	}
}

func TestOpenStreamsFollowTheClient(t *testing.T) {
	s := openaitest.Start(t, openaitest.Options{Chunks: 3, Faults: []openaitest.Fault{{Kind: openaitest.Stall, After: 1}}})
	p := adapter(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	st, err := p.Stream(ctx, pt.NewRequest("fake"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for {
		ev, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Text != "" {
			break
		}
	}
	if n := s.OpenStreams(); n != 1 {
		t.Errorf("OpenStreams during a stall = %d, want 1", n)
	}
	cancel()
	if _, err := st.Recv(); !errors.Is(err, context.Canceled) {
		t.Errorf("Recv after cancel = %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.OpenStreams() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := s.OpenStreams(); n != 0 {
		t.Errorf("OpenStreams after the client went away = %d, want 0", n)
	}
}

func TestRejectsWhatIsNotAStreamedChatCompletion(t *testing.T) {
	s := openaitest.Start(t, openaitest.Options{})
	p, err := openai.New(provider.Config{Kind: openai.Kind, BaseURL: s.URL() + "/wrong"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(httpx.CloseIdleConnections)
	r := pt.Collect(context.Background(), p, pt.NewRequest("fake"))
	if pe := pt.ProviderError(r.Err); pe == nil || pe.Status != 404 {
		t.Errorf("error = %v, want 404", r.Err)
	}
	if s.Requests() != 0 {
		t.Errorf("Requests = %d, want 0: only chat completions count", s.Requests())
	}
}

func TestFaultForPicksEachRequestsFault(t *testing.T) {
	var bodies []string
	var mu sync.Mutex
	s := openaitest.Start(t, openaitest.Options{Chunks: 4, FaultFor: func(n int, body []byte) openaitest.Fault {
		mu.Lock()
		bodies = append(bodies, string(body))
		mu.Unlock()
		switch n {
		case 0:
			return openaitest.Fault{Kind: openaitest.Malformed, After: 2}
		case 1:
			return openaitest.Fault{Kind: openaitest.InStreamError, After: 1, ErrorType: "overloaded_error", FirstByteDelay: 20 * time.Millisecond}
		}
		return openaitest.Fault{FirstByteDelay: time.Millisecond}
	}})
	p := adapter(t, s)
	ctx := context.Background()

	r := pt.Collect(ctx, p, pt.NewRequest("fake"))
	if pe := pt.ProviderError(r.Err); r.Text != openaitest.Text(2) || pe == nil || pe.Kind != provider.KindProtocol || !errors.Is(r.Err, httpx.ErrMalformed) {
		t.Errorf("request 0: %q, %v; want 2 chunks, then a malformed stream", r.Text, r.Err)
	}
	r = pt.Collect(ctx, p, pt.NewRequest("fake"))
	if pe := pt.ProviderError(r.Err); r.Text != openaitest.Text(1) || pe == nil || pe.Kind != provider.KindInStream || pe.Status != 503 || pe.Type != "overloaded_error" {
		t.Errorf("request 1: %q, %v; want 1 chunk, then an in-stream overloaded error", r.Text, r.Err)
	}
	r = pt.Collect(ctx, p, pt.NewRequest("fake"))
	if r.Err != nil || r.Text != openaitest.Text(4) {
		t.Errorf("request 2: %q, %v; want a whole, if late, stream", r.Text, r.Err)
	}
	if len(bodies) != 3 || !strings.Contains(bodies[0], `"stream":true`) {
		t.Errorf("FaultFor saw %d bodies (%q), want 3 chat completion requests", len(bodies), bodies)
	}
}

func TestSlowFirstByteEndsWithTheClient(t *testing.T) {
	s := openaitest.Start(t, openaitest.Options{Faults: []openaitest.Fault{{FirstByteDelay: time.Hour}}})
	p := adapter(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := p.Stream(ctx, pt.NewRequest("fake"))
		errc <- err
	}()
	for s.OpenStreams() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Stream = %v, want context.Canceled", err)
	}
}

// TestEveryFormatStreamsTheSameReply: the adapter of each format reads the
// Server's stream as the whole text, finished, with its usage: what the
// benchmark holds through each adapter is a valid reply in that format.
func TestEveryFormatStreamsTheSameReply(t *testing.T) {
	for _, tc := range []struct {
		format string
		build  provider.Factory
	}{
		{openaitest.FormatOpenAI, openai.New},
		{openaitest.FormatAnthropic, anthropic.New},
		{openaitest.FormatGemini, gemini.New},
	} {
		t.Run(tc.format, func(t *testing.T) {
			s := openaitest.Start(t, openaitest.Options{Chunks: 7, Format: tc.format})
			p := pt.HTTPProvider(t, tc.build, provider.Config{Name: "fake", Kind: tc.format, BaseURL: s.URL(), APIKeyEnv: "OPENAITEST_FAKE_KEY"}, "key")
			r := pt.Collect(context.Background(), p, pt.NewRequest("fake"))
			if r.Err != nil || r.Text != openaitest.Text(7) || r.Finish != provider.FinishStop || r.Usage.OutputTokens != 7 {
				t.Errorf("%q finish %d usage %+v err %v; want the whole text, finished, 7 output tokens", r.Text, r.Finish, r.Usage, r.Err)
			}
		})
	}
}
