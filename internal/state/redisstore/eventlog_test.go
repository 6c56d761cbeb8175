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
	if err := writer.AppendLog(ctx, "call", "w", []state.LogRecord{{Seq: 1, Data: []byte("x")}}); err != nil {
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
	if err := writer.AppendLog(ctx, "call", "w", []state.LogRecord{{Seq: 1, Data: []byte("x")}}); err != nil {
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
	if err := writer.AppendLog(ctx, "call", "w", end); err != nil {
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
	if err := s.AppendLog(ctx, "call", "w", []state.LogRecord{{Seq: 1}}); !errors.Is(err, state.ErrUnavailable) {
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
			if err := s.AppendLog(ctx, "other", "other", []state.LogRecord{{Seq: seq, Data: []byte("e")}}); err != nil {
				t.Errorf("AppendLog of record %d: %v", seq, err)
				stop() // the reader below would wait for it for an hour
				return
			}
		}
	}()
	for after := uint64(0); after < records; {
		_, recs, err := s.ReadLog(ctx, "other", after, 10, time.Hour)
		if err != nil {
			t.Fatalf("reading another log while %d readers tail one, after record %d: %v", 3*cfg.PoolSize, after, err)
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

// TestRunningLogPutBackAfterAnEmptyRestart: redis-server restarts without
// its data while a call's log is running. The writer's replica notices the
// restart and puts the log back at once (its lease TTL is an hour: no
// routine renewal does it), from the last record it had stored: a reader
// that has those records reads on, one that needs them sees the gap, and
// the records appended after it land where they belong. The writer's
// presence comes back too, so readers do not take the call for lost.
func TestRunningLogPutBackAfterAnEmptyRestart(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	cfg.LeaseTTL = time.Hour
	writer := open(t, cfg, redisstore.Options{})
	defer writer.Close()
	reader := open(t, cfg, redisstore.Options{})
	defer reader.Close()
	ctx := t.Context()
	info := state.LogInfo{Key: "k", KeyID: "k-id", Fingerprint: "fp", Token: "w", MaxRecords: 100}
	if _, err := writer.CreateLog(ctx, "call", info); err != nil {
		t.Fatal(err)
	}
	if err := writer.AppendLog(ctx, "call", "w", records(1, 3)); err != nil {
		t.Fatal(err)
	}

	srv.Restart(t)
	var in state.LogInfo
	poll(t, "the running log put back", 30*time.Second, func() bool {
		var err error
		in, _, err = reader.ReadLog(ctx, "call", 3, 10, 0)
		return err == nil
	})
	if in.Key != "k" || in.KeyID != "k-id" || in.Fingerprint != "fp" || in.Token != "w" || in.Last != 3 || in.End != state.LogOpen {
		t.Fatalf("the log put back: %+v, want the writer's, open, from record 3", in)
	}
	poll(t, "the writer's presence back", 30*time.Second, func() bool {
		in, _, err := reader.ReadLog(ctx, "call", 3, 10, 0)
		return err == nil && !in.WriterGone
	})
	// The log and the presence come back on the restart's notice; the
	// writer's store takes itself for reachable again on its next health
	// check, which a loaded machine may run later: until then it refuses
	// the append (unavailable, as the resume writer then retries).
	waitUp(t, writer)
	if err := writer.AppendLog(ctx, "call", "w", records(4, 5)); err != nil {
		t.Fatal(err)
	}
	if _, recs, err := reader.ReadLog(ctx, "call", 3, 10, 0); err != nil || len(recs) != 2 || recs[0].Seq != 4 || recs[1].Seq != 5 {
		t.Fatalf("ReadLog after 3: %v, %v; want records 4 and 5", recs, err)
	}
	if _, recs, err := reader.ReadLog(ctx, "call", 0, 10, 0); err != nil || len(recs) == 0 || recs[0].Seq != 4 {
		t.Fatalf("ReadLog from the start: %v, %v; want the log to begin at 4 (a gap a reader sees)", recs, err)
	}
}

// TestRunningLogPutBackByItsNextAppend: a log whose keys Redis lost
// (a failover that lost the last writes) is put back by its writer's next
// append, from one before the first record it appends; if another call's
// log took the id meanwhile, the writer appends nothing to it.
func TestRunningLogPutBackByItsNextAppend(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	cfg.LeaseTTL = time.Hour
	writer := open(t, cfg, redisstore.Options{})
	defer writer.Close()
	other := open(t, cfg, redisstore.Options{})
	defer other.Close()
	rdb := srv.Client(t)
	ctx := t.Context()
	lose := func(id string) {
		t.Helper()
		tag := cfg.KeyPrefix + "{r:" + id + "}:"
		if err := rdb.Del(ctx, tag+"meta", tag+"log", tag+"hold").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"lost", "taken"} {
		if _, err := writer.CreateLog(ctx, id, state.LogInfo{Key: "k", Fingerprint: "fp", Token: "w"}); err != nil {
			t.Fatal(err)
		}
		if err := writer.AppendLog(ctx, id, "w", records(1, 2)); err != nil {
			t.Fatal(err)
		}
		lose(id)
	}

	if err := writer.AppendLog(ctx, "lost", "w", records(3, 4)); err != nil {
		t.Fatalf("AppendLog to the lost log: %v", err)
	}
	in, recs, err := other.ReadLog(ctx, "lost", 2, 10, 0)
	if err != nil || in.Token != "w" || in.Last != 4 || len(recs) != 2 || recs[0].Seq != 3 {
		t.Fatalf("the log put back: %+v, %v, %v; want records 3 and 4", in, recs, err)
	}

	if _, err := other.CreateLog(ctx, "taken", state.LogInfo{Key: "k", Fingerprint: "fp", Token: "o"}); err != nil {
		t.Fatal(err)
	}
	if err := writer.AppendLog(ctx, "taken", "w", records(3, 4)); !errors.Is(err, state.ErrLogNotFound) {
		t.Fatalf("AppendLog to a log another call took: %v, want ErrLogNotFound", err)
	}
	if in, recs, err := other.ReadLog(ctx, "taken", 0, 10, 0); err != nil || in.Token != "o" || in.Last != 0 || len(recs) != 0 {
		t.Fatalf("the other call's log: %+v, %v, %v; want it untouched", in, recs, err)
	}
}

// TestDeletedLogIsNotPutBackByAnAppendInFlight: a log deleted (its call
// given up on) while its writer's append is on its way, after the append
// took the log for its writer's, stays deleted: the append finds no log
// and must not put it back as one that Redis lost. A new call may still
// create a log under the id, and have it put back when Redis loses it.
func TestDeletedLogIsNotPutBackByAnAppendInFlight(t *testing.T) {
	srv, cfg, writer, other := runningLogOfTwo(t)
	ctx := t.Context()
	redisstore.BeforeAppend(writer, func(id string) {
		if err := writer.DeleteLog(ctx, id, "w"); err != nil {
			t.Error(err)
		}
	})
	if err := writer.AppendLog(ctx, "call", "w", records(3, 3)); !errors.Is(err, state.ErrLogNotFound) {
		t.Fatalf("AppendLog racing the log's deletion: %v, want ErrLogNotFound", err)
	}
	if in, _, err := other.ReadLog(ctx, "call", 0, 10, 0); !errors.Is(err, state.ErrLogNotFound) {
		t.Fatalf("ReadLog of the deleted log: %+v, %v; want ErrLogNotFound", in, err)
	}

	if _, err := other.CreateLog(ctx, "call", state.LogInfo{Key: "k", Fingerprint: "fp", Token: "n"}); err != nil {
		t.Fatalf("CreateLog of a new call under the id: %v", err)
	}
	tag := cfg.KeyPrefix + "{r:call}:"
	if err := srv.Client(t).Del(ctx, tag+"meta", tag+"log", tag+"hold").Err(); err != nil {
		t.Fatal(err)
	}
	if err := other.AppendLog(ctx, "call", "n", records(1, 1)); err != nil {
		t.Fatalf("AppendLog of the new call to its lost log: %v, want it put back", err)
	}
	if in, _, err := writer.ReadLog(ctx, "call", 0, 10, 0); err != nil || in.Token != "n" || in.Last != 1 {
		t.Fatalf("the new call's log: %+v, %v; want it put back", in, err)
	}
}

// TestDeletedLogIsNotPutBackByItsWritersRenewal: a running log that
// another replica deleted (a call that replaced one whose writer it took
// for gone) stays deleted when its writer, back, renews the logs it still
// takes for its own: the renewal finds no log, and must not put it back
// as one that Redis lost. The writer's next append finds it gone.
func TestDeletedLogIsNotPutBackByItsWritersRenewal(t *testing.T) {
	_, _, writer, other := runningLogOfTwo(t)
	ctx := t.Context()
	if err := other.DeleteLog(ctx, "call", "w"); err != nil {
		t.Fatal(err)
	}
	redisstore.RenewLogs(writer)
	if in, _, err := other.ReadLog(ctx, "call", 0, 10, 0); !errors.Is(err, state.ErrLogNotFound) {
		t.Fatalf("ReadLog after the writer's renewal: %+v, %v; want the deleted log not found", in, err)
	}
	if err := writer.AppendLog(ctx, "call", "w", records(3, 3)); !errors.Is(err, state.ErrLogNotFound) {
		t.Fatalf("the writer's next append: %v, want ErrLogNotFound", err)
	}
	if in, _, err := other.ReadLog(ctx, "call", 0, 10, 0); !errors.Is(err, state.ErrLogNotFound) {
		t.Fatalf("ReadLog after the writer's append: %+v, %v; want the deleted log not found", in, err)
	}
}

// runningLogOfTwo opens two replicas' stores, writer and other, on a
// redis-server of their own, with no renewal but the test's, and has
// writer create the running log "call" of token "w", records 1 and 2.
func runningLogOfTwo(t *testing.T) (srv *redistest.Server, cfg state.RedisConfig, writer, other *redisstore.Store) {
	t.Helper()
	srv = redistest.Start(t)
	cfg = config(srv)
	cfg.LeaseTTL = time.Hour
	writer = open(t, cfg, redisstore.Options{})
	t.Cleanup(func() { writer.Close() })
	other = open(t, cfg, redisstore.Options{})
	t.Cleanup(func() { other.Close() })
	ctx := t.Context()
	if _, err := writer.CreateLog(ctx, "call", state.LogInfo{Key: "k", Fingerprint: "fp", Token: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := writer.AppendLog(ctx, "call", "w", records(1, 2)); err != nil {
		t.Fatal(err)
	}
	return srv, cfg, writer, other
}

// TestLogNotFoundAfterARestartIsUnavailableAWhile: right after an empty
// restart of Redis, a log not found may be one its writer has not put
// back yet. Until every replica could have (the restart window: here
// over 10 s, a wide dial timeout), a reader is told the store is
// unavailable, so that its client resumes again instead of taking the
// call for lost; after that, not found is not found. (The writer here
// puts its log back at once; the test then deletes it, as if the writer
// were slower.) The writer's next append puts the log back again.
func TestLogNotFoundAfterARestartIsUnavailableAWhile(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	cfg.LeaseTTL = time.Hour
	cfg.DialTimeout = 10 * time.Second
	writer := open(t, cfg, redisstore.Options{})
	defer writer.Close()
	reader := open(t, cfg, redisstore.Options{})
	defer reader.Close()
	ctx := t.Context()
	if _, err := writer.CreateLog(ctx, "call", state.LogInfo{Key: "k", Token: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := writer.AppendLog(ctx, "call", "w", records(1, 3)); err != nil {
		t.Fatal(err)
	}

	srv.Restart(t)
	poll(t, "the log put back", 30*time.Second, func() bool {
		_, _, err := reader.ReadLog(ctx, "call", 3, 10, 0)
		return err == nil
	})
	tag := cfg.KeyPrefix + "{r:call}:"
	if err := srv.Client(t).Del(ctx, tag+"meta", tag+"log", tag+"hold").Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reader.ReadLog(ctx, "call", 3, 10, 0); !errors.Is(err, redisstore.ErrLogsSettling) || !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("ReadLog of a log missing right after the restart: %v, want unavailable while the logs are put back", err)
	}
	poll(t, "the restart window passes", 90*time.Second, func() bool {
		_, _, err := reader.ReadLog(ctx, "call", 3, 10, 0)
		return errors.Is(err, state.ErrLogNotFound)
	})
	if err := writer.AppendLog(ctx, "call", "w", records(4, 4)); err != nil {
		t.Fatalf("the writer's next append: %v", err)
	}
	if _, recs, err := reader.ReadLog(ctx, "call", 3, 10, 0); err != nil || len(recs) != 1 || recs[0].Seq != 4 {
		t.Fatalf("ReadLog after 3: %v, %v; want record 4", recs, err)
	}
}

// records returns records from seq from to to, each holding "e".
func records(from, to uint64) []state.LogRecord {
	var out []state.LogRecord
	for s := from; s <= to; s++ {
		out = append(out, state.LogRecord{Seq: s, Data: []byte("e")})
	}
	return out
}
