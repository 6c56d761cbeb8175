// Package cli is llmrelay's command line: its commands (serve, the
// default; generate, embed, models and tools, which call a running server; hash-key;
// check-config; health; version; help), their flags and the
// LLMRELAY_* environment variables that mirror them, and how errors and
// exit codes are reported. cmd/llmrelay and cmd/server are one-line
// wrappers around Main.
//
// Every error is printed once, on stderr, prefixed "llmrelay: ". Help goes
// to stdout and exits 0.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Exit codes.
const (
	// ExitOK: the command did what was asked.
	ExitOK = 0
	// ExitFailed: the command failed (an invalid config, an address in
	// use, a server error).
	ExitFailed = 1
	// ExitUsage: the command line was wrong (an unknown command or flag, a
	// missing or stray argument).
	ExitUsage = 2
	// ExitInterrupted: Ctrl-C (SIGINT) stopped the command (generate's
	// call), 128 + SIGINT's number, as shells report a process it killed.
	ExitInterrupted = 130
)

// Env is what a command runs with. Main uses the process's; tests fill in
// their own.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads an environment variable.
	Getenv func(string) string
	// BuildInfo reports how the binary was built; nil means
	// debug.ReadBuildInfo.
	BuildInfo func() (*debug.BuildInfo, bool)
}

// Main runs llmrelay with the process's arguments and environment and
// returns the exit code for os.Exit.
func Main() int {
	return Run(context.Background(), os.Args[1:], Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
	})
}

// Run runs the command that args (without the program name) name, prints
// its error, if any, once on env.Stderr, and returns the exit code. The
// server stops when ctx ends or on SIGINT or SIGTERM (server.RunWithSignals).
func Run(ctx context.Context, args []string, env Env) int {
	err := run(ctx, args, env)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(env.Stderr, "llmrelay: "+err.Error())
	var ie *interruptedError
	if errors.As(err, &ie) {
		return ExitInterrupted
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(env.Stderr, "Run 'llmrelay help%s' for usage.\n", ue.cmdSuffix())
		return ExitUsage
	}
	return ExitFailed
}

// usageError is a command line that is wrong.
type usageError struct {
	cmd string // the command whose usage to point at; "" for the program's
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func (e *usageError) cmdSuffix() string {
	if e.cmd == "" || e.cmd == "serve" {
		return ""
	}
	return " " + e.cmd
}

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, err: fmt.Errorf(format, args...)}
}

// command is one of llmrelay's commands.
type command struct {
	name string
	// usage is the command's synopsis after "llmrelay ", summary what it
	// does in a few words (for the program's help), about the paragraphs
	// of its own help.
	usage, summary, about string
	// setup defines the command's flags on fs and returns the function that
	// runs it with the arguments that are not flags.
	setup func(fs *flag.FlagSet, env Env) func(ctx context.Context, args []string) error
	// subcommands, when there are any, take the place of setup: the first
	// argument names the one to run ("keys create"), each with its own
	// flags. A subcommand's name is "keys create".
	subcommands []*command
}

// sub returns the subcommand named name ("create" of "keys").
func (c *command) sub(name string) *command {
	for _, s := range c.subcommands {
		if s.name == c.name+" "+name {
			return s
		}
	}
	return nil
}

func (c *command) subNames() string {
	names := make([]string, len(c.subcommands))
	for i, s := range c.subcommands {
		names[i] = strings.TrimPrefix(s.name, c.name+" ")
	}
	return strings.Join(names, ", ")
}

// commands lists the commands in the order help shows them.
var commands = []*command{serveCommand, generateCommand, embedCommand, modelsCommand, toolsCommand, hashKeyCommand, checkConfigCommand, healthCommand, keysCommand, versionCommand}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

func run(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		return serveCommand.run(ctx, nil, env)
	}
	switch first := args[0]; {
	case isHelp(first):
		if first == "help" && len(args) > 1 {
			c := lookup(args[1])
			if c == nil {
				return usagef("", "help: unknown command %q; the commands are %s", args[1], commandNames())
			}
			if len(args) > 2 && len(c.subcommands) > 0 {
				s := c.sub(args[2])
				if s == nil {
					return usagef(c.name, "help: %s has no command %q; its commands are %s", c.name, args[2], c.subNames())
				}
				return s.help(env)
			}
			return c.help(env)
		}
		return programHelp(env)
	case first == "--version" || first == "-version":
		return versionCommand.run(ctx, args[1:], env)
	case strings.HasPrefix(first, "-"):
		return serveCommand.run(ctx, args, env) // flags of the default command
	default:
		c := lookup(first)
		if c == nil {
			return usagef("", "unknown command %q; the commands are %s", first, commandNames())
		}
		return c.run(ctx, args[1:], env)
	}
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// flags returns the command's flag set, and the function that runs it.
func (c *command) flags(env Env) (*flag.FlagSet, func(context.Context, []string) error) {
	fs := flag.NewFlagSet("llmrelay "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, help printed by help
	fs.Usage = func() {}
	return fs, c.setup(fs, env)
}

// run parses the command's flags, which may come before and after its
// other arguments ("--" ends them), and runs it. -h and --help print its
// help.
func (c *command) run(ctx context.Context, args []string, env Env) error {
	if len(c.subcommands) > 0 {
		if len(args) == 0 || isHelp(args[0]) {
			return c.help(env)
		}
		s := c.sub(args[0])
		if s == nil {
			return usagef(c.name, "%s: unknown command %q; its commands are %s", c.name, args[0], c.subNames())
		}
		return s.run(ctx, args[1:], env)
	}
	fs, runFn := c.flags(env)
	var rest []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			return c.help(env)
		}
		if err != nil {
			return &usageError{cmd: c.name, err: fmt.Errorf("%s: %s", c.name, flagProblem(fs, err))}
		}
		remaining := fs.Args()
		consumed := len(args) - len(remaining)
		if len(remaining) == 0 || (consumed > 0 && args[consumed-1] == "--") {
			rest = append(rest, remaining...)
			break
		}
		rest = append(rest, remaining[0])
		args = remaining[1:]
	}
	return runFn(ctx, rest)
}

// flagProblem rewords the flag package's errors, which have no type of
// their own, in the --flag form help shows.
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
		if len(names) == 0 {
			return fmt.Sprintf("unknown flag --%s; it takes no flags", strings.TrimLeft(name, "-"))
		}
		return fmt.Sprintf("unknown flag --%s; the flags are %s", strings.TrimLeft(name, "-"), strings.Join(names, ", "))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("flag --%s needs a value", name)
	}
	// "invalid value %q for flag -%s: %v": the value's own problem, which
	// names the value, after the flag; a boolean flag's is "invalid
	// boolean value %q for -%s: %v".
	rest, ok := strings.CutPrefix(msg, "invalid value ")
	sep := " for flag -"
	if !ok {
		rest, ok = strings.CutPrefix(msg, "invalid boolean value ")
		sep = " for -"
	}
	if ok {
		if value, after, ok := strings.Cut(rest, sep); ok {
			if name, problem, ok := strings.Cut(after, ": "); ok {
				if what := numberProblem(fs, name, value, problem); what != "" {
					return fmt.Sprintf("--%s %s %s", name, value, what)
				}
				return fmt.Sprintf("--%s %s", name, problem)
			}
		}
	}
	return msg
}

// numberProblem words the flag package's "parse error" and "value out of
// range" for a number or boolean flag given quoted (the value as the
// flag package quoted it), which name neither the value nor what the
// flag takes; "" for any other problem.
func numberProblem(fs *flag.FlagSet, name, quoted, problem string) string {
	if problem != "parse error" && problem != "value out of range" {
		return ""
	}
	f := fs.Lookup(name)
	if f == nil {
		return ""
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return ""
	}
	if problem == "value out of range" {
		return "is out of range"
	}
	switch g.Get().(type) {
	case bool:
		return "is not true or false"
	case int, int64:
		return "is not a whole number"
	case uint, uint64:
		value, _ := strconv.Unquote(quoted)
		if n, err := strconv.ParseInt(value, 10, 64); err == nil && n < 0 {
			return "is negative"
		}
		return "is not a whole number"
	case float64:
		return "is not a number"
	}
	return ""
}

// help prints the command's help on stdout.
func (c *command) help(env Env) error {
	w := env.Stdout
	fmt.Fprintf(w, "Usage: llmrelay %s\n\n%s\n", c.usage, c.about)
	if len(c.subcommands) > 0 {
		fmt.Fprintln(w, "\nCommands:")
		tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
		for _, s := range c.subcommands {
			fmt.Fprintf(tw, "  llmrelay %s\t%s\n", s.usage, s.summary)
		}
		tw.Flush()
		fmt.Fprintf(w, "\n'llmrelay help %s COMMAND' shows a command's flags.\n", c.name)
		return nil
	}
	fs, _ := c.flags(env)
	if hasFlags(fs) {
		fmt.Fprintln(w, "\nFlags:")
		printFlags(w, fs)
	}
	return nil
}

// programHelp prints llmrelay's help on stdout.
func programHelp(env Env) error {
	w := env.Stdout
	fmt.Fprint(w, "llmrelay is a gRPC gateway between applications and LLM providers.\n\nUsage:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  llmrelay %s\t%s\n", c.usage, c.summary)
	}
	fmt.Fprintf(tw, "  llmrelay help [COMMAND]\t%s\n", "print this help, or a command's")
	tw.Flush()
	fs, _ := serveCommand.flags(env)
	fmt.Fprintln(w, "\nFlags of serve:")
	printFlags(w, fs)
	fmt.Fprint(w, `
With no configuration, llmrelay serves gRPC on 127.0.0.1:50051 and the
OpenAI- and Anthropic-compatible HTTP endpoints on 127.0.0.1:8080, with
the built-in mock provider. Settings apply in this order: defaults, the
config file, LLMRELAY_* environment variables, flags.

Exit status: 0 done, 1 failed, 2 the command line was wrong, 130 Ctrl-C (generate).
Documentation: README.md and docs/ in the llmrelay repository.
`)
	return nil
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// printFlags lists fs's flags, one a line: "--name VALUE  usage", or
// "-m VALUE" for a one-letter flag, as the usage lines write it. VALUE is
// the back-quoted word in the usage (flag.UnquoteUsage).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			name = " " + name
		}
		dashes := "--"
		if len(f.Name) == 1 {
			dashes = "-"
		}
		fmt.Fprintf(tw, "  %s%s%s\t%s\n", dashes, f.Name, name, usage)
	})
	tw.Flush()
}
