package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/llmrelay/llmrelay/client"
)

// errInterrupted is the cause of a context that Ctrl-C (SIGINT) ended.
var errInterrupted = errors.New("interrupted")

// interruptedError is a command stopped by Ctrl-C: Run prints it, as any
// error, and exits ExitInterrupted.
type interruptedError struct{ what string }

func (e *interruptedError) Error() string { return "interrupted: " + e.what }

// onInterrupt returns ctx, ended with the cause errInterrupted by the first
// SIGINT, and the function that stops listening for it, to call when the
// command is done. The first SIGINT gives the signal its default effect
// back: a second Ctrl-C ends the process at once, whatever the command is
// waiting for.
func onInterrupt(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			signal.Stop(sigs)
			cancel(errInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// interruptedCall words a Generate call that Ctrl-C ended (stream is nil
// when it ended before the call started). The client cancelled it: an
// ordinary call ends there, on the server too; a resumable one runs on
// without a reader for the server's resume.grace, and the line says how
// to pick it up, as the notice of a dropped connection does.
func interruptedCall(stream *client.Stream) error {
	if stream == nil || stream.RequestID() == "" {
		return &interruptedError{"the call was cancelled"}
	}
	if !stream.Resumable() {
		return &interruptedError{fmt.Sprintf("the call was cancelled (request id %s)", stream.RequestID())}
	}
	return &interruptedError{fmt.Sprintf("the resumable call runs on for the server's resume.grace (60s by default): Resume picks it up with request id %s after event %d (docs/resume.md)",
		stream.RequestID(), stream.LastSequence())}
}
