package scaleout_test

import (
	"context"
	"math"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
)

// wantSharedRate checks that replicas together admit the key's rate, not
// the rate once per replica, within 10 %, and that each of them served
// some and refused some.
func wantSharedRate(t *testing.T, replicas []*replica, window time.Duration) {
	t.Helper()
	rate, tallies := sharedRate(t, replicas, window)
	t.Logf("%d replicas admitted %.2f calls/s together for a key limited to %g/s", len(replicas), rate, rateLimit)
	for i, c := range tallies {
		t.Logf("replica %s: %d admitted, %d refused", replicas[i].name, c.admitted, c.refused)
		if c.admitted == 0 || c.refused == 0 {
			t.Errorf("replica %s admitted %d and refused %d: each replica should see both", replicas[i].name, c.admitted, c.refused)
		}
	}
	if math.Abs(rate-rateLimit) > rateLimit/10 {
		t.Errorf("admitted %.2f calls/s across %d replicas, want %g within 10%% (per-replica limits would give %g)",
			rate, len(replicas), rateLimit, rateLimit*float64(len(replicas)))
	}
}

func wantTooManyStreams(t *testing.T, r *replica, err error) {
	t.Helper()
	if status.Code(err) != codes.ResourceExhausted || reason(err) != "TOO_MANY_STREAMS" {
		t.Fatalf("replica %s: a stream over the key's cap ended %v, want RESOURCE_EXHAUSTED TOO_MANY_STREAMS", r.name, err)
	}
}

// TestSharedRateLimit: a key with requests_per_second 10 gets about 10
// admitted per second in total across two replicas, not 20.
func TestSharedRateLimit(t *testing.T) {
	redis := redistest.Start(t)
	a := startReplica(t, "a", redis, "rate:", "fail_open")
	b := startReplica(t, "b", redis, "rate:", "fail_open")
	wantSharedRate(t, []*replica{a, b}, 10*time.Second)
}

// TestSharedStreamsAndReplicaCrash: a key with max_concurrent_streams 4
// gets at most 4 open streams across two replicas; when one replica is
// killed (SIGKILL) with streams open, its leases are released within the
// lease TTL and the other replica can open them again.
func TestSharedStreamsAndReplicaCrash(t *testing.T) {
	redis := redistest.Start(t)
	a := startReplica(t, "a", redis, "streams:", "fail_open")
	b := startReplica(t, "b", redis, "streams:", "fail_open")

	for i := range 3 {
		if _, err := holdStream(t, a); err != nil {
			t.Fatalf("stream %d on replica a: %v", i+1, err)
		}
	}
	opened := 0
	for range 3 {
		_, err := holdStream(t, b)
		if err == nil {
			opened++
			continue
		}
		wantTooManyStreams(t, b, err)
	}
	if opened != 1 {
		t.Fatalf("replica b opened %d streams beside a's 3, want 1 (a cap of %d across both)", opened, maxStreams)
	}
	_, err := holdStream(t, a)
	wantTooManyStreams(t, a, err)

	a.kill()
	killed := time.Now()
	// b gets a's three slots back once their leases lapse.
	var took time.Duration
	for opened < maxStreams {
		tried := time.Now()
		_, err := holdStream(t, b)
		switch {
		case err == nil:
			if took == 0 {
				took = tried.Sub(killed)
			}
			opened++
		case time.Since(killed) > leaseTTL+20*time.Second: // a guard only
			t.Fatalf("replica b still refused %v after a was killed: %v", time.Since(killed), err)
		default:
			wantTooManyStreams(t, b, err)
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("the killed replica's stream leases were released %v after SIGKILL (lease_ttl %v); all 3 reopened on b %v after it",
		took.Round(10*time.Millisecond), leaseTTL, time.Since(killed).Round(10*time.Millisecond))
	// Lapsing takes at most the TTL from a's last renewal; the slack is
	// for the polling and a loaded machine.
	if took > leaseTTL+5*time.Second {
		t.Errorf("leases released %v after the crash, want within the lease TTL (%v)", took, leaseTTL)
	}
	_, err = holdStream(t, b)
	wantTooManyStreams(t, b, err)
}

// TestRedisOutageUnderLoad stops redis-server with streams open and calls
// flowing, against a fail_open replica (a) and a fail_closed one (b): a
// keeps serving on local limits and counts the fallback; b refuses with
// UNAVAILABLE STATE_STORE_UNAVAILABLE and its readiness turns NOT_SERVING
// while liveness stays SERVING. Restarting redis-server (empty) restores
// the shared limits, the open streams' leases included, without
// restarting llmrelay.
func TestRedisOutageUnderLoad(t *testing.T) {
	redis := redistest.Start(t)
	a := startReplica(t, "a", redis, "outage:", "fail_open")
	b := startReplica(t, "b", redis, "outage:", "fail_closed")
	const readiness = "llmrelay.v1.LLMService"
	for range 2 {
		if _, err := holdStream(t, a); err != nil {
			t.Fatalf("stream on replica a: %v", err)
		}
	}

	stop := make(chan struct{})
	tallies, wait := load(t.Context(), []*replica{a, b}, 2, stop)
	redis.Stop()
	b.waitHealth(t, readiness, healthpb.HealthCheckResponse_NOT_SERVING)
	if got := b.health(t, ""); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("replica b liveness (\"\") %v during the outage, want SERVING", got)
	}
	if got := a.health(t, readiness); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("replica a (fail_open) readiness %v during the outage, want SERVING", got)
	}
	// Measure the outage from here: b has noticed it.
	before := make([]tally, 2)
	for i, c := range tallies {
		c.mu.Lock()
		before[i] = tally{admitted: c.admitted, refused: c.refused, other: map[string]int{}}
		for k, n := range c.other {
			before[i].other[k] = n
		}
		c.mu.Unlock()
	}
	outageStart := time.Now()
	time.Sleep(3 * time.Second)
	close(stop)
	wait()
	outage := time.Since(outageStart)

	ta, tb := tallies[0], tallies[1]
	admittedA := ta.admitted - before[0].admitted
	t.Logf("outage of %v: replica a admitted %d, refused %d; replica b refused %d with STATE_STORE_UNAVAILABLE",
		outage.Round(time.Millisecond), admittedA, ta.refused-before[0].refused, tb.other["Unavailable STATE_STORE_UNAVAILABLE"]-before[1].other["Unavailable STATE_STORE_UNAVAILABLE"])
	if admittedA == 0 {
		t.Error("replica a (fail_open) admitted nothing during the outage")
	}
	// Local limits still hold: at most a full bucket and the rate.
	if limit := float64(rateBurst) + rateLimit*outage.Seconds()*1.1 + 2; float64(admittedA) > limit {
		t.Errorf("replica a admitted %d calls in %v of outage, more than its local limit allows (%.0f)", admittedA, outage, limit)
	}
	if ta.refused == before[0].refused {
		t.Error("replica a refused nothing during the outage: local limits not applied")
	}
	for k, n := range ta.other {
		t.Errorf("replica a: %d calls ended %s (first: %v), want OK or RATE_LIMITED", n, k, ta.first[k])
	}
	if tb.admitted != before[1].admitted {
		t.Errorf("replica b (fail_closed) admitted %d calls during the outage", tb.admitted-before[1].admitted)
	}
	for k, n := range tb.other {
		if k != "Unavailable STATE_STORE_UNAVAILABLE" {
			t.Errorf("replica b: %d calls ended %s (first: %v), want UNAVAILABLE STATE_STORE_UNAVAILABLE", n, k, tb.first[k])
		}
	}
	if tb.other["Unavailable STATE_STORE_UNAVAILABLE"] == before[1].other["Unavailable STATE_STORE_UNAVAILABLE"] {
		t.Error("replica b refused nothing with STATE_STORE_UNAVAILABLE during the outage")
	}
	if n := a.metric(t, metrics.NameStateStoreFallbacks, `decision="local"`); n == 0 {
		t.Errorf("replica a: %s{decision=\"local\"} = 0 after the outage", metrics.NameStateStoreFallbacks)
	}
	if n := b.metric(t, metrics.NameStateStoreFallbacks, `decision="refused"`); n == 0 {
		t.Errorf("replica b: %s{decision=\"refused\"} = 0 after the outage", metrics.NameStateStoreFallbacks)
	}
	if n := a.metric(t, metrics.NameStateStoreUp, ""); n != 0 {
		t.Errorf("replica a: %s = %v during the outage", metrics.NameStateStoreUp, n)
	}

	redis.Restart(t) // empty: no persistence
	b.waitHealth(t, readiness, healthpb.HealthCheckResponse_SERVING)
	eventually(t, "replica a sees Redis again", func() bool { return a.metric(t, metrics.NameStateStoreUp, "") == 1 })
	// a puts its open streams' leases back as soon as Redis answers.
	rdb := redis.Client(t)
	eventually(t, "replica a's 2 open streams back in Redis", func() bool {
		n, err := rdb.ZCard(context.Background(), "outage:{k:streams}:streams").Result()
		return err == nil && n == 2
	})
	for i := range 2 {
		if _, err := holdStream(t, b); err != nil {
			t.Fatalf("stream %d on replica b after the restart: %v", i+1, err)
		}
	}
	_, err := holdStream(t, b)
	wantTooManyStreams(t, b, err)
	wantSharedRate(t, []*replica{a, b}, 8*time.Second)
}
