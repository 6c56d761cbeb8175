package redisstore

import (
	"bufio"
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Redis that restarts without its data forgets every lease: until the
// replicas put back the leases of the streams still open, a key's stream
// cap (and any capped lease set) would count too few. So the store watches
// for restarts and, after one, holds capped admissions back until every
// replica could have re-registered its leases.
//
// Every new connection asks the server who it is (INFO server: its run_id
// and uptime), in the client's OnConnect hook, before any command runs on
// it. A node whose run_id changed since this replica last connected to it
// restarted (or another server took its place): the replica renews all its
// leases at once (renewScript adds back those Redis lost), and capped
// admissions (Admit with MaxConcurrent, Acquire with a limit) wait until
// that renewal is done and until restartWindow has passed since the node
// started. restartWindow is what every live replica needs to meet the
// restarted node and re-register: it pings every HealthCheckInterval (on
// a new connection after a restart, so it learns of it then), dials and
// renews. An admission whose own command met the restart first (its
// connection was the new one) is taken back and made again after the wait.

// restartGate holds capped admissions back after a restart of Redis. The
// zero value is open.
type restartGate struct {
	active atomic.Bool   // a restart is being waited out
	seq    atomic.Uint64 // restarts seen

	mu    sync.Mutex
	until time.Time
	// renewed is closed once this replica renewed its leases after the
	// last restart; nil when no renewal is pending.
	renewed chan struct{}
}

// restarted records a restart: capped admissions wait until until, and
// until the renewal that follows.
func (g *restartGate) restarted(until time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until.After(g.until) {
		g.until = until
	}
	if g.renewed == nil {
		g.renewed = make(chan struct{})
	}
	g.seq.Add(1)
	g.active.Store(true)
}

// pending returns the renewal a renewal starting now completes, if any.
func (g *restartGate) pending() chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.renewed
}

// renewedNow says that the renewal that began when pending returned ch
// succeeded.
func (g *restartGate) renewedNow(ch chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ch != nil && g.renewed == ch {
		close(ch)
		g.renewed = nil
	}
}

// settling reports whether a restart is being waited out: the replicas
// may not all have put back what Redis forgot.
func (g *restartGate) settling() bool {
	if !g.active.Load() {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.renewed != nil || time.Now().Before(g.until)
}

// wait waits, while ctx lasts, until capped admissions may go on.
func (g *restartGate) wait(ctx context.Context) error {
	for g.active.Load() {
		g.mu.Lock()
		until, renewed := g.until, g.renewed
		if renewed == nil && !time.Now().Before(until) {
			g.active.Store(false)
			g.mu.Unlock()
			return nil
		}
		g.mu.Unlock()
		if renewed != nil {
			select {
			case <-renewed:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		t := time.NewTimer(time.Until(until))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	return nil
}

// restartWindow is how long after a restart of a node every live replica
// has met it and re-registered its leases.
func (s *Store) restartWindow() time.Duration {
	return s.interval + s.opts.DialTimeout + s.opts.ReadTimeout
}

// onConnect is the client's OnConnect hook: it learns which server the
// new connection reached and notices a restart. It never fails the
// connection: a server that will not say (an ACL without INFO) is simply
// not watched, and that is logged once.
func (s *Store) onConnect(ctx context.Context, cn *redis.Conn) error {
	info, err := cn.Info(ctx, "server").Result()
	if err != nil {
		s.noIdentity.Do(func() {
			s.log.Warn("cannot ask Redis for its run_id (INFO server): a restart that loses its data will not be noticed until the next lease renewal", "error", err)
		})
		return nil
	}
	runID, uptime := serverIdentity(info)
	if runID == "" {
		return nil
	}
	node := cn.String()
	s.nodesMu.Lock()
	prev, known := s.nodes[node]
	s.nodes[node] = runID
	s.nodesMu.Unlock()
	if !known || prev == runID {
		return nil
	}
	started := time.Now().Add(-uptime)
	s.log.Warn("redis restarted: re-registering this replica's leases; capped admissions wait for every replica to",
		"node", node, "up_for", uptime, "wait_until", started.Add(s.restartWindow()).Format(time.RFC3339Nano))
	s.gate.restarted(started.Add(s.restartWindow()))
	select {
	case s.renewNow <- struct{}{}:
	default:
	}
	select {
	case s.logs.renewNow <- struct{}{}:
	default:
	}
	return nil
}

// serverIdentity reads run_id and uptime_in_seconds from INFO server.
func serverIdentity(info string) (runID string, uptime time.Duration) {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch k {
		case "run_id":
			runID = v
		case "uptime_in_seconds":
			n, _ := strconv.ParseInt(v, 10, 64)
			uptime = time.Duration(n) * time.Second
		}
	}
	return runID, uptime
}
