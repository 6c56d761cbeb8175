package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// Stream a reply, showing each delta as it arrives, taking back what a
// failed attempt showed when llmrelay restarts, and keeping the final
// message as the answer.
func Example() {
	c, err := client.New(exampleServer(), client.WithInsecure()) // and client.WithAPIKey(key)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	stream, err := c.Generate(context.Background(), &llmrelayv1.GenerateRequest{
		Model:    "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hello brave new world"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	final, err := client.Collect(stream, &client.Hooks{
		OnDelta: func(d *llmrelayv1.Delta) { fmt.Printf("[%s]", d.GetText()) },
		OnWillRetry: func(w *llmrelayv1.WillRetry, discarded string) {
			fmt.Printf("\nattempt %d failed (%s); dropping %q\n", w.GetNextAttempt()-1, w.GetReason(), discarded)
		},
	})
	if err != nil {
		var e *client.Error
		if errors.As(err, &e) && e.HasRetryDelay {
			log.Printf("%s: call again in %s", e.Reason, e.RetryDelay)
		}
		log.Fatal(err)
	}
	fmt.Println()
	fmt.Println(final.GetMessage().GetContent())
	// Output:
	// [hello ][brave ][new ][world]
	// hello brave new world
}

// When an attempt fails mid-stream, llmrelay restarts the reply: the
// will_retry hook gets the text to take back, and the final message is the
// answer. (The mock provider's fault plan drops the first attempt here after
// two deltas.)
func Example_collect() {
	c, err := client.New(exampleServer(), client.WithInsecure())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	faults, _ := structpb.NewStruct(map[string]any{"faults": []any{map[string]any{"drop_after": 2}}})
	stream, err := c.Generate(context.Background(), &llmrelayv1.GenerateRequest{
		Model:           "mock/echo",
		Messages:        []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hello brave new world"}},
		Retry:           &llmrelayv1.RetryPolicy{InitialBackoff: durationpb.New(10 * time.Millisecond)},
		ProviderOptions: faults,
	})
	if err != nil {
		log.Fatal(err)
	}
	final, err := client.Collect(stream, &client.Hooks{
		OnDelta: func(d *llmrelayv1.Delta) { fmt.Printf("[%s]", d.GetText()) },
		OnWillRetry: func(w *llmrelayv1.WillRetry, discarded string) {
			fmt.Printf("\n%s: attempt %d next, dropping %q\n", client.CauseOf(w).Reason, w.GetNextAttempt(), discarded)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println()
	fmt.Println(final.GetMessage().GetContent())
	// Output:
	// [hello ][brave ]
	// PROVIDER_TRANSPORT_ERROR: attempt 2 next, dropping "hello brave "
	// [hello ][brave ][new ][world]
	// hello brave new world
}

// Range over a stream's events to handle each kind yourself.
func Example_events() {
	c, err := client.New(exampleServer(), client.WithInsecure())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	stream, err := c.Generate(context.Background(), &llmrelayv1.GenerateRequest{
		Model:    "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "one two"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	for ev, err := range stream.Events() {
		if err != nil {
			log.Fatal(err)
		}
		switch e := ev.GetEvent().(type) {
		case *llmrelayv1.GenerateEvent_Delta:
			fmt.Printf("%d delta %q\n", ev.GetSequence(), e.Delta.GetText())
		case *llmrelayv1.GenerateEvent_WillRetry:
			fmt.Printf("%d will_retry, discard_partial=%t\n", ev.GetSequence(), e.WillRetry.GetDiscardPartial())
		case *llmrelayv1.GenerateEvent_Final:
			fmt.Printf("%d final %q after %d attempt(s)\n", ev.GetSequence(), e.Final.GetMessage().GetContent(), e.Final.GetAttempts())
		}
	}
	// Output:
	// 1 delta "one "
	// 2 delta "two"
	// 3 final "one two" after 1 attempt(s)
}
