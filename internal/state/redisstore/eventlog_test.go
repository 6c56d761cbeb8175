package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

func TestEventLogsConformance(t *testing.T) {
	srv := redistest.Start(t)
	statetest.RunEventLogs(t, func(t *testing.T) state.EventLogs {
		s := open(t, config(srv), redisstore.Options{FailClosed: true})
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestEventLogsConformanceOnCluster: a log's three keys share a hash tag,
// so every script and transaction finds them on one node.
func TestEventLogsConformanceOnCluster(t *testing.T) {
	addrs := redistest.StartCluster(t, 3)
	statetest.RunEventLogs(t, func(t *testing.T) state.EventLogs {
		c := state.DefaultConfig().Redis
		c.Mode, c.Addresses = state.RedisCluster, addrs
		c.KeyPrefix = "cluster" + strconv.FormatInt(prefixes.Add(1), 10) + ":"
		c.ReadTimeout, c.WriteTimeout = 5*time.Second, 5*time.Second
		s := open(t, c, redisstore.Options{FailClosed: true})
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestEventLogOfACrashedReplicaLapses: a running log lives while its
// replica renews it, past several lease TTLs, and lapses within the TTL
// once that replica crashed; another replica then finds it gone.
func TestEventLogOfACrashedReplicaLapses(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	cfg.LeaseTTL = time.Second
	writer := open(t, cfg, redisstore.Options{})
	reader := open(t, cfg, redisstore.Options{})
	defer reader.Close()
	ctx := context.Background()
	if _, err := writer.CreateLog(ctx, "call", state.LogInfo{Token: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := writer.AppendLog(ctx, "call", []state.LogRecord{{Seq: 1, Data: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * cfg.LeaseTTL)
	if _, recs, err := reader.ReadLog(ctx, "call", 0, 10, 0); err != nil || len(recs) != 1 {
		t.Fatalf("after 3 lease TTLs: %v, %v; want the renewed log", recs, err)
	}
	redisstore.Crash(writer)
	poll(t, "the crashed replica's log lapsed", 30*time.Second, func() bool {
		_, _, err := reader.ReadLog(ctx, "call", 0, 10, 0)
		return errors.Is(err, state.ErrLogNotFound)
	})
}

// TestEventLogOfACrashedReplicaHasNoWriter: another replica tells a
// running log whose writer crashed from one whose writer runs, at once
// (the writer's presence subscription went with its connection), both
// where it reads the log and where it would create it again; a reader
// waiting on the log learns it too.
func TestEventLogOfACrashedReplicaHasNoWriter(t *testing.T) {
	testWriterGone(t, config(redistest.Start(t)))
}

// TestEventLogOfACrashedReplicaHasNoWriterOnCluster: the same on a
// Cluster, where a presence channel's subscribers are counted on the node
// that serves its slot.
func TestEventLogOfACrashedReplicaHasNoWriterOnCluster(t *testing.T) {
	c := state.DefaultConfig().Redis
	c.Mode, c.Addresses = state.RedisCluster, redistest.StartCluster(t, 3)
	c.KeyPrefix = "cluster" + strconv.FormatInt(prefixes.Add(1), 10) + ":"
	c.ReadTimeout, c.WriteTimeout = 5*time.Second, 5*time.Second
	testWriterGone(t, c)
}

func testWriterGone(t *testing.T, cfg state.RedisConfig) {
	cfg.LeaseTTL = time.Hour // the log outlives the test: only presence can tell
	writer := open(t, cfg, redisstore.Options{})
	reader := open(t, cfg, redisstore.Options{})
	defer reader.Close()
	ctx := context.Background()
	info := state.LogInfo{Key: "k", Fingerprint: "fp", Token: "w"}
	if _, err := writer.CreateLog(ctx, "call", info); err != nil {
		t.Fatal(err)
	}
	if err := writer.AppendLog(ctx, "call", []state.LogRecord{{Seq: 1, Data: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if in, recs, err := reader.ReadLog(ctx, "call", 1, 10, 0); err != nil || len(recs) != 0 || in.WriterGone {
		t.Fatalf("while the writer runs: %+v, %v, %v; want it alive", in, recs, err)
	}
	if got, err := reader.CreateLog(ctx, "call", info); !errors.Is(err, state.ErrLogExists) || got.WriterGone {
		t.Fatalf("CreateLog while the writer runs: %+v, %v; want ErrLogExists, writer alive", got, err)
	}
	waited := make(chan state.LogInfo, 1)
	go func() {
		in, _, _ := reader.ReadLog(ctx, "call", 1, 10, time.Hour)
		for !in.WriterGone {
			in, _, _ = reader.ReadLog(ctx, "call", 1, 10, time.Hour)
		}
		waited <- in
	}()
	redisstore.Crash(writer)
	// Records are read before the writer is looked at.
	if in, recs, err := reader.ReadLog(ctx, "call", 0, 10, 0); err != nil || len(recs) != 1 {
		t.Fatalf("after the crash, from 0: %+v, %v, %v; want the record", in, recs, err)
	}
	if in, recs, err := reader.ReadLog(ctx, "call", 1, 10, 0); err != nil || len(recs) != 0 || !in.WriterGone || in.End != state.LogOpen {
		t.Fatalf("after the crash: %+v, %v, %v; want the writer gone", in, recs, err)
	}
	if got, err := reader.CreateLog(ctx, "call", info); !errors.Is(err, state.ErrLogExists) || !got.WriterGone {
		t.Fatalf("CreateLog after the crash: %+v, %v; want ErrLogExists, writer gone", got, err)
	}
	if in := <-waited; in.Last != 1 {
		t.Fatalf("the waiting reader: %+v", in)
	}
}

// TestEndedEventLogKeptForItsHold: an ended log outlives its writer for
// its hold, and no longer.
func TestEndedEventLogKeptForItsHold(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	cfg.LeaseTTL = time.Second
	writer := open(t, cfg, redisstore.Options{})
	reader := open(t, cfg, redisstore.Options{})
	defer reader.Close()
	ctx := context.Background()
	if _, err := writer.CreateLog(ctx, "call", state.LogInfo{Token: "w"}); err != nil {
		t.Fatal(err)
	}
	end := []state.LogRecord{{Seq: 1, Data: []byte("final")}, {Seq: 2, End: state.LogSucceeded}}
	if err := writer.AppendLog(ctx, "call", end); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.KeepLog(ctx, "call", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	redisstore.Crash(writer)
	time.Sleep(2 * cfg.LeaseTTL) // past the TTL it was renewed to
	in, recs, err := reader.ReadLog(ctx, "call", 0, 10, 0)
	if err != nil || len(recs) != 2 || in.End != state.LogSucceeded {
		t.Fatalf("within its hold: %+v, %v, %v; want the ended log", in, recs, err)
	}
	ttl := srv.Client(t).PTTL(ctx, cfg.KeyPrefix+"{r:call}:log").Val()
	if ttl <= 0 || ttl > 5*time.Second {
		t.Fatalf("the log's TTL is %v, want within its hold", ttl)
	}
	poll(t, "the ended log expired with its hold", 30*time.Second, func() bool {
		_, _, err := reader.ReadLog(ctx, "call", 0, 10, 0)
		return errors.Is(err, state.ErrLogNotFound)
	})
}

// TestEventLogWhileRedisIsDown: log operations fail fast with
// ErrUnavailable while the store is unreachable, whatever
// on_store_failure says (there is no local log to fall back on).
func TestEventLogWhileRedisIsDown(t *testing.T) {
	srv := redistest.Start(t)
	s := open(t, config(srv), redisstore.Options{})
	defer s.Close()
	ctx := context.Background()
	if _, err := s.CreateLog(ctx, "call", state.LogInfo{Token: "w"}); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	poll(t, "the store noticed the outage", 30*time.Second, func() bool {
		_, _, err := s.ReadLog(ctx, "call", 0, 10, 0)
		return errors.Is(err, state.ErrUnavailable)
	})
	if err := s.AppendLog(ctx, "call", []state.LogRecord{{Seq: 1}}); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("AppendLog while down: %v", err)
	}
}

// TestBlockingReadersBeyondThePoolStarveNobody: three times as many
// readers tailing one log as the tail client has connections never make a
// reader of another log fail (go-redis gives up on a connection after its
// pool timeout, shorter than a blocking read): that reader waits its turn
// and gets every record appended to its log.
func TestBlockingReadersBeyondThePoolStarveNobody(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	cfg.ReadTimeout, cfg.WriteTimeout = 500*time.Millisecond, 500*time.Millisecond // the defaults
	cfg.PoolSize = 4
	s := open(t, cfg, redisstore.Options{FailClosed: true})
	t.Cleanup(func() { s.Close() })
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	for _, id := range []string{"busy", "other"} {
		if _, err := s.CreateLog(ctx, id, state.LogInfo{Key: id, Token: id}); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	for range 3 * cfg.PoolSize {
		go func() {
			defer func() { done <- struct{}{} }()
			for ctx.Err() == nil {
				_, _, _ = s.ReadLog(ctx, "busy", 0, 10, time.Hour)
			}
		}()
	}
	const records = 20
	go func() {
		for seq := uint64(1); seq <= records && ctx.Err() == nil; seq++ {
			time.Sleep(100 * time.Millisecond) // so that the reader waits for most of them
			if err := s.AppendLog(ctx, "other", []state.LogRecord{{Seq: seq, Data: []byte("e")}}); err != nil {
				t.Errorf("AppendLog: %v", err)
				return
			}
		}
	}()
	for after := uint64(0); after < records; {
		_, recs, err := s.ReadLog(t.Context(), "other", after, 10, time.Hour)
		if err != nil {
			t.Fatalf("reading another log while %d readers tail one: %v", 3*cfg.PoolSize, err)
		}
		for _, r := range recs {
			if r.Seq != after+1 {
				t.Fatalf("record %d after %d", r.Seq, after)
			}
			after = r.Seq
		}
	}
	stop()
	for range 3 * cfg.PoolSize {
		<-done
	}
}
