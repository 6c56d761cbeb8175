package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
)

var healthCommand = &command{
	name:    "health",
	usage:   "health [flags]",
	summary: "ask a running server whether it is SERVING (a container health check)",
	about: `Asks a running llmrelay for its health over the gRPC health service, as a
container health check or an exec probe does, and prints SERVING. It reads
the server's config (--config, $LLMRELAY_CONFIG, $LLMRELAY_LISTEN) to find
the address, dialing loopback when the config listens on every interface,
and to know whether to use TLS (the certificate is not verified: the probe
sends nothing secret). A server started on the embedded default address
listens on a free port when the default is taken, and logs which; name it
with --addr.

Exit status: 0 SERVING; 1 anything else (NOT_SERVING while the server
drains, no answer, an invalid config); 2 the command line was wrong.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		var flags config.Flags
		fs.StringVar(&flags.ConfigPath, "config", "", "the server's YAML config `FILE` (also $"+config.EnvConfig+")")
		addr := fs.String("addr", "", "probe `HOST:PORT` (default: the config's listen)")
		service := fs.String("service", "", "the health `SERVICE` to check: \"\" the whole server, or llmrelay.v1.LLMService")
		timeout := durationFlag(fs, "timeout", 5*time.Second, "give up after `DURATION`")
		return func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("health", "health: unexpected argument %q (health takes only flags)", args[0])
			}
			if err := checkWait("health", *timeout); err != nil {
				return err
			}
			if *addr != "" {
				if problem := addrProblem(*addr); problem != "" {
					return usagef("health", "health: --addr %s", problem)
				}
			}
			cfg, err := config.Load(flags, env.Getenv)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(ctx, *timeout)
			defer cancel()
			if err := server.Probe(ctx, cfg, *addr, *service); err != nil {
				if *addr == "" && cfg.ListenIsDefault("listen") {
					// The server may not be there: on the default address,
					// taken, it listens on a free port (server's listen).
					return fmt.Errorf("%w\n  a server started on the default address listens on a free port when %s is taken, and logs it at start"+
						" (msg=\"listen: the default address is in use ...\" listen=HOST:PORT); probe that one with --addr HOST:PORT", err, cfg.Listen)
				}
				return err
			}
			fmt.Fprintln(env.Stdout, "SERVING")
			return nil
		}
	},
}
