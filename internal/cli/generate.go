package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

var generateCommand = &command{
	name:    "generate",
	usage:   "generate [flags] -m MODEL PROMPT...",
	summary: "stream a reply from a running server (the first call to try)",
	about: `Calls Generate on a running llmrelay with the Go client and prints the reply
as it streams, then the final event's usage on stderr. PROMPT is the user
message (its words joined by spaces; "-" or none reads it from stdin).

When an attempt fails and llmrelay retries, a notice goes to stderr; when
the retry starts the reply over (discard_partial), the notice says so and
the next attempt's text starts on a new line: the answer is what follows
the last notice. --json prints every event as JSON instead, one a line.

With --server-tools, llmrelay runs the server tools (llmrelay tools lists
them) the model calls and goes on with its next turn: each tool's progress
and result go to stderr as notices, and each turn's text starts on a new
line; a will_retry takes back only its own turn's text.

  llmrelay generate -m mock/echo "hello"

Ctrl-C cancels the call and says so on stderr; a resumable call runs on
for the server's resume.grace, and the line gives its request id and last
event, which Resume takes. A second Ctrl-C ends the command at once.

Exit status: 0 the call succeeded; 1 it failed (the error's code, ErrorInfo
reason and message on stderr); 2 the command line was wrong; 130 Ctrl-C.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var cf callFlags
		cf.define(fs)
		model := modelFlag(fs)
		system := fs.String("system", "", "a system `MESSAGE` before the prompt")
		timeout := durationFlag(fs, "timeout", 0, "the call's deadline, a `DURATION` such as 30s (default: the server's)")
		resumable := fs.Bool("resumable", false, "make the call resumable: it survives a dropped connection (docs/resume.md)")
		options := fs.String("provider-options", "", "the request's provider_options, a JSON `OBJECT` (for mock: '{\"faults\": [{\"drop_after\": 2}]}')")
		var serverTools listFlag
		fs.Var(&serverTools, "server-tools", "offer the model these server tools, a comma-separated `LIST` of names or patterns (everything/echo,everything/get-*; see llmrelay tools)")
		return func(ctx context.Context, args []string) error {
			if *model == "" {
				return usagef("generate", "generate: -m MODEL is required (llmrelay models lists them)")
			}
			if *timeout < 0 {
				return usagef("generate", "generate: --timeout %v is negative; give the call's deadline, e.g. 30s, or leave it out for the server's", *timeout)
			}
			prompt, err := readPrompt(args, env.Stdin)
			if err != nil {
				return err
			}
			c, addr, err := cf.dial("generate", env)
			if err != nil {
				return err
			}
			defer c.Close()
			req := &llmrelayv1.GenerateRequest{Model: *model}
			if *system != "" {
				req.Messages = append(req.Messages, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_SYSTEM, Content: *system})
			}
			req.Messages = append(req.Messages, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Content: prompt})
			if *resumable {
				req.Resumable = resumable
			}
			req.ServerTools = serverTools
			if *options != "" {
				req.ProviderOptions = &structpb.Struct{}
				if err := protojson.Unmarshal([]byte(*options), req.ProviderOptions); err != nil {
					return usagef("generate", "generate: --provider-options is not a JSON object: %v", err)
				}
			}
			// Ctrl-C cancels the call (the prompt is read by now: it
			// would not have ended a read of stdin).
			ctx, stop := onInterrupt(ctx)
			defer stop()
			callCtx := ctx
			if *timeout > 0 {
				var cancel context.CancelFunc
				callCtx, cancel = context.WithTimeout(ctx, *timeout)
				defer cancel()
			}
			stream, err := c.Generate(callCtx, req)
			if err == nil {
				if cf.json {
					err = printEvents(env.Stdout, stream)
				} else {
					err = printReply(env, stream)
				}
			}
			if err != nil && errors.Is(context.Cause(ctx), errInterrupted) {
				return interruptedCall(stream)
			}
			if err != nil {
				return callError(addr, err)
			}
			return nil
		}
	},
}

// readPrompt returns the prompt: the arguments joined by spaces, or stdin
// when there are none or the only one is "-".
func readPrompt(args []string, stdin io.Reader) (string, error) {
	if len(args) > 0 && !(len(args) == 1 && args[0] == "-") {
		return strings.Join(args, " "), nil
	}
	if stdin == nil {
		return "", usagef("generate", "generate: no PROMPT given")
	}
	b, err := io.ReadAll(bufio.NewReader(stdin))
	if err != nil {
		return "", fmt.Errorf("generate: reading the prompt from stdin: %w", err)
	}
	prompt := strings.TrimRight(string(b), "\n")
	if strings.TrimSpace(prompt) == "" {
		return "", usagef("generate", "generate: no PROMPT given (as arguments or on stdin)")
	}
	return prompt, nil
}

// printReply streams the reply's text to stdout, will_retry and resume
// notices and the final's usage to stderr.
func printReply(env Env, stream *client.Stream) error {
	out, errw := env.Stdout, env.Stderr
	lineOpen := false // stdout's current line holds streamed text
	turn := uint32(1) // with server tools, the model turn streaming
	endLine := func() {
		if lineOpen {
			fmt.Fprintln(out)
			lineOpen = false
		}
	}
	final, err := client.Collect(stream, &client.Hooks{
		OnDelta: func(d *llmrelayv1.Delta) {
			if d.GetText() != "" {
				fmt.Fprint(out, d.GetText())
				lineOpen = true
			}
		},
		OnWillRetry: func(w *llmrelayv1.WillRetry, discarded string) {
			endLine()
			cause := client.CauseOf(w)
			why := strings.TrimPrefix(w.GetReason().String(), "RETRY_REASON_")
			if cause != nil && cause.Reason != "" {
				why += " " + cause.Reason
			}
			msg := fmt.Sprintf("llmrelay: attempt %d failed (%s); attempt %d in %v", w.GetNextAttempt()-1, why, w.GetNextAttempt(), w.GetDelay().AsDuration().Round(time.Millisecond))
			if next := w.GetNextProvider() + "/" + w.GetNextModel(); next != "/" {
				msg += " on " + next
			}
			if w.GetDiscardPartial() && discarded != "" {
				over := "the reply starts over"
				if turn > 1 {
					over = fmt.Sprintf("turn %d's reply starts over", turn)
				}
				msg += fmt.Sprintf("; discard the %d characters above: %s", len([]rune(discarded)), over)
			}
			fmt.Fprintln(errw, msg)
		},
		OnTurn: func(n uint32) {
			endLine()
			turn = n
		},
		OnToolProgress: func(p *llmrelayv1.ToolProgress) {
			endLine()
			done := strconv.FormatFloat(p.GetProgress(), 'f', -1, 64)
			if p.Total != nil {
				done += "/" + strconv.FormatFloat(p.GetTotal(), 'f', -1, 64)
			}
			if p.GetMessage() != "" {
				done += " " + printable(p.GetMessage())
			}
			fmt.Fprintf(errw, "llmrelay: tool %s (%s) is running: %s\n", p.GetName(), printable(p.GetToolCallId()), done)
		},
		OnToolResult: func(r *llmrelayv1.ToolResult) {
			endLine()
			verb := "returned"
			if r.GetIsError() {
				verb = "failed"
			}
			var notes []string
			if r.GetAttempts() > 1 {
				notes = append(notes, fmt.Sprintf("after %d calls", r.GetAttempts()))
			}
			if r.GetTruncated() {
				notes = append(notes, "cut at the server's max_tool_result_bytes")
			}
			note := ""
			if len(notes) > 0 {
				note = " (" + strings.Join(notes, ", ") + ")"
			}
			fmt.Fprintf(errw, "llmrelay: tool %s (%s) %s%s: %s\n", r.GetName(), printable(r.GetToolCallId()), verb, note, preview(r.GetContent()))
		},
		OnResume: func(after uint64, cause error) {
			// The reply goes on where it stopped: stdout stays the reply
			// alone, and the notice starts its own line on stderr.
			nl := ""
			if lineOpen {
				nl = "\n"
			}
			fmt.Fprintf(errw, "%sllmrelay: the connection dropped (%v); resuming after event %d\n", nl, codeName(client.FromError(cause).Code), after)
		},
	})
	if err != nil {
		endLine()
		return err
	}
	if !lineOpen && final.GetMessage().GetContent() != "" {
		// Nothing streamed (say, a reply without deltas): the answer.
		fmt.Fprint(out, final.GetMessage().GetContent())
		lineOpen = true
	}
	endLine()
	u := final.GetUsage()
	turns := ""
	if final.GetTurns() > 1 {
		turns = fmt.Sprintf(", %d turns", final.GetTurns())
	}
	fmt.Fprintf(errw, "llmrelay: %s/%s, %s, %d input and %d output tokens, %d attempt%s%s\n",
		final.GetProvider(), final.GetModel(), strings.ToLower(strings.TrimPrefix(final.GetFinishReason().String(), "FINISH_REASON_")),
		u.GetInputTokens(), u.GetOutputTokens(), final.GetAttempts(), plural(final.GetAttempts()), turns)
	return nil
}

// preview is a tool result's content for a one-line notice: its first
// line, at most 100 characters, printable, with how much more there is.
func preview(content string) string {
	line, _, more := strings.Cut(content, "\n")
	line = printable(line)
	if r := []rune(line); len(r) > 100 {
		line, more = string(r[:100]), true
	}
	if !more {
		return line
	}
	return fmt.Sprintf("%s … (%d bytes in all)", line, len(content))
}

// printable is s for a notice line on the terminal: what an MCP server or
// a model wrote there, which could otherwise move the cursor, recolour or
// retitle the terminal, or end the line: a tab is a space, any other
// control character (escapes, carriage returns) U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r):
			return unicode.ReplacementChar
		}
		return r
	}, s)
}

// listFlag is a flag that takes a comma-separated list, and may be
// repeated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func plural(n uint32) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// printEvents prints each event as one line of JSON.
func printEvents(w io.Writer, stream *client.Stream) error {
	for ev, err := range stream.Events() {
		if err != nil {
			return err
		}
		b, err := protojson.Marshal(ev)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\n", b)
	}
	return nil
}
