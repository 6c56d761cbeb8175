package engine

import (
	"context"
	"errors"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/state/memory"
)

// TestStreamLimitRefusalSaysWhatIsOpen: the refusal of a Generate at its
// key's max_concurrent_streams says how many streams the key has open and
// what its limit is, in that order and in good English, also when the
// limit was lowered below the streams open.
func TestStreamLimitRefusalSaysWhatIsOpen(t *testing.T) {
	tests := []struct {
		name        string
		open, limit int
		want        string
	}{
		{"one open, a limit of one", 1, 1, "API key k already has 1 stream open, and its limit is 1"},
		{"two open, a limit of two", 2, 2, "API key k already has 2 streams open, and its limit is 2"},
		{"two open, the limit lowered to one", 2, 1, "API key k already has 2 streams open, and its limit is 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kl := NewKeyLimits(memory.New(), nil)
			admit := func(limit int) (func(), error) {
				id := &auth.Identity{Name: "k", Limits: auth.Limits{MaxConcurrentStreams: limit}}
				return kl.Admit(auth.NewContext(context.Background(), id), llmrelayv1.LLMService_Generate_FullMethodName)
			}
			for range tt.open {
				release, err := admit(tt.open)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(release)
			}
			_, err := admit(tt.limit)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Reason != ReasonTooManyStreams || ae.Message != tt.want {
				t.Fatalf("the refusal: %v, want TOO_MANY_STREAMS saying %q", err, tt.want)
			}
		})
	}
}

// TestResumeLimitRefusalSaysItsLimit: a key at its limit of Resume
// streams is told the limit, in the right number.
func TestResumeLimitRefusalSaysItsLimit(t *testing.T) {
	for limit, want := range map[int]string{1: "API key k is at its limit of 1 Resume stream open at once", 2: "API key k is at its limit of 2 Resume streams open at once"} {
		store := memory.New()
		kl := NewKeyLimits(store, nil).WithResumeReaders(store, 0)
		ctx := auth.NewContext(context.Background(), &auth.Identity{Name: "k", Limits: auth.Limits{MaxConcurrentStreams: limit}})
		for range limit {
			release, err := kl.Admit(ctx, llmrelayv1.LLMService_Resume_FullMethodName)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(release)
		}
		_, err := kl.Admit(ctx, llmrelayv1.LLMService_Resume_FullMethodName)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Reason != ReasonTooManyStreams || ae.Message != want {
			t.Errorf("limit %d: the refusal %v, want TOO_MANY_STREAMS saying %q", limit, err, want)
		}
	}
}
