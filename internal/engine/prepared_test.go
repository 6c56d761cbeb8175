package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// kindPrepared is the kind of preparingProvider.
const kindPrepared = "enginetest-prepared"

func init() {
	provider.Register(kindPrepared, func(provider.Config) (provider.Provider, error) { return preparingProvider{}, nil })
}

// preparedLog records what preparingProvider was asked: "prepare <model>"
// for each PrepareRequest, "stream <model> <prepared>" for each Stream
// (the prepared wire request it was handed, "-" for none).
var preparedLog struct {
	sync.Mutex
	lines []string
}

func logPrepared(format string, args ...any) {
	preparedLog.Lock()
	defer preparedLog.Unlock()
	preparedLog.lines = append(preparedLog.lines, fmt.Sprintf(format, args...))
}

// preparingProvider builds its wire request as it checks a request (a
// provider.RequestPreparer): "wire <model>". Model "down" fails every
// attempt overloaded; any other answers "hello".
type preparingProvider struct{}

func (preparingProvider) ValidateRequest(req *provider.Request) error {
	_, err := preparingProvider{}.PrepareRequest(req)
	return err
}

func (preparingProvider) PrepareRequest(req *provider.Request) (any, error) {
	logPrepared("prepare %s", req.Model)
	return "wire " + req.Model, nil
}

func (preparingProvider) Stream(_ context.Context, req *provider.Request) (provider.Stream, error) {
	prepared := "-"
	if req.Prepared != nil {
		prepared = fmt.Sprint(req.Prepared)
	}
	logPrepared("stream %s %s", req.Model, prepared)
	if req.Model == "down" {
		return &scripted{err: &provider.Error{Kind: provider.KindHTTP, Class: provider.ClassOverloaded, Status: http.StatusServiceUnavailable, Type: "overloaded_error"}}, nil
	}
	return &scripted{events: []provider.Event{{Kind: provider.EventText, Text: "hello"}, {Kind: provider.EventFinish, FinishReason: provider.FinishStop}}}, nil
}

// TestFirstAttemptSendsThePreparedRequest: the wire request a provider
// built while checking the call's request is what the call's first attempt
// sends, so the request is not built twice; the attempts after it (a retry
// of the same target, a fallback to another) build their own, and a
// fallback target never gets the first target's.
func TestFirstAttemptSendsThePreparedRequest(t *testing.T) {
	eng := newEngine(t)
	req := &llmrelayv1.GenerateRequest{
		Model:          "prepared/down",
		FallbackModels: []string{"prepared/up"},
		Messages:       []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}},
		Retry:          &llmrelayv1.RetryPolicy{MaxAttempts: 3, InitialBackoff: durationpb.New(time.Millisecond)},
	}
	preparedLog.Lock()
	preparedLog.lines = nil
	preparedLog.Unlock()
	rec, err := generate(t, eng, engine.Caller{}, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if evs := render(rec.Events()); len(evs) == 0 || !strings.HasSuffix(evs[len(evs)-1], ` prepared "hello"`) {
		t.Errorf("the client saw %q, want the fallback's final last", evs)
	}
	preparedLog.Lock()
	lines := slices.Clone(preparedLog.lines)
	preparedLog.Unlock()
	want := []string{"prepare down", "prepare up", "stream down wire down"}
	if len(lines) < len(want)+1 || !slices.Equal(lines[:len(want)], want) {
		t.Fatalf("the provider was asked %q, want %q first, then the later attempts", lines, want)
	}
	for _, l := range lines[len(want):] {
		if l != "stream down -" && l != "stream up -" {
			t.Errorf("a later attempt was asked %q: only the first attempt may send the prepared request", l)
		}
	}
	if last := lines[len(lines)-1]; last != "stream up -" {
		t.Errorf("the last attempt was %q, want the fallback to up", last)
	}
}
