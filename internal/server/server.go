// Package server wires llmrelay together: configuration in, a ready
// *grpc.Server out, with the interceptor chain, the LLMService, health and
// reflection registered, and a graceful shutdown. cmd/server and the
// in-process tests use exactly this wiring.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"buf.build/go/protovalidate"
	"github.com/pires/go-proxyproto"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	adminv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/admin/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/engine/callctx"
	"github.com/llmrelay/llmrelay/internal/hook"
	"github.com/llmrelay/llmrelay/internal/interceptors"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/resume"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/servertools"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	"github.com/llmrelay/llmrelay/internal/telemetry"
)

// hardStopWait is how long Shutdown waits, after cutting off the calls
// still running at the end of the grace period, for them to send their
// status before it closes every connection.
const hardStopWait = 2 * time.Second

// exitWait bounds what the process does once its last connection closed:
// the resumable calls' last events stored (the resume registry's own
// bound, 2 s), the stores closed, and the last spans exported
// (TraceFlushWait, the rest).
const exitWait = 3 * time.Second

// TraceFlushWait bounds how long exporting the last spans may hold the
// exit (serve's last step): a collector that does not answer costs this,
// within exitWait.
const TraceFlushWait = time.Second

// ShutdownBudget returns the longest a shutdown with cfg takes, from the
// stop signal to the exit: the drain delay, the grace period, the wait
// for cut-off calls to send their status, and the exit's own steps
// (exitWait). A process supervisor's kill timeout (Kubernetes'
// terminationGracePeriodSeconds) must be at least this, or calls are
// killed without a status, or their last events and spans are lost.
func ShutdownBudget(cfg *config.Config) time.Duration {
	return cfg.DrainDelay + cfg.ShutdownGrace + hardStopWait + exitWait
}

// Server is a configured llmrelay server.
type Server struct {
	// cfg is the config the server started with; only the settings that a
	// reload cannot change (config.KeepRestartOnly) are read from it.
	cfg  *config.Config
	log  *slog.Logger
	grpc *grpc.Server
	// doors serves the HTTP doors (doors.go), on http_listen.
	doors *http.Server
	// listenAt, when set (tests), listens in place of the configured
	// address of setting.
	listenAt func(setting, addr string) (net.Listener, error)
	health   *health.Server
	metrics  *metrics.Metrics
	timer    retry.Timer
	// current is the runtime new calls start on: the keys, providers,
	// routes, chain and service of the config in use (runtime.go); a
	// reload replaces it.
	current atomic.Pointer[runtime]
	// reload is how a reload finds the new config and how it is applied
	// (reload.go).
	reloader reloader
	// tracing makes the server spans; nil when tracing is off.
	tracing *telemetry.Tracing
	// logLevel, when set, follows log.level across reloads.
	logLevel *slog.LevelVar
	// protoValidator is shared by every runtime's chain.
	protoValidator protovalidate.Validator
	// hooks are the compiled-in hooks that run after the routes' defaults.
	hooks []hook.Hook
	// routeClock and routeRand replace the routes' defaults, for tests.
	routeClock func() time.Time
	routeRand  func(int64) int64
	// targetHealth keeps the route targets' health, across reloads: the
	// state store's when it can (shared by the replicas that share the
	// store), else this process's.
	targetHealth state.TargetHealth
	// latencies keep the targets' recent times to first delta, which
	// adaptive hedging follows, across reloads (this process's own).
	latencies *retry.Latencies
	// ejectedOnce registers the targets' health gauge, once a config has
	// routes.
	ejectedOnce sync.Once
	// store holds the state shared with other replicas (or this
	// process's own, with the memory store); stopFollow stops readiness
	// from following it.
	store      state.Store
	stopFollow func()
	// resume runs the resumable calls, their logs in the state store; it
	// outlives reloads, like the calls.
	resume *resume.Registry
	// throttle counts failed authentications per client address; it
	// outlives reloads (a reload applies auth.throttle to it), so that a
	// throttled address stays throttled.
	throttle *auth.Throttle
	// tools keeps the connections to the MCP servers of the tools section
	// and runs their tools; it outlives reloads (a reload applies the
	// section to it), like the connections.
	tools *servertools.Host
	// governanceClock is the clock of budgets and keys' expiry (tests
	// move it); localGov keeps keys and spending for a store without
	// them (admin.go).
	governanceClock func() time.Time
	localGov        *memory.Store
	localGovOnce    sync.Once
	// keyCalls are the Generate calls open, by key, and keyCheck how
	// often their keys are read again (engine.KeyCheckInterval; tests
	// shorten it): the calls of a key revoked, expired or removed
	// meanwhile end. They outlive reloads; stopKeyWatch stops the check.
	keyCalls     *engine.KeyCalls
	keyCheck     time.Duration
	stopKeyWatch func()

	// hardStop is cancelled when the grace period ends; the drain link of
	// the interceptor chain then cancels every call still running.
	hardStop    context.Context
	cancelCalls context.CancelFunc
	// calls are the calls running, which hardStop's end cuts off.
	calls *drainSet
	// gracefulStop is cancelled when the grace period begins; the drain
	// link then ends health watches.
	gracefulStop context.Context
	endWatches   context.CancelFunc
	// drainStarted is set by the first Shutdown, which alone waits for
	// the drain delay.
	drainStarted atomic.Bool
	// stopping is cancelled when a shutdown begins, before health turns
	// NOT_SERVING; the config watch (reload.watch) stops then, as SIGHUP
	// is ignored from then on.
	stopping      context.Context
	beginShutdown context.CancelFunc
}

// Option adjusts a Server.
type Option func(*Server)

// WithLogger sets the logger; the default discards.
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithRetryTimer sets the timer that makes the waits between attempts; tests
// pass one that records each wait and returns at once. The default is real
// time.
func WithRetryTimer(t retry.Timer) Option { return func(s *Server) { s.timer = t } }

// WithTracing makes the server trace calls with t (telemetry.Setup's; nil
// leaves tracing off).
func WithTracing(t *telemetry.Tracing) Option { return func(s *Server) { s.tracing = t } }

// WithLogLevel has log.level set v's level, at start and on every reload;
// the logger given with WithLogger should be built on v.
func WithLogLevel(v *slog.LevelVar) Option { return func(s *Server) { s.logLevel = v } }

// WithHooks adds compiled-in hooks to every Generate call (see
// internal/hook), in order, after the routes' defaults.
func WithHooks(h ...hook.Hook) Option { return func(s *Server) { s.hooks = append(s.hooks, h...) } }

// WithRouteClock sets the clock route targets' health runs on; tests pass
// one they move. The default is time.Now.
func WithRouteClock(now func() time.Time) Option { return func(s *Server) { s.routeClock = now } }

// WithRouteRand sets the random source of weighted routes (a uniformly
// random integer in [0, n), safe for concurrent use); tests pass a seeded
// one. The default is math/rand/v2.
func WithRouteRand(r func(n int64) int64) Option { return func(s *Server) { s.routeRand = r } }

// Metrics returns the server's metrics.
func (s *Server) Metrics() *metrics.Metrics { return s.metrics }

// New builds a Server from a validated configuration. The Server starts its
// stream workers (limits.stream_workers) at once: call Shutdown when done
// with it, even if it never served.
func New(cfg *config.Config, opts ...Option) (*Server, error) {
	s := &Server{cfg: cfg, log: slog.New(slog.DiscardHandler), metrics: metrics.New(), governanceClock: time.Now,
		keyCalls: engine.NewKeyCalls(), keyCheck: engine.KeyCheckInterval}
	for _, o := range opts {
		o(s)
	}
	s.hardStop, s.cancelCalls = context.WithCancel(context.Background())
	s.gracefulStop, s.endWatches = context.WithCancel(s.hardStop)
	s.stopping, s.beginShutdown = context.WithCancel(context.Background())
	s.calls = newDrainSet(s.hardStop)
	var err error
	if s.store, err = s.openStore(); err != nil {
		return nil, err
	}
	var ok bool
	if s.targetHealth, ok = s.store.(state.TargetHealth); !ok {
		s.targetHealth = memory.New()
	}
	s.latencies = retry.NewLatencies()
	logs, ok := s.store.(state.EventLogs)
	if !ok {
		logs = memory.New()
	}
	s.resume = resume.New(cfg.Resume, logs, s.log, s.metrics, resume.WithCutoff(s.hardStop))
	s.throttle = auth.NewThrottle(cfg.Auth.Throttle, s.log)
	s.tools = servertools.NewHost(servertools.Options{
		Logger: s.log, Metrics: s.metrics,
		// An MCP server's retry budget is the state store's or this
		// process's, as a provider's, under the name mcp/<server>.
		Budget: func(server string) retry.Throttle {
			if rt := s.current.Load(); rt != nil && rt.budget != nil {
				return rt.budget(toolBudgetName(server))
			}
			return nil
		},
		// The wait before an idempotent tool is tried again is the retry
		// section's backoff.
		Backoff: func(n int) time.Duration {
			return s.current.Load().cfg.RetryLimits().Policy(retry.Request{}).Backoff(n, nil)
		},
	})
	// The first runtime: the keys, providers, routes, chain and service of
	// cfg.
	rt, err := s.newRuntime(cfg, nil)
	if err != nil {
		s.store.Close()
		return nil, err
	}
	s.current.Store(rt)
	s.tools.Apply(rt.tools)
	// The first calls should find the MCP servers that answer: wait,
	// briefly, until each was tried once.
	settle, cancel := context.WithTimeout(context.Background(), toolsSettle)
	s.tools.Settle(settle)
	cancel()
	s.setLogLevel(cfg)

	serverOpts, err := s.serverOptions()
	if err != nil {
		s.store.Close()
		return nil, err
	}
	s.grpc = grpc.NewServer(serverOpts...)
	s.doors = s.newDoors()
	// Its streams' one request is checked by llmrelay, not gRPC
	// (llmServiceDesc).
	s.grpc.RegisterService(&llmServiceDesc, llmService{})
	adminv1.RegisterKeyServiceServer(s.grpc, adminService{})
	adminv1.RegisterUsageServiceServer(s.grpc, adminService{})
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(ReadinessService, healthpb.HealthCheckResponse_SERVING)
	s.stopFollow = s.followStore()
	reflection.Register(s.grpc)
	s.metrics.Server.InitializeMetrics(contractServices{s.grpc})
	s.stopKeyWatch = s.watchKeys()
	return s, nil
}

// watchKeys starts the one check of the process that ends the open calls
// of keys that stopped working (engine.KeyCalls.Watch), on the current
// runtime's keys, every s.keyCheck; the returned stop ends it and waits
// for it. Without config keys authentication is off, and nothing is
// checked: the open calls run on, as new calls then need no key.
func (s *Server) watchKeys() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.keyCalls.Watch(ctx, s.keyCheck, func() auth.Keys {
			if rt := s.current.Load(); rt.keys.Len() > 0 {
				return rt.apiKeys
			}
			return nil
		}, s.log)
	}()
	return func() {
		cancel()
		<-done
	}
}

// buildRoutes builds runtime rt's route table over its providers, with
// the targets' health in s.targetHealth (kept across reloads), and the
// hooks every call runs: the routes' defaults, then WithHooks'.
func (s *Server) buildRoutes(rt *runtime) error {
	var err error
	rt.routes, err = route.NewTable(rt.cfg.Routes, rt.providers, route.Options{
		Health: s.targetHealth, Policy: rt.cfg.OutlierDetection, Now: s.routeClock, Rand: s.routeRand, Logger: s.log, Metrics: s.metrics,
	})
	if err != nil {
		return err
	}
	if len(rt.cfg.Routes) > 0 {
		// The gauge reads the routes of the config in use.
		s.ejectedOnce.Do(func() { s.metrics.TargetHealth(func() map[string]bool { return s.current.Load().routes.Ejected() }) })
	}
	defaults, err := hook.RouteDefaults(rt.routes.Routes())
	if err != nil {
		return err
	}
	rt.hooks = append(hook.Chain{defaults}, s.hooks...)
	return nil
}

// Serve accepts connections on lis until Shutdown. It returns nil after a
// shutdown. With auth.trusted_proxies, a connection from a trusted proxy
// may open with a PROXY protocol header (v1 or v2, as HAProxy's
// send-proxy and send-proxy-v2 write it), whose source address is the
// client's; other connections are read as they are. (Turning the PROXY
// protocol on, from no trusted proxies to some, takes a restart; a reload
// changes which proxies are trusted.)
func (s *Server) Serve(lis net.Listener) error {
	if len(s.cfg.Auth.TrustedProxies) > 0 {
		lis = &proxyproto.Listener{Listener: lis, ConnPolicy: s.proxyPolicy, ReadHeaderTimeout: proxyHeaderTimeout}
	}
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// proxyHeaderTimeout bounds the wait for a trusted proxy's PROXY header.
const proxyHeaderTimeout = 10 * time.Second

// proxyPolicy reads a PROXY protocol header only from the current
// runtime's trusted proxies (a reload may change them); from any other
// peer it reads nothing, so that a client cannot name its own address.
func (s *Server) proxyPolicy(o proxyproto.ConnPolicyOptions) (proxyproto.Policy, error) {
	ap, err := netip.ParseAddrPort(o.Upstream.String())
	if err == nil && auth.Trusted(ap.Addr(), s.current.Load().trusted) {
		return proxyproto.USE, nil
	}
	return proxyproto.SKIP, nil
}

// Shutdown stops the server in three steps. First health turns
// NOT_SERVING and, for drain_delay, the server goes on accepting and serving
// new calls, so load balancers and proxies that watch health or remove the
// endpoint stop sending calls before any is refused. Then new calls are
// refused and calls in flight may finish within shutdown_grace. Calls still
// running after that end with UNAVAILABLE (reason SERVER_SHUTTING_DOWN), and
// every connection is closed. If ctx ends first, what is left of the drain
// delay and the grace period is skipped and calls are cut off at once.
// Only the first call waits for the drain delay. The config watch
// (reload.watch) stops as the shutdown begins.
func (s *Server) Shutdown(ctx context.Context) {
	s.beginShutdown()
	s.health.Shutdown()
	if d := s.cfg.DrainDelay; d > 0 && !s.drainStarted.Swap(true) {
		s.log.Info("draining: health is NOT_SERVING, new calls are still served", "drain_delay", d)
		delay := time.NewTimer(d)
		select {
		case <-delay.C:
		case <-ctx.Done():
		}
		delay.Stop()
	}
	s.endWatches()
	drained := make(chan struct{})
	go func() {
		httpDrained := make(chan struct{})
		go func() {
			s.stopDoors()
			close(httpDrained)
		}()
		s.grpc.GracefulStop()
		<-httpDrained
		close(drained)
	}()
	defer s.closeStore(drained)
	grace := time.NewTimer(s.cfg.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-drained:
		return
	case <-grace.C:
		s.log.Warn("shutdown grace period over: cutting off calls still running")
	case <-ctx.Done():
		s.log.Warn("shutdown cut short: cutting off calls still running")
	}
	s.cancelCalls()
	wait := time.NewTimer(hardStopWait)
	defer wait.Stop()
	select {
	case <-drained:
	case <-wait.C:
		s.closeDoors()
		s.grpc.Stop()
		<-drained
	}
}

// closeStore closes the state store once every call has ended (drained),
// giving back the leases this replica still holds, after the last events
// of the resumable calls are in it.
func (s *Server) closeStore(drained <-chan struct{}) {
	<-drained
	s.stopKeyWatch()
	s.tools.Close()
	s.resume.Close()
	s.stopFollow()
	if err := s.store.Close(); err != nil {
		s.log.Warn("closing the state store", "error", err)
	}
}

// toolsSettle bounds how long New waits for the MCP servers to answer
// before the server serves: a server that is down does not hold it up
// longer.
const toolsSettle = 5 * time.Second

// toolBudgetName is the retry budget name of an MCP server: beside the
// providers' names, which have no "/".
func toolBudgetName(server string) string { return "mcp/" + server }

// stopNow cuts off every call and closes every connection at once, without
// waiting for the calls to send their status.
func (s *Server) stopNow() {
	s.beginShutdown()
	s.health.Shutdown()
	s.cancelCalls()
	s.closeDoors()
	s.grpc.Stop()
}

// run listens on the configured address and serves there (serveOn).
func (s *Server) run(ctx context.Context, sigs <-chan os.Signal) error {
	lis, err := s.listen("listen", s.cfg.Listen)
	if err != nil {
		return err
	}
	return s.serveOn(ctx, lis, sigs)
}

// serveOn serves on lis until ctx ends or a stop signal arrives on sigs,
// then shuts down; see RunWithSignals for what each signal does.
func (s *Server) serveOn(ctx context.Context, lis net.Listener, sigs <-chan os.Signal) error {
	stopMetrics, err := s.startMetrics()
	if err != nil {
		lis.Close()
		return err
	}
	defer stopMetrics()
	if s.cfg.Reload.Watch && s.reloader.path != "" {
		stopWatch, err := s.watch(ctx)
		if err != nil {
			lis.Close()
			return fmt.Errorf("reload.watch: %w", err)
		}
		defer stopWatch()
	}
	var httpLis net.Listener
	if s.cfg.HTTPListen != "" {
		if httpLis, err = s.listen("http_listen", s.cfg.HTTPListen); err != nil {
			lis.Close()
			return err
		}
	}
	serving := []any{"listen", lis.Addr().String()}
	if httpLis != nil {
		serving = append(serving, "http_listen", httpLis.Addr().String(), "http_tls", s.cfg.HTTPTLS.Enabled())
	}
	s.log.Info("llmrelay serving", append(serving, "providers", s.current.Load().providers.Names(), "tls", s.cfg.TLS.Enabled(),
		"tracing", s.tracing.Protocol(), "reload_watch", s.cfg.Reload.Watch)...)
	if !s.cfg.TLS.Enabled() && !config.IsLoopback(s.cfg.Listen) {
		s.log.Warn("serving without TLS on a non-loopback address: API keys cross the network in plaintext unless a proxy or mesh encrypts it")
	}
	if httpLis != nil && !s.cfg.HTTPTLS.Enabled() && !config.IsLoopback(s.cfg.HTTPListen) {
		s.log.Warn("serving HTTP without TLS (http_tls) on a non-loopback address: API keys cross the network in plaintext unless a proxy or mesh encrypts it")
	}
	s.logWarnings(s.current.Load().cfg)
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(lis) }()
	var httpErr chan error
	doorsDone := func() {
		if httpErr == nil {
			return
		}
		if err := <-httpErr; err != nil {
			s.log.Error("the HTTP doors failed", "error", err)
		}
		httpErr = nil
	}
	if httpLis != nil {
		httpErr = make(chan error, 1)
		go func() { httpErr <- s.ServeHTTPDoors(httpLis) }()
		defer doorsDone()
	}
	if stop, err := s.serveUntilStop(ctx, sigs, errc); !stop {
		return err
	}
	s.log.Info("shutting down", "drain_delay", s.cfg.DrainDelay, "grace", s.cfg.ShutdownGrace, "at_most", ShutdownBudget(s.cfg))
	began := time.Now()
	shutdownCtx, cutShort := context.WithCancel(context.Background())
	defer cutShort()
	done := make(chan struct{})
	go func() {
		s.Shutdown(shutdownCtx)
		close(done)
	}()
	err = s.shutdownUntilDone(sigs, done)
	if err != nil {
		cutShort()
		<-done
		<-errc
	} else {
		err = <-errc
	}
	doorsDone()
	// The last line: a log that ends at "shutting down" is a shutdown
	// that hung (or a process killed), one that ends here finished. An
	// error only when there is one: "error=<nil>" reads as a failure.
	fields := []any{"took", time.Since(began).Round(time.Millisecond)}
	if err != nil {
		fields = append(fields, "error", err)
	}
	s.log.Info("stopped", fields...)
	return err
}

// ListenError says that the server could not listen on one of its
// configured addresses; errors.Is(err, syscall.EADDRINUSE) tells an address
// in use.
type ListenError struct {
	// Setting is the config setting that holds the address: "listen",
	// "http_listen" or "metrics_listen".
	Setting string
	Addr    string
	Err     error
}

// Error implements error.
func (e *ListenError) Error() string {
	return fmt.Sprintf("%s: cannot listen on %s: %v", e.Setting, e.Addr, e.Err)
}

// Unwrap returns the cause.
func (e *ListenError) Unwrap() error { return e.Err }

// listen listens on addr, the value of the named setting. When addr is
// taken and is the embedded default's (config.ListenIsDefault: no file,
// variable or flag chose it), it listens on a free port of the same host
// instead and logs both addresses at warn, so that a second `make run`, or
// one beside another program on the default metrics port, starts; an
// address someone chose fails with the *ListenError.
func (s *Server) listen(setting, addr string) (net.Listener, error) {
	if s.listenAt != nil {
		return s.listenAt(setting, addr)
	}
	lis, err := listen(setting, addr)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) || !s.cfg.ListenIsDefault(setting) {
		return lis, err
	}
	host, _, _ := net.SplitHostPort(addr)
	free, ferr := listen(setting, net.JoinHostPort(host, "0"))
	if ferr != nil {
		return nil, err
	}
	s.log.Warn(setting+": the default address is in use (another llmrelay, or another program?); listening on a free port instead: set "+setting+" to choose one",
		"default", addr, "listen", free.Addr().String())
	return free, nil
}

// listen listens on addr, the value of the named setting.
func listen(setting, addr string) (net.Listener, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		// The *net.OpError repeats the address; its cause says why.
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		return nil, &ListenError{Setting: setting, Addr: addr, Err: err}
	}
	return lis, nil
}

// drainUnary and the drain link's steps (drainEnter, drainExit) cancel a
// call's context with apierr.ErrShuttingDown when the shutdown grace
// period ends; health watches, which never end by themselves, as soon as
// the grace period begins and they have sent NOT_SERVING (see
// drainWatch), so that they do not hold the shutdown for all of it.
func (s *Server) drainUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, stop := s.calls.context(ctx)
	defer stop()
	return handler(ctx, req)
}

// drainEnter and drainExit are drainStream's steps in the flat chain.
func (s *Server) drainEnter(c *interceptors.Call) error {
	if c.Info.FullMethod == healthpb.Health_Watch_FullMethodName {
		w := s.drainWatch(c.Context(), c.Stream())
		c.SetContext(w.ctx)
		c.Wrap(w)
		c.Set(w)
		return nil
	}
	ctx, stop := s.calls.context(c.Context())
	c.SetContext(ctx)
	c.Set(stop)
	return nil
}

func drainExit(c *interceptors.Call, err error) error {
	switch v := c.Value().(type) {
	case func():
		v()
	case *watchStream:
		v.end()
	}
	return err
}

// watchNoticeWait bounds how long an ending health watch waits to have told
// its watcher that the server is no longer serving.
const watchNoticeWait = 5 * time.Second

// drainWatch returns the stream a health watch runs on, until the grace
// period begins and the watcher has been sent a status other than SERVING
// (or watchNoticeWait passed): ending the stream before the health service
// sent NOT_SERVING would hide the drain from the watcher, which would see
// only a broken stream. Its end (watchStream.end) must be called when the
// watch ends.
func (s *Server) drainWatch(parent context.Context, ss grpc.ServerStream) *watchStream {
	ctx, cancel := context.WithCancelCause(parent)
	ws := &watchStream{ServerStream: ss, ctx: ctx, told: make(chan struct{}, 1)}
	ws.serving.Store(true)
	stop := context.AfterFunc(s.gracefulStop, func() {
		wait := time.NewTimer(watchNoticeWait)
		defer wait.Stop()
		for ws.serving.Load() {
			select {
			case <-ws.told:
			case <-wait.C:
				cancel(apierr.ErrShuttingDown)
				return
			case <-ctx.Done():
				return
			}
		}
		cancel(apierr.ErrShuttingDown)
	})
	ws.end = func() {
		stop()
		cancel(nil)
	}
	return ws
}

// watchStream is a health watch's stream: it replaces the context and
// remembers whether the last status it sent was SERVING.
type watchStream struct {
	grpc.ServerStream
	ctx     context.Context
	end     func() // ends the watch's context and its drain hook
	serving atomic.Bool
	// told receives (without blocking) after each status sent.
	told chan struct{}
}

func (w *watchStream) Context() context.Context { return w.ctx }

func (w *watchStream) SendMsg(m any) error {
	err := w.ServerStream.SendMsg(m)
	if r, ok := m.(*healthpb.HealthCheckResponse); ok {
		w.serving.Store(r.GetStatus() == healthpb.HealthCheckResponse_SERVING)
		select {
		case w.told <- struct{}{}:
		default:
		}
	}
	return err
}

// drainSet is the calls running, which the end of a context (the grace
// period's, newDrainSet's until) cuts off with apierr.ErrShuttingDown. One
// context.AfterFunc on until serves them all: a call has its place in the
// set rather than an AfterFunc of its own (an afterFunc context, its
// function, and a place in until's children: about 350 bytes for as long
// as the call runs, in a heap profile of 5,000 held).
type drainSet struct {
	mu sync.Mutex
	// calls is nil once until ended: calls are then cut off as they start.
	calls map[*drainCall]struct{}
}

// drainCall is one call's place in its drainSet.
type drainCall struct {
	set    *drainSet
	cancel context.CancelCauseFunc
	// own: cancel is of the context the set made for the call, which
	// stop ends; else of the call's deadline context (callctx), which the
	// deadline link ends.
	own bool
}

func newDrainSet(until context.Context) *drainSet {
	d := &drainSet{calls: map[*drainCall]struct{}{}}
	context.AfterFunc(until, d.cutOff)
	return d
}

// context returns parent, cancelled with apierr.ErrShuttingDown when until
// ends, and the stop that ends it and takes it out of the set (call it
// when the call ends). A call whose context is its deadline's
// (callctx.Cancel finds it) is cancelled through that one; others get a
// context of their own. A resumable call that outlives its stream is cut
// off at the same time by the resume registry (resume.WithCutoff).
func (d *drainSet) context(parent context.Context) (context.Context, func()) {
	ctx, cancel, own := parent, callctx.Cancel(parent), false
	if cancel == nil {
		ctx, cancel = context.WithCancelCause(parent)
		own = true
	}
	c := &drainCall{set: d, cancel: cancel, own: own}
	d.mu.Lock()
	cut := d.calls == nil
	if !cut {
		d.calls[c] = struct{}{}
	}
	d.mu.Unlock()
	if cut {
		cancel(apierr.ErrShuttingDown)
	}
	return ctx, c.stop
}

// stop takes c out of its set and ends its context if the set made it.
func (c *drainCall) stop() {
	d := c.set
	d.mu.Lock()
	delete(d.calls, c)
	d.mu.Unlock()
	if c.own {
		c.cancel(nil)
	}
}

// cutOff cancels every call in the set, and those that start after.
func (d *drainSet) cutOff() {
	d.mu.Lock()
	calls := d.calls
	d.calls = nil
	d.mu.Unlock()
	for c := range calls {
		c.cancel(apierr.ErrShuttingDown)
	}
}
