// Command llmrelay runs the llmrelay gRPC server.
//
//	llmrelay [--config FILE] [--listen HOST:PORT]
//	llmrelay hash-key < key.txt   (prints the sha256 line for auth.keys)
//	llmrelay health [--config FILE] [--addr HOST:PORT]   (exits 0 when the server is SERVING)
//
// With no configuration it listens on 127.0.0.1:50051 with the built-in mock
// provider. The config file may also be named by $LLMRELAY_CONFIG, and the
// address by $LLMRELAY_LISTEN; flags win over both.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "llmrelay:", err)
		}
		os.Exit(2)
	}
}

// run dispatches the subcommand: serving is the default.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) > 0 {
		switch args[0] {
		case "serve":
			args = args[1:]
		case "version":
			fmt.Fprintln(stdout, version())
			return nil
		case "hash-key":
			return hashKey(args[1:], stdin, stdout, stderr)
		case "health":
			return health(ctx, args[1:], stdout, stderr, getenv)
		}
	}
	return serve(ctx, args, stderr, getenv)
}

func serve(ctx context.Context, args []string, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("llmrelay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var flags config.Flags
	fs.StringVar(&flags.ConfigPath, "config", "", "YAML config file (default $"+config.EnvConfig+"; none: the embedded default)")
	fs.StringVar(&flags.Listen, "listen", "", "gRPC listen address host:port (overrides the config's listen)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg, err := config.Load(flags, getenv)
	if err != nil {
		return err
	}
	logger := newLogger(cfg.Log, stderr)
	srv, err := server.New(cfg, server.WithLogger(logger))
	if err != nil {
		return err
	}
	return srv.RunWithSignals(ctx)
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToUpper(c.Level)))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
