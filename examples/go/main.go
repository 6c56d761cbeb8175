// Command go streams a reply from llmrelay with the Go client, the way every
// llmrelay client should: it prints the text as it arrives, prints a line on
// each will_retry and takes back what a failed attempt showed when the
// server says discard_partial, and prints the final message, which is the
// answer.
//
//	cd examples/go && go run . [text...]
//
// It calls mock/echo on $LLMRELAY_ADDR (default 127.0.0.1:50051, plaintext),
// with $LLMRELAY_API_KEY if set, and a fault plan that drops the first
// attempt's connection after two deltas, so the server restarts the reply.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		var e *client.Error
		if errors.As(err, &e) && e.HasRetryDelay {
			fmt.Fprintf(os.Stderr, "the server suggests calling again in %s\n", e.RetryDelay)
		}
		os.Exit(1)
	}
}

func run() error {
	addr := envOr("LLMRELAY_ADDR", "127.0.0.1:50051")
	text := "the quick brown fox jumps over the lazy dog"
	if len(os.Args) > 1 {
		text = strings.Join(os.Args[1:], " ")
	}

	opts := []client.Option{client.WithInsecure()} // a server on loopback; drop this for TLS
	if key := os.Getenv("LLMRELAY_API_KEY"); key != "" {
		opts = append(opts, client.WithAPIKey(key))
	}
	c, err := client.New(addr, opts...)
	if err != nil {
		return err
	}
	defer c.Close()

	// The first attempt drops after two deltas; the second one runs normally.
	providerOptions, err := structpb.NewStruct(map[string]any{
		"faults": []any{map[string]any{"drop_after": 2}},
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := c.Generate(ctx, &llmrelayv1.GenerateRequest{
		Model:           "mock/echo",
		Messages:        []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: text}},
		Retry:           &llmrelayv1.RetryPolicy{InitialBackoff: durationpb.New(50 * time.Millisecond)},
		ProviderOptions: providerOptions,
	})
	if err != nil {
		return err
	}

	// lineOpen is true while the current line holds streamed text.
	lineOpen := false
	endLine := func() {
		if lineOpen {
			fmt.Println()
			lineOpen = false
		}
	}
	final, err := client.Collect(stream, &client.Hooks{
		OnDelta: func(d *llmrelayv1.Delta) {
			fmt.Print(d.GetText())
			lineOpen = lineOpen || d.GetText() != ""
		},
		OnWillRetry: func(w *llmrelayv1.WillRetry, discarded string) {
			// A terminal cannot unprint: end the line, say what is dropped,
			// and stream the next attempt on a fresh line.
			endLine()
			fmt.Printf("will_retry: next_attempt=%d delay_ms=%d reason=%s discard_partial=%t discarded=%q\n",
				w.GetNextAttempt(), w.GetDelay().AsDuration().Milliseconds(), w.GetReason(), w.GetDiscardPartial(), discarded)
		},
	})
	endLine()
	if err != nil {
		return err
	}
	fmt.Printf("final: %s\n", final.GetMessage().GetContent())
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
