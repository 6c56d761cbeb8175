package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/servertools"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
)

var checkConfigCommand = &command{
	name:    "check-config",
	usage:   "check-config [--strict] FILE",
	summary: "check a config file and print the configuration it gives",
	about: `Checks a config file as serve does before it listens (the file, then the
LLMRELAY_* environment variables; every provider and route is built, so
each variable that api_key_env names must be set, and each route target
must be a model its provider serves; the TLS certificates and keys, the
Redis store's password variables and TLS files and the MCP servers'
header variables are read, though nothing is dialled) and prints the
configuration serve would run with: every setting, defaults included,
secret-looking values masked.
FILE defaults to $LLMRELAY_CONFIG.

Each problem is named by its setting and the file's line:

  llmrelay.yaml:3: retry.max_backoff: "1 minute" is not a duration; use a Go duration such as 30s or 1m30s (units ms, s, m, h)

A setting that is valid but does nothing as the rest of the file stands
(a key's model pattern that matches no provider's model and no route, a
tool pattern that matches no MCP server, a cost cap on models without a
price) is a warning, printed on stderr the same way after "warning: ";
the config is still valid, as serve, which logs it, runs with it. With
--strict a warning fails the check as a problem does.

Exit status: 0 the config is valid, 1 it is not (or, with --strict, has
warnings), 2 the command line was wrong.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		strict := fs.Bool("strict", false, "fail (exit 1) when the config has warnings, as when it has problems")
		return func(_ context.Context, args []string) error {
			var file string
			switch len(args) {
			case 0:
				if file = env.Getenv(config.EnvConfig); file == "" {
					return usagef("check-config", "check-config: name the config FILE to check (or set $%s)", config.EnvConfig)
				}
			case 1:
				file = args[0]
			default:
				return usagef("check-config", "check-config takes one FILE, not %d arguments", len(args))
			}
			return checkConfig(file, env, *strict)
		}
	},
}

// checkConfig loads file as serve would and prints the result: the
// configuration on stdout, its warnings on stderr; strict fails on a
// warning.
func checkConfig(file string, env Env, strict bool) error {
	cfg, err := config.Load(config.Flags{ConfigPath: file}, env.Getenv)
	if err != nil {
		return err
	}
	// Building the providers finds what only the adapters check: a
	// base_url that is not a URL, an unset api_key_env; building the
	// routes, a target model its provider does not serve. Each problem is
	// placed on its line, as Load's are.
	set, err := provider.NewSet(cfg.Providers)
	if err != nil {
		return cfg.Locate(err)
	}
	if _, err := route.NewTable(cfg.Routes, set, route.Options{Policy: cfg.OutlierDetection}); err != nil {
		return cfg.Locate(err)
	}
	if err := readsBeyondTheFile(cfg, env.Getenv); err != nil {
		return err
	}
	warnings := cfg.Warnings()
	for _, w := range warnings {
		fmt.Fprintln(env.Stderr, "warning: "+w.Error())
	}
	if strict && len(warnings) > 0 {
		return fmt.Errorf("%s: %s, and --strict fails on warnings", file, countWarnings(len(warnings)))
	}
	r := cfg.Redacted()
	out, err := r.YAML()
	if err != nil {
		return err
	}
	writeHeader(env.Stdout, file, env.Getenv)
	if len(warnings) > 0 {
		fmt.Fprintf(env.Stdout, "# %s on stderr: settings that do nothing as the rest of the file stands.\n", countWarnings(len(warnings)))
	}
	_, err = env.Stdout.Write(out)
	return err
}

// readsBeyondTheFile reads what serve reads before it listens besides the
// file and the providers' keys, and fails as serve would: the servers'
// certificates and keys, the Redis store's password variables and TLS
// files, the MCP servers' header variables. Nothing is dialled.
func readsBeyondTheFile(cfg *config.Config, getenv func(string) string) error {
	for _, t := range []struct {
		name string
		tls  config.TLS
	}{{"tls", cfg.TLS}, {"http_tls", cfg.HTTPTLS}} {
		if !t.tls.Enabled() {
			continue
		}
		if _, err := t.tls.Certificate(t.name); err != nil {
			return err
		}
	}
	if cfg.State.Store == state.StoreRedis {
		if _, err := redisstore.ClientOptions(cfg.State.Redis, getenv); err != nil {
			return fmt.Errorf("state: %w", err)
		}
	}
	_, err := servertools.Prepare(cfg.Tools, servertools.Scopes{}, getenv)
	return err
}

func writeHeader(w io.Writer, file string, getenv func(string) string) {
	fmt.Fprintf(w, "# %s is valid. llmrelay would run with this configuration:\n", file)
	fmt.Fprintln(w, "# defaults, then the file, then the environment; secret-looking values masked.")
	for _, v := range []struct{ env, setting string }{
		{config.EnvListen, "listen"},
		{config.EnvHTTPListen, "http_listen"},
		{config.EnvMetricsListen, "metrics_listen"},
	} {
		if val := getenv(v.env); val != "" {
			fmt.Fprintf(w, "# $%s=%s sets %s.\n", v.env, val, v.setting)
		}
	}
}

func countWarnings(n int) string {
	if n == 1 {
		return "1 warning"
	}
	return fmt.Sprintf("%d warnings", n)
}
