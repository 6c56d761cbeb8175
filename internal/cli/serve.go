package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"syscall"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/telemetry"
)

var serveCommand = &command{
	name:    "serve",
	usage:   "[serve] [flags]",
	summary: "run the server (the default command)",
	about: `Runs the server until SIGINT or SIGTERM, then shuts down gracefully: health
turns NOT_SERVING while new calls are still served for drain_delay (so load
balancers stop sending them), then calls in flight may finish within
shutdown_grace, and the rest end with UNAVAILABLE. A second SIGINT or
SIGTERM stops it at once (exit status 1).

SIGHUP reloads the config (the file, LLMRELAY_* and the flags, as at
start): new calls get the new keys, providers and limits, calls in flight
finish on the old ones; an invalid config is refused and the old one
stays. reload.watch: true reloads when the config file changes. Listen
addresses, TLS on or off, keepalive, the state store and the shutdown
timings need a restart (docs/deployment.md).

Traces are off unless the standard OTEL_* variables ask for them
(OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL grpc or
http/protobuf, OTEL_TRACES_EXPORTER; docs/observability.md).

With no configuration, llmrelay serves gRPC on 127.0.0.1:50051 and the
OpenAI- and Anthropic-compatible HTTP endpoints on 127.0.0.1:8080, with
the built-in mock provider. Settings apply in this order: defaults, the
config file, LLMRELAY_* environment variables, flags.`,
	setup: func(fs *flag.FlagSet, env Env) func(context.Context, []string) error {
		def := config.Default()
		var flags config.Flags
		fs.StringVar(&flags.ConfigPath, "config", "",
			"read the YAML config from `FILE` (also $"+config.EnvConfig+"); without one, the embedded default")
		fs.StringVar(&flags.Listen, "listen", "",
			"serve gRPC on `HOST:PORT` (also $"+config.EnvListen+"); default "+def.Listen)
		fs.Var(optionalString{&flags.HTTPListen}, "http-listen",
			"serve the OpenAI- and Anthropic-compatible HTTP endpoints on `HOST:PORT`, or off (also $"+config.EnvHTTPListen+"); default "+def.HTTPListen)
		fs.Var(optionalString{&flags.MetricsListen}, "metrics-listen",
			"serve Prometheus /metrics on `HOST:PORT`, or off (also $"+config.EnvMetricsListen+"); default "+def.MetricsListen)
		version := fs.Bool("version", false, "print the version and exit")
		return func(ctx context.Context, args []string) error {
			if *version {
				return versionCommand.run(ctx, nil, env)
			}
			if len(args) > 0 {
				return usagef("serve", "serve: unexpected argument %q (serve takes only flags)", args[0])
			}
			return serve(ctx, flags, env)
		}
	},
}

// optionalString is a string flag that records whether it was given, so
// that an empty value can mean something ("no metrics endpoint").
type optionalString struct{ p **string }

func (o optionalString) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return **o.p
}

func (o optionalString) Set(v string) error {
	*o.p = &v
	return nil
}

func serve(ctx context.Context, flags config.Flags, env Env) error {
	load := func() (*config.Config, error) { return config.Load(flags, env.Getenv) }
	cfg, err := load()
	if err != nil {
		return err
	}
	level := new(slog.LevelVar)
	log := newLogger(cfg.Log, level, env.Stderr)
	tracing, err := telemetry.Setup(ctx, env.Getenv, telemetry.Options{ServiceVersion: releaseVersion(buildInfo(env)), Logger: log})
	if err != nil {
		return err
	}
	defer flushTraces(tracing, log)
	srv, err := server.New(cfg,
		server.WithLogger(log), server.WithLogLevel(level), server.WithTracing(tracing),
		server.WithConfigSource(configPath(flags, env), load))
	if err != nil {
		return err
	}
	return explainListenError(srv.RunWithSignals(ctx))
}

// flushTraces exports the spans not exported yet, at exit, within
// server.TraceFlushWait (part of server.ShutdownBudget).
func flushTraces(t *telemetry.Tracing, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), server.TraceFlushWait)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn("tracing: exporting the last spans", "error", err)
	}
}

// configPath returns the config file the server was started with, "" for
// none.
func configPath(flags config.Flags, env Env) string {
	if flags.ConfigPath != "" {
		return flags.ConfigPath
	}
	return env.Getenv(config.EnvConfig)
}

// listenSettings names, for each listen address in the config, the flag
// and environment variable that also set it.
var listenSettings = map[string]struct{ flag, env, off string }{
	"listen":         {"--listen", config.EnvListen, ""},
	"http_listen":    {"--http-listen", config.EnvHTTPListen, ", or turn the HTTP endpoints off with --http-listen off"},
	"metrics_listen": {"--metrics-listen", config.EnvMetricsListen, ", or turn metrics off with --metrics-listen off"},
}

// explainListenError says how to choose another address when one of the
// server's addresses is taken.
func explainListenError(err error) error {
	var le *server.ListenError
	if !errors.As(err, &le) || !errors.Is(le.Err, syscall.EADDRINUSE) {
		return err
	}
	s := listenSettings[le.Setting]
	return fmt.Errorf("%s: %s is already in use (is another llmrelay running?); choose another address with %s HOST:PORT, $%s or %s in the config file%s",
		le.Setting, le.Addr, s.flag, s.env, le.Setting, s.off)
}

// newLogger returns the logger of c, at level, which it sets to c's level
// (the server moves it on reloads).
func newLogger(c config.Log, level *slog.LevelVar, w io.Writer) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(strings.ToUpper(c.Level)))
	level.Set(l)
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
