// Command resume streams a resumable reply from llmrelay with the Go client:
// when the connection drops in the middle of the reply, the client picks the
// call up again after the last event it received, and the reply goes on
// where it stopped, neither repeated nor cut. It prints the text as it
// arrives, a line when it resumes, and the final message.
//
//	cd examples/go && go run ./resume [text...]
//
// It calls mock/echo on $LLMRELAY_ADDR (default 127.0.0.1:50051, plaintext),
// with $LLMRELAY_API_KEY if set, one word every 25ms. Put something that
// drops connections between them to see it resume (scripts/test-clients.sh
// uses a proxy that cuts the first connection).
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

const defaultText = "a resumable call keeps running on the server when the connection drops and the client picks it up again " +
	"after the last event it received so that nothing is lost and nothing is repeated"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := os.Getenv("LLMRELAY_ADDR")
	if addr == "" {
		addr = "127.0.0.1:50051"
	}
	text := defaultText
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
	providerOptions, err := structpb.NewStruct(map[string]any{"chunk_delay_ms": 25})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := c.Generate(ctx, &llmrelayv1.GenerateRequest{
		Model:           "mock/echo",
		Messages:        []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: text}},
		Resumable:       proto.Bool(true), // the client gives the call a request_id
		ProviderOptions: providerOptions,
	})
	if err != nil {
		return err
	}
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
		OnResume: func(after uint64, _ error) {
			// Nothing to take back: the reply goes on where it stopped.
			endLine()
			fmt.Printf("resumed: after_sequence=%d\n", after)
		},
	})
	endLine()
	if err != nil {
		return err
	}
	fmt.Printf("final: %s\n", final.GetMessage().GetContent())
	return nil
}
