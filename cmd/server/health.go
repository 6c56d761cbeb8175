package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
)

// health implements `llmrelay health`, a probe for container health checks:
// it asks the running server's gRPC health service and succeeds only when
// the answer is SERVING (server.Probe). It reads the same config as the
// server (--config or $LLMRELAY_CONFIG, $LLMRELAY_LISTEN) to find the
// address and whether to use TLS.
func health(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("llmrelay health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var flags config.Flags
	fs.StringVar(&flags.ConfigPath, "config", "", "the server's YAML config file (default $"+config.EnvConfig+")")
	addr := fs.String("addr", "", "host:port to probe (default: the config's listen, on loopback if it names no host)")
	service := fs.String("service", "", `the health service name to check ("" is the whole server)`)
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("health: unexpected argument %q", fs.Arg(0))
	}
	cfg, err := config.Load(flags, getenv)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := server.Probe(ctx, cfg, *addr, *service); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "SERVING")
	return nil
}
