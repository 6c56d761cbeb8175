// Package redisstore is the state.Store that several llmrelay replicas
// share through one Redis (standalone, Cluster or Sentinel, through
// github.com/redis/go-redis/v9).
//
// Rates are a GCRA kept in one key per API key; concurrency is a sorted set
// of leases per API key (or lease set), each member expiring at a time the
// holding replica pushes forward every LeaseTTL/3. A call's admission is
// one Lua script, one round trip; nothing happens per delta. A crashed
// replica stops renewing, and its leases lapse within LeaseTTL. The
// providers' retry budgets (budget.go: attempts counted locally and
// published off the call's path, retries decided in one script) and the
// route targets' health (health.go: a failure recorded in one script,
// reads from a refreshed view) are shared the same way.
//
// The store owns what happens when Redis fails. A failed or too slow
// command marks it unreachable; a ping every HealthCheckInterval marks it
// reachable again, so recovery needs no restart. While unreachable it
// decides locally without trying Redis: with fail_open on this replica's
// own limits (rates in a memory.Store, concurrency counted over the leases
// this replica holds), with fail_closed by refusing with
// state.ErrUnavailable. Both are counted in metrics and logged at most
// every logEvery. When Redis answers again, the replica renews every lease
// it holds at once, so the leases of streams still open come back even if
// Redis lost its data; a restart that no command saw fail is noticed on the
// next new connection (restart.go), and capped admissions wait until every
// replica could have re-registered its leases, so a cap holds across it.
package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
)

// logEvery bounds how often an ongoing outage is logged.
const logEvery = 30 * time.Second

// Store is the redis state.Store. It is safe for concurrent use.
type Store struct {
	rdb        redis.UniversalClient
	prefix     string
	replica    string
	ttl        time.Duration
	interval   time.Duration
	failClosed bool
	local      *memory.Store // rates while Redis is unreachable
	log        *slog.Logger
	metrics    *metrics.Metrics
	now        func() time.Time // the outage's clock: its start, its length, its repeated line
	seq        atomic.Uint64

	// renewMu orders releases against renewals: a renewal holds it
	// exclusively from its snapshot of held to Redis's reply, a release
	// holds it shared while it forgets its lease. So a released lease is
	// either left out of the renewal or removed from Redis after it,
	// never brought back by it.
	renewMu sync.RWMutex
	mu      sync.Mutex
	held    map[string]map[string]struct{} // lease set key → members this replica holds

	// Released leases are removed from Redis off the call's path: by the
	// flusher, in batches, or sooner by the next admission to the same set,
	// which removes them in its own script. So a call's end waits for no
	// round trip, and a client that opens a stream right after its last one
	// ended, on the same replica, is never refused for the old one.
	pendingMu sync.Mutex
	pending   map[string]map[string]struct{} // lease set key → released members not yet known removed
	flush     chan struct{}

	// budgets are this replica's counts of the shared retry budgets
	// (budget.go); health is its view of the route targets' health
	// (health.go).
	budgets budgetBook
	health  healthBook
	// keys are the stored API keys this replica read last (keys.go);
	// spend the settlements waiting for Redis (spend.go).
	keys  keyCache
	spend spendQueue

	up        atomic.Bool
	condMu    sync.Mutex
	lastErr   error
	downSince time.Time
	decisions atomic.Int64 // made without Redis in this outage
	changed   chan struct{}
	watchMu   sync.Mutex
	watchers  map[int]*watcher
	nextWatch int

	closed atomic.Bool
	stop   chan struct{}
	wg     sync.WaitGroup

	// opts are the client's options; logs the event logs' state
	// (eventlog.go).
	opts *redis.UniversalOptions
	logs logState

	// The restarts of Redis (restart.go): the run_id of each node this
	// replica connected to, and the gate capped admissions wait at after
	// one; renewNow asks the renewal loop to renew at once.
	nodesMu    sync.Mutex
	nodes      map[string]string
	gate       restartGate
	renewNow   chan struct{}
	noIdentity sync.Once
}

var (
	_ state.Store   = (*Store)(nil)
	_ state.Watcher = (*Store)(nil)
)

// Options are a Store's dependencies besides its config.
type Options struct {
	// FailClosed refuses calls while Redis is unreachable; the default
	// admits them on local limits (fail_open).
	FailClosed bool
	// Logger receives outage and recovery lines; nil discards.
	Logger *slog.Logger
	// Metrics records the store's health and fallbacks; nil records
	// nothing.
	Metrics *metrics.Metrics
	// Getenv reads the passwords' environment variables; nil is
	// os.Getenv.
	Getenv func(string) string
	// Now is the clock an outage is timed and its lines spaced by; nil
	// is time.Now.
	Now func() time.Time
}

// New connects to Redis as cfg says and starts the store's health check
// and lease renewal. A Redis that does not answer yet is not an error: the
// store starts unreachable and follows on_store_failure until it answers.
// A Redis that answers that the configuration is wrong (the database, the
// credentials, the mode) is: it would never answer otherwise. Close the
// store when done.
func New(cfg state.RedisConfig, opts Options) (*Store, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	routeLibraryLog.Do(func() { redis.SetLogger(libraryLog{opts.Logger}) })
	ro, err := ClientOptions(cfg, opts.Getenv)
	if err != nil {
		return nil, err
	}
	s := &Store{
		opts:       ro,
		prefix:     cfg.KeyPrefix,
		replica:    replicaID(),
		ttl:        cfg.LeaseTTL,
		interval:   cfg.HealthCheckInterval,
		failClosed: opts.FailClosed,
		local:      memory.New(),
		log:        opts.Logger.With("component", "state", "store", "redis"),
		metrics:    opts.Metrics,
		now:        opts.Now,
		held:       make(map[string]map[string]struct{}),
		pending:    make(map[string]map[string]struct{}),
		flush:      make(chan struct{}, 1),
		budgets:    budgetBook{byName: map[string]*budget{}, flush: make(chan struct{}, 1)},
		health:     newHealthBook(),
		spend:      spendQueue{wake: make(chan struct{}, 1)},
		changed:    make(chan struct{}, 1),
		watchers:   make(map[int]*watcher),
		stop:       make(chan struct{}),
		nodes:      make(map[string]string),
		renewNow:   make(chan struct{}, 1),
	}
	s.logs.renewNow = make(chan struct{}, 1)
	ro.OnConnect = s.onConnect
	s.rdb = redis.NewUniversalClient(ro)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.DialTimeout+cfg.ReadTimeout)
	err = s.rdb.Ping(ctx).Err()
	cancel()
	if hint := misconfigured(err, cfg); hint != "" {
		// Not an outage: waiting would never make it answer.
		_ = s.rdb.Close()
		return nil, fmt.Errorf("state.redis: %s (Redis answered: %w)", hint, err)
	}
	if err != nil {
		s.lastErr, s.downSince = err, s.now()
		s.metrics.StateStoreError("ping")
		s.log.Warn("state store unreachable at start; "+s.policyLine(), "error", err)
	} else {
		s.up.Store(true)
	}
	s.metrics.StateStoreUp(s.up.Load())
	s.wg.Add(6)
	go s.monitor()
	go s.renewLoop()
	go s.flusher()
	go s.publishBudgets()
	go s.healthLoop()
	go s.settleLoop()
	return s, nil
}

// misconfigured returns what is wrong with cfg when err, the first ping's,
// is Redis refusing it for good, "" otherwise (nil, an outage, a server
// still loading its data).
func misconfigured(err error, cfg state.RedisConfig) string {
	var re redis.Error
	if !errors.As(err, &re) {
		return ""
	}
	msg := re.Error()
	switch {
	case strings.Contains(msg, "DB index is out of range"):
		return fmt.Sprintf("db %d is past the databases the server has (its databases setting; 16 by default)", cfg.DB)
	case strings.Contains(msg, "WRONGPASS"):
		return "Redis refused username and password_env"
	case strings.HasPrefix(msg, "NOAUTH"):
		return "Redis needs a password: set password_env (and username, for an ACL user)"
	case strings.Contains(msg, "cluster support disabled"):
		return "mode is cluster, but the server is not part of a Redis Cluster: use mode standalone"
	}
	return ""
}

// routeLibraryLog routes go-redis's own log lines (a process-wide setting)
// to the first store's logger, at debug level: the store logs outages
// itself, rate-limited.
var routeLibraryLog sync.Once

type libraryLog struct{ l *slog.Logger }

func (g libraryLog) Printf(ctx context.Context, format string, v ...any) {
	g.l.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}

// replicaID names this process in lease members: host, pid and a random
// part, so restarts and containers with equal pids never collide.
func replicaID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + ":" + strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(b[:])
}

// Keys. A key's rate and leases share the hash tag {k:<key>}, so one
// script may touch both on Redis Cluster.
func (s *Store) rateKey(key string) string      { return s.prefix + "{k:" + key + "}:rate" }
func (s *Store) keyLeasesKey(key string) string { return s.prefix + "{k:" + key + "}:streams" }

// setLeasesKey: a set's hash tag is its group, the part of its name before
// the first "/", so the sets of one group ("openai/active",
// "openai/retries") share a Cluster slot and one script can use several.
func (s *Store) setLeasesKey(set string) string {
	group, _, _ := strings.Cut(set, "/")
	return s.prefix + "{s:" + group + "}:" + set + ":leases"
}

func (s *Store) member() string {
	return s.replica + ":" + strconv.FormatUint(s.seq.Add(1), 10)
}

func micros(d time.Duration) int64 { return d.Microseconds() }

// Admit implements state.Admitter.
func (s *Store) Admit(ctx context.Context, key string, q state.Quota) (state.Admission, error) {
	if err := ctx.Err(); err != nil {
		return state.Admission{}, err
	}
	if q.Rate <= 0 && q.MaxConcurrent <= 0 {
		return state.Admission{Allowed: true}, nil
	}
	leases := s.keyLeasesKey(key)
	if s.up.Load() {
		interval := 0.0
		if q.Rate > 0 {
			interval = 1e6 / q.Rate
		}
		args := func(member string) []any {
			return s.withReleased(leases, strconv.FormatFloat(interval, 'f', 3, 64), q.EffectiveBurst(), q.MaxConcurrent, member, micros(s.ttl))
		}
		capped := q.MaxConcurrent > 0
		res, lease, decided, err := s.admitInRedis(ctx, "admit", []string{leases, s.rateKey(key)}, capped, capped, args)
		if decided {
			switch {
			case err != nil:
				return state.Admission{}, err
			case res[0] == 1:
				return state.Admission{Refused: state.LimitRate, RetryAfter: time.Duration(res[1]) * time.Microsecond}, nil
			case res[0] == 2:
				return state.Admission{Refused: state.LimitConcurrency, Open: int(res[1])}, nil
			}
			return state.Admission{Allowed: true, Lease: lease}, nil
		}
	}
	if err := s.fallback(); err != nil {
		return state.Admission{}, err
	}
	// Local limits: the lease count over what this replica holds, the
	// rate from the local store; both under s.mu, so the check and the
	// hold are one step.
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.held[leases]); q.MaxConcurrent > 0 && n >= q.MaxConcurrent {
		return state.Admission{Refused: state.LimitConcurrency, Open: n}, nil
	}
	if q.Rate > 0 {
		adm, err := s.local.Admit(ctx, key, state.Quota{Rate: q.Rate, Burst: q.Burst})
		if err != nil || !adm.Allowed {
			return adm, err
		}
	}
	adm := state.Admission{Allowed: true}
	if q.MaxConcurrent > 0 {
		adm.Lease = s.holdLocked(leases, s.member())
	}
	return adm, nil
}

// admitInRedis runs admitScript on keys (the lease set first) with the
// arguments args makes for a lease member ("" when takeLease is false),
// and returns its result and the lease it took, if any. decided is false
// when Redis failed it (the store is then marked unreachable): the caller
// decides locally.
//
// A capped admission waits at the restart gate first (restart.go); one
// during which a restart of Redis was noticed (its own connection may have
// met the restarted server, which forgot the other replicas' leases) gives
// its lease back and is made again once the gate opens.
func (s *Store) admitInRedis(ctx context.Context, op string, keys []string, takeLease, capped bool, args func(member string) []any) (res []int64, l state.Lease, decided bool, err error) {
	for {
		seq := s.gate.seq.Load()
		if capped {
			if err := s.gate.wait(ctx); err != nil {
				return nil, nil, true, err
			}
		}
		member := ""
		if takeLease {
			member = s.member()
		}
		res, err = admitScript.Run(ctx, s.rdb, keys, args(member)...).Int64Slice()
		if err == nil && len(res) != 2 {
			err = fmt.Errorf("admit script returned %v", res)
		}
		if err != nil {
			s.queueRemoval(keys[0], member)
			if err := s.failed(ctx, op, err); err != nil {
				return nil, nil, true, err
			}
			return nil, nil, false, nil
		}
		if member == "" || res[0] != 0 {
			return res, nil, true, nil
		}
		if !capped || seq == s.gate.seq.Load() {
			return res, s.hold(keys[0], member), true, nil
		}
		s.queueRemoval(keys[0], member)
	}
}

// Acquire implements state.Leases.
func (s *Store) Acquire(ctx context.Context, set string, limit int) (state.Lease, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	leases := s.setLeasesKey(set)
	if s.up.Load() {
		// With no limit the script still takes the lease: a limit of
		// "more than can be held" keeps it one script.
		lim := limit
		if lim <= 0 {
			lim = int(^uint32(0) >> 1)
		}
		args := func(member string) []any { return s.withReleased(leases, "0", 1, lim, member, micros(s.ttl)) }
		res, lease, decided, err := s.admitInRedis(ctx, "acquire", []string{leases}, true, limit > 0, args)
		if decided {
			if err != nil || res[0] != 0 {
				return nil, false, err
			}
			return lease, true, nil
		}
	}
	if err := s.fallback(); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if limit > 0 && len(s.held[leases]) >= limit {
		return nil, false, nil
	}
	return s.holdLocked(leases, s.member()), true, nil
}

// Count implements state.Leases. While Redis is unreachable with
// fail_open it counts this replica's leases only.
func (s *Store) Count(ctx context.Context, set string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	leases := s.setLeasesKey(set)
	if s.up.Load() {
		n, err := countScript.Run(ctx, s.rdb, []string{leases}, s.withReleased(leases)...).Int()
		if err == nil {
			return n, nil
		}
		if err := s.failed(ctx, "count", err); err != nil {
			return 0, err
		}
	}
	if err := s.fallback(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held[leases]), nil
}

// failed handles a failed Redis command: the caller's own cancellation is
// returned as it is; anything else marks the store unreachable and returns
// nil, so the caller decides locally.
func (s *Store) failed(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	s.metrics.StateStoreError(op)
	s.markDown(err)
	return nil
}

// fallback counts a decision made without Redis and returns the error
// that refuses it with fail_closed.
func (s *Store) fallback() error {
	s.decisions.Add(1)
	if s.failClosed {
		s.metrics.StateStoreFallback("refused")
		s.condMu.Lock()
		cause := s.lastErr
		s.condMu.Unlock()
		return &state.UnavailableError{Cause: cause}
	}
	s.metrics.StateStoreFallback("local")
	return nil
}

// hold records a lease this replica holds, for renewal and local counts.
func (s *Store) hold(set, member string) *lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holdLocked(set, member)
}

func (s *Store) holdLocked(set, member string) *lease {
	m := s.held[set]
	if m == nil {
		m = make(map[string]struct{})
		s.held[set] = m
	}
	m[member] = struct{}{}
	return &lease{s: s, set: set, member: member}
}

// lease is one lease this replica holds.
type lease struct {
	s           *Store
	set, member string
	released    atomic.Bool
}

// Release implements state.Lease: it forgets the lease locally, at once,
// and hands it to the flusher to remove from Redis (if reachable;
// otherwise it lapses within the lease TTL, as it is no longer renewed).
func (l *lease) Release() {
	if !l.released.CompareAndSwap(false, true) {
		return
	}
	s := l.s
	s.renewMu.RLock()
	s.mu.Lock()
	if m := s.held[l.set]; m != nil {
		delete(m, l.member)
		if len(m) == 0 {
			delete(s.held, l.set)
		}
	}
	s.mu.Unlock()
	s.renewMu.RUnlock()
	if !s.up.Load() || s.closed.Load() {
		return // no longer renewed, it lapses within the TTL
	}
	s.queueRemoval(l.set, l.member)
}

// queueRemoval queues member of set for removal from Redis: a released
// lease, or the lease of a script whose reply was lost (a timeout, a
// cancelled call), which may have run and taken it; that one is then freed
// at once rather than after the TTL. Removing a member that was never
// added is harmless.
func (s *Store) queueRemoval(set, member string) {
	if member == "" {
		return
	}
	s.pendingMu.Lock()
	m := s.pending[set]
	if m == nil {
		m = make(map[string]struct{})
		s.pending[set] = m
	}
	m[member] = struct{}{}
	s.pendingMu.Unlock()
	select {
	case s.flush <- struct{}{}:
	default:
	}
}

// withReleased returns a script's arguments followed by the members of
// set released on this replica and not yet known to be removed from Redis
// (pending, or in the flusher's round trip), which the script removes
// before it counts. Removing one twice is harmless.
func (s *Store) withReleased(set string, args ...any) []any {
	s.pendingMu.Lock()
	for m := range s.pending[set] {
		args = append(args, m)
	}
	s.pendingMu.Unlock()
	return args
}

// flusher removes released leases from Redis, every pending one in one
// pipelined round trip, whenever a release signals.
func (s *Store) flusher() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-s.flush:
		}
		// Members stay pending until Redis confirms their removal, so an
		// admission racing this round trip still removes them first.
		s.pendingMu.Lock()
		batch := make(map[string][]any, len(s.pending))
		for set, members := range s.pending {
			for m := range members {
				batch[set] = append(batch[set], m)
			}
		}
		s.pendingMu.Unlock()
		if len(batch) == 0 {
			continue
		}
		if s.up.Load() {
			ctx, cancel := context.WithTimeout(context.Background(), s.ttl/3)
			pipe := s.rdb.Pipeline()
			for set, members := range batch {
				pipe.ZRem(ctx, set, members...)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				s.metrics.StateStoreError("release")
				s.markDown(err)
			}
			cancel()
		}
		// Removed, or lapsing within the TTL if Redis failed.
		s.pendingMu.Lock()
		for set, members := range batch {
			for _, m := range members {
				delete(s.pending[set], m.(string))
			}
			if len(s.pending[set]) == 0 {
				delete(s.pending, set)
			}
		}
		s.pendingMu.Unlock()
	}
}

// renewLoop renews this replica's leases every LeaseTTL/3, and at once
// when asked to (a restart of Redis was noticed: restart.go).
func (s *Store) renewLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.renewNow:
		}
		s.renew()
	}
}

// renew pushes the expiry of every lease this replica holds forward, in
// one pipelined round trip, re-adding any that Redis lost. Once it did
// after a restart of Redis, the restart gate knows (restart.go).
func (s *Store) renew() {
	after := s.gate.pending()
	if s.renewLeases() {
		s.gate.renewedNow(after)
	}
}

// renewLeases is renew's round trip; it reports whether it succeeded.
func (s *Store) renewLeases() bool {
	if !s.up.Load() {
		return false
	}
	s.renewMu.Lock()
	defer s.renewMu.Unlock()
	s.mu.Lock()
	sets := make(map[string][]any, len(s.held))
	for set, members := range s.held {
		args := make([]any, 0, len(members)+1)
		args = append(args, micros(s.ttl))
		for m := range members {
			args = append(args, m)
		}
		sets[set] = args
	}
	s.mu.Unlock()
	if len(sets) == 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.ttl/3)
	defer cancel()
	pipe := s.rdb.Pipeline()
	for set, args := range sets {
		// EVAL, not EVALSHA: a pipeline cannot fall back on NOSCRIPT, and
		// a Redis that restarted has no scripts.
		renewScript.Eval(ctx, pipe, []string{set}, args...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.metrics.StateStoreError("renew")
		s.markDown(err)
		return false
	}
	return true
}

// monitor pings Redis every HealthCheckInterval, marking the store
// reachable or not, tells the watchers about changes, and logs an ongoing
// outage at most every logEvery.
func (s *Store) monitor() {
	defer s.wg.Done()
	t := time.NewTicker(s.interval)
	defer t.Stop()
	var lastLog time.Time // of the outage under way: its first line or its last repeat
	for {
		select {
		case <-s.stop:
			return
		case <-s.changed:
			s.notify()
			continue
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.interval)
		err := s.rdb.Ping(ctx).Err()
		cancel()
		if err != nil {
			s.metrics.StateStoreError("ping")
			s.markDown(err)
			s.condMu.Lock()
			since := s.downSince
			s.condMu.Unlock()
			// The outage's first line was logged when it started, by
			// whichever command noticed it: repeat logEvery after that,
			// not after the last outage's line or the store's start.
			if lastLog.Before(since) {
				lastLog = since
			}
			if now := s.now(); now.Sub(lastLog) >= logEvery {
				lastLog = now
				s.log.Warn("state store still unreachable; "+s.policyLine(),
					"down_for", now.Sub(since).Round(time.Second), "decisions_without_store", s.decisions.Load(), "error", err)
			}
			continue
		}
		if s.markUp() {
			s.renew() // restore this replica's leases at once
			s.republishBudgets()
		}
	}
}

func (s *Store) policyLine() string {
	if s.failClosed {
		return "on_store_failure fail_closed: refusing calls with UNAVAILABLE"
	}
	return "on_store_failure fail_open: admitting calls on this replica's local limits"
}

// markDown marks the store unreachable; the first failure of an outage is
// logged.
func (s *Store) markDown(err error) {
	s.condMu.Lock()
	s.lastErr = err
	if !s.up.CompareAndSwap(true, false) {
		s.condMu.Unlock()
		return
	}
	s.downSince = s.now()
	s.decisions.Store(0)
	s.condMu.Unlock()
	s.metrics.StateStoreUp(false)
	s.log.Warn("state store unreachable; "+s.policyLine(), "error", err)
	s.signal()
}

// markUp marks the store reachable and reports whether it was not.
func (s *Store) markUp() bool {
	s.condMu.Lock()
	if !s.up.CompareAndSwap(false, true) {
		s.condMu.Unlock()
		return false
	}
	since := s.downSince
	s.condMu.Unlock()
	s.metrics.StateStoreUp(true)
	s.log.Info("state store reachable again; shared limits restored",
		"down_for", s.now().Sub(since).Round(time.Millisecond), "decisions_without_store", s.decisions.Load())
	s.signal()
	return true
}

func (s *Store) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *Store) condition() state.Condition {
	up := s.up.Load()
	return state.Condition{Reachable: up, Admitting: up || !s.failClosed}
}

// watcher is one Watch registration and what it last heard.
type watcher struct {
	f    func(state.Condition)
	last state.Condition
}

// notify tells each watcher the condition, if it changed since it last
// heard.
func (s *Store) notify() {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	c := s.condition()
	for _, w := range s.watchers {
		if w.last != c {
			w.last = c
			w.f(c)
		}
	}
}

// Watch implements state.Watcher. A change is signalled after it is made,
// and notify runs under watchMu, so a change racing the registration is
// still reported.
func (s *Store) Watch(f func(state.Condition)) (stop func()) {
	s.watchMu.Lock()
	id := s.nextWatch
	s.nextWatch++
	w := &watcher{f: f, last: s.condition()}
	s.watchers[id] = w
	f(w.last)
	s.watchMu.Unlock()
	return func() {
		s.watchMu.Lock()
		delete(s.watchers, id)
		s.watchMu.Unlock()
	}
}

// Close implements state.Store: it stops the health check and renewal,
// removes the leases and retry budget entries this replica still holds
// from Redis (best effort) and closes the connections.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	close(s.stop)
	s.wg.Wait()
	s.closeLogs()
	s.flushSettlements() // spend settled during an outage, if Redis is back
	s.spend.mu.Lock()
	lost := len(s.spend.pending)
	s.spend.mu.Unlock()
	if lost > 0 {
		s.condMu.Lock()
		cause := s.lastErr
		s.condMu.Unlock()
		s.log.Warn("closing while Redis is unreachable: the spend and usage of calls settled meanwhile are lost (budgets and GetUsage will not count them)",
			"settlements", lost, "error", cause)
	}
	s.mu.Lock()
	pipe := s.rdb.Pipeline()
	n := 0
	for set, members := range s.held {
		for m := range members {
			pipe.ZRem(context.Background(), set, m)
			n++
		}
	}
	s.held = map[string]map[string]struct{}{}
	s.mu.Unlock()
	s.pendingMu.Lock()
	for set, members := range s.pending {
		for m := range members {
			pipe.ZRem(context.Background(), set, m)
			n++
		}
	}
	s.pending = map[string]map[string]struct{}{}
	s.pendingMu.Unlock()
	n += s.forgetBudgets(context.Background(), pipe)
	var err error
	if n > 0 && s.up.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = pipe.Exec(ctx)
		cancel()
	}
	return errors.Join(err, s.rdb.Close())
}
