package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
)

// NewEventLogs returns fresh, empty event logs for one test, closed (if
// they need it) by the test's cleanup.
type NewEventLogs func(t *testing.T) state.EventLogs

// RunEventLogs runs the conformance suite of state.EventLogs against the
// implementations newLogs makes. Waits are in real time, with margins no
// loaded machine reaches: a reader that should wake is given 30s, which
// it only uses if it fails to.
func RunEventLogs(t *testing.T, newLogs NewEventLogs) {
	tests := []struct {
		name string
		run  func(*testing.T, state.EventLogs)
	}{
		{"CreateOnce", testLogCreateOnce},
		{"AppendAndReadInOrder", testLogAppendRead},
		{"ReadAfterAndMax", testLogReadAfter},
		{"AppendAgainSkipsWhatIsThere", testLogAppendIdempotent},
		{"EndClosesTheLog", testLogEnd},
		{"ReadWaitsForAppend", testLogReadWaits},
		{"ReadWaitEndsEmpty", testLogReadWaitEnds},
		{"ReadAheadWakesAtTheEnd", testLogReadAheadWakesAtTheEnd},
		{"ConcurrentReadersSeeEverything", testLogConcurrentReaders},
		{"UnknownLog", testLogUnknown},
		{"DeleteNeedsTheToken", testLogDelete},
		{"KeepExtendsTheHold", testLogKeep},
		{"DataKeptByteForByte", testLogBinary},
		{"LogsAreIndependent", testLogsIndependent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newLogs(t)) })
	}
}

// logID returns a fresh log id for a test.
func logID(t *testing.T, n int) string {
	return fmt.Sprintf("%s-%d-%d", t.Name(), time.Now().UnixNano(), n)
}

func info(token string) state.LogInfo {
	return state.LogInfo{Key: "key-a", KeyID: "key-a-id", Fingerprint: "fp-1", Token: token, MaxRecords: 10000}
}

func create(t *testing.T, l state.EventLogs, id string, in state.LogInfo) {
	t.Helper()
	if _, err := l.CreateLog(t.Context(), id, in); err != nil {
		t.Fatalf("CreateLog(%s): %v", id, err)
	}
}

func appendRecs(t *testing.T, l state.EventLogs, id, token string, recs ...state.LogRecord) {
	t.Helper()
	if err := l.AppendLog(t.Context(), id, token, recs); err != nil {
		t.Fatalf("AppendLog(%s): %v", id, err)
	}
}

// events returns records from seq from to to (inclusive), each holding
// "event <seq>".
func events(from, to uint64) []state.LogRecord {
	var out []state.LogRecord
	for s := from; s <= to; s++ {
		out = append(out, state.LogRecord{Seq: s, Data: []byte("event " + strconv.FormatUint(s, 10))})
	}
	return out
}

func read(t *testing.T, l state.EventLogs, id string, after uint64, max int) (state.LogInfo, []state.LogRecord) {
	t.Helper()
	in, recs, err := l.ReadLog(t.Context(), id, after, max, 0)
	if err != nil {
		t.Fatalf("ReadLog(%s, after %d): %v", id, after, err)
	}
	return in, recs
}

// wantSeqs fails unless recs are numbered exactly want..., each holding
// what events made for it.
func wantSeqs(t *testing.T, recs []state.LogRecord, want ...uint64) {
	t.Helper()
	got := make([]uint64, len(recs))
	for i, r := range recs {
		got[i] = r.Seq
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	for _, r := range recs {
		if r.End == state.LogOpen && string(r.Data) != "event "+strconv.FormatUint(r.Seq, 10) {
			t.Fatalf("record %d holds %q", r.Seq, r.Data)
		}
	}
}

func testLogCreateOnce(t *testing.T, l state.EventLogs) {
	id := logID(t, 0)
	create(t, l, id, info("tok-1"))
	got, err := l.CreateLog(t.Context(), id, state.LogInfo{Key: "key-b", KeyID: "key-b-id", Fingerprint: "fp-2", Token: "tok-2"})
	if !errors.Is(err, state.ErrLogExists) {
		t.Fatalf("second CreateLog: %v, want ErrLogExists", err)
	}
	if got.Key != "key-a" || got.KeyID != "key-a-id" || got.Fingerprint != "fp-1" || got.Token != "tok-1" || got.End != state.LogOpen || got.Last != 0 {
		t.Fatalf("second CreateLog reports %+v, want the first log's info", got)
	}
	in, recs := read(t, l, id, 0, 10)
	if len(recs) != 0 || in.Key != "key-a" || in.KeyID != "key-a-id" || in.Token != "tok-1" {
		t.Fatalf("ReadLog of the new log: %+v, %v", in, recs)
	}
}

func testLogAppendRead(t *testing.T, l state.EventLogs) {
	id := logID(t, 0)
	create(t, l, id, info("tok"))
	appendRecs(t, l, id, "tok", events(1, 3)...)
	appendRecs(t, l, id, "tok", events(4, 5)...)
	in, recs := read(t, l, id, 0, 100)
	wantSeqs(t, recs, 1, 2, 3, 4, 5)
	if in.Last != 5 || in.End != state.LogOpen {
		t.Fatalf("info after 5 records: %+v", in)
	}
}

func testLogReadAfter(t *testing.T, l state.EventLogs) {
	id := logID(t, 0)
	create(t, l, id, info("tok"))
	appendRecs(t, l, id, "tok", events(1, 10)...)
	_, recs := read(t, l, id, 4, 3)
	wantSeqs(t, recs, 5, 6, 7)
	_, recs = read(t, l, id, 7, 100)
	wantSeqs(t, recs, 8, 9, 10)
	_, recs = read(t, l, id, 10, 100)
	wantSeqs(t, recs)
	_, recs = read(t, l, id, 50, 100)
	wantSeqs(t, recs)
}

func testLogAppendIdempotent(t *testing.T, l state.EventLogs) {
	id := logID(t, 0)
	create(t, l, id, info("tok"))
	appendRecs(t, l, id, "tok", events(1, 3)...)
	appendRecs(t, l, id, "tok", events(1, 3)...) // a batch whose reply was lost, again
	appendRecs(t, l, id, "tok", events(2, 5)...) // overlapping
	_, recs := read(t, l, id, 0, 100)
	wantSeqs(t, recs, 1, 2, 3, 4, 5)
}

func testLogEnd(t *testing.T, l state.EventLogs) {
	for _, end := range []state.LogEnd{state.LogSucceeded, state.LogFailed} {
		t.Run(strconv.Itoa(int(end)), func(t *testing.T) {
			id := logID(t, int(end))
			create(t, l, id, info("tok"))
			appendRecs(t, l, id, "tok", append(events(1, 2), state.LogRecord{Seq: 3, Data: []byte("outcome"), End: end})...)
			appendRecs(t, l, id, "tok", events(4, 5)...) // after the end: dropped
			in, recs := read(t, l, id, 0, 100)
			if len(recs) != 3 || recs[2].End != end || string(recs[2].Data) != "outcome" {
				t.Fatalf("records %+v, want 2 events and the end", recs)
			}
			wantSeqs(t, recs[:2], 1, 2)
			if in.End != end || in.Last != 3 {
				t.Fatalf("info %+v, want ended %d after 3", in, end)
			}
			got, err := l.CreateLog(t.Context(), id, info("other"))
			if !errors.Is(err, state.ErrLogExists) || got.End != end {
				t.Fatalf("CreateLog of the ended log: %+v, %v", got, err)
			}
		})
	}
}

func testLogReadWaits(t *testing.T, l state.EventLogs) {
	id := logID(t, 0)
	create(t, l, id, info("tok"))
	appendRecs(t, l, id, "tok", events(1, 2)...)
	type result struct {
		recs []state.LogRecord
		err  error
	}
	done := make(chan result, 1)
	go func() {
		_, recs, err := l.ReadLog(t.Context(), id, 2, 100, 30*time.Second)
		done <- result{recs, err}
	}()
	appendRecs(t, l, id, "tok", events(3, 4)...)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.recs) == 0 {
		t.Fatal("the waiting reader got nothing although records were appended")
	}
	wantSeqs(t, r.recs, []uint64{3, 4}[:len(r.recs)]...)
}

func testLogReadWaitEnds(t *testing.T, l state.EventLogs) {
	id := logID(t, 0)
	create(t, l, id, info("tok"))
	in, recs, err := l.ReadLog(t.Context(), id, 0, 100, 50*time.Millisecond)
	if err != nil || len(recs) != 0 || in.Token != "tok" {
		t.Fatalf("ReadLog with nothing to read: %+v, %v, %v", in, recs, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := l.ReadLog(ctx, id, 0, 100, time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadLog with a cancelled context: %v", err)
	}
}

// testLogReadAheadWakesAtTheEnd: a reader waiting after a Seq that the
// log's end, appended later, does not reach (a client ahead of a log that
// ended early) wakes when the end is stored and learns the log ended,
// rather than wait all of its wait.
func testLogReadAheadWakesAtTheEnd(t *testing.T, l state.EventLogs) {
	id := logID(t, 0)
	create(t, l, id, info("tok"))
	appendRecs(t, l, id, "tok", events(1, 3)...)
	type result struct {
		in   state.LogInfo
		recs []state.LogRecord
		err  error
	}
	done := make(chan result, 1)
	go func() {
		in, recs, err := l.ReadLog(t.Context(), id, 5, 100, time.Hour)
		done <- result{in, recs, err}
	}()
	appendRecs(t, l, id, "tok", state.LogRecord{Seq: 4, Data: []byte("status"), End: state.LogFailed})
	for {
		r := <-done
		if r.err != nil || len(r.recs) != 0 {
			t.Fatalf("ReadLog ahead of the end: %v, %v; want no records", r.recs, r.err)
		}
		if r.in.End == state.LogFailed && r.in.Last == 4 {
			return
		}
		if r.in.End != state.LogOpen {
			t.Fatalf("ReadLog ahead of the end: %+v, want it ended (failed) at 4", r.in)
		}
		// The wait began before the end was appended and passed (a store
		// may wait less than asked): wait again, as a tailing reader does.
		go func() {
			in, recs, err := l.ReadLog(t.Context(), id, 5, 100, time.Hour)
			done <- result{in, recs, err}
		}()
	}
}

// testLogConcurrentReaders: readers tailing while a writer appends one
// record at a time each see every record once, in order.
func testLogConcurrentReaders(t *testing.T, l state.EventLogs) {
	id := logID(t, 0)
	create(t, l, id, info("tok"))
	const n = 60
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() {
			var after uint64
			for after < n {
				_, recs, err := l.ReadLog(t.Context(), id, after, 7, 30*time.Second)
				if err != nil {
					errs <- err
					return
				}
				for _, r := range recs {
					if r.Seq != after+1 {
						errs <- fmt.Errorf("after %d got %d", after, r.Seq)
						return
					}
					after = r.Seq
				}
			}
		})
	}
	for s := uint64(1); s <= n; s++ {
		appendRecs(t, l, id, "tok", events(s, s)...)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func testLogUnknown(t *testing.T, l state.EventLogs) {
	ctx := t.Context()
	id := logID(t, 0)
	if err := l.AppendLog(ctx, id, "tok", events(1, 1)); !errors.Is(err, state.ErrLogNotFound) {
		t.Errorf("AppendLog: %v, want ErrLogNotFound", err)
	}
	if _, _, err := l.ReadLog(ctx, id, 0, 10, 0); !errors.Is(err, state.ErrLogNotFound) {
		t.Errorf("ReadLog: %v, want ErrLogNotFound", err)
	}
	if _, _, err := l.ReadLog(ctx, id, 0, 10, 100*time.Millisecond); !errors.Is(err, state.ErrLogNotFound) {
		t.Errorf("ReadLog with a wait: %v, want ErrLogNotFound", err)
	}
	if _, err := l.KeepLog(ctx, id, time.Second); !errors.Is(err, state.ErrLogNotFound) {
		t.Errorf("KeepLog: %v, want ErrLogNotFound", err)
	}
	if err := l.DeleteLog(ctx, id, "tok"); err != nil {
		t.Errorf("DeleteLog: %v, want nil", err)
	}
}

func testLogDelete(t *testing.T, l state.EventLogs) {
	id := logID(t, 0)
	create(t, l, id, info("tok"))
	appendRecs(t, l, id, "tok", events(1, 2)...)
	if err := l.DeleteLog(t.Context(), id, "not-the-token"); err != nil {
		t.Fatal(err)
	}
	_, recs := read(t, l, id, 0, 10)
	wantSeqs(t, recs, 1, 2)
	if err := l.DeleteLog(t.Context(), id, "tok"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.ReadLog(t.Context(), id, 0, 10, 0); !errors.Is(err, state.ErrLogNotFound) {
		t.Fatalf("ReadLog after DeleteLog: %v, want ErrLogNotFound", err)
	}
	// The id is free again.
	create(t, l, id, info("tok-2"))
	in, recs := read(t, l, id, 0, 10)
	if len(recs) != 0 || in.Token != "tok-2" || in.Last != 0 {
		t.Fatalf("the log created again: %+v, %v", in, recs)
	}
	// The first log's writer, back from being cut off, appends nothing
	// to its successor, and a foreign token appends nothing either.
	appendRecs(t, l, id, "tok-2", events(1, 1)...)
	for _, tok := range []string{"tok", "not-the-token"} {
		if err := l.AppendLog(t.Context(), id, tok, events(2, 3)); !errors.Is(err, state.ErrLogNotFound) {
			t.Fatalf("AppendLog with token %q to another's log: %v, want ErrLogNotFound", tok, err)
		}
	}
	in, recs = read(t, l, id, 0, 10)
	wantSeqs(t, recs, 1)
	if in.Last != 1 {
		t.Fatalf("the successor's log: %+v", in)
	}
}

func testLogKeep(t *testing.T, l state.EventLogs) {
	ctx := t.Context()
	id := logID(t, 0)
	create(t, l, id, info("tok"))
	if left, err := l.KeepLog(ctx, id, 0); err != nil || left != 0 {
		t.Fatalf("KeepLog(0) of a new log: %v, %v; want 0", left, err)
	}
	left, err := l.KeepLog(ctx, id, time.Minute)
	if err != nil || left <= 50*time.Second || left > time.Minute {
		t.Fatalf("KeepLog(1m): %v, %v", left, err)
	}
	// A shorter hold does not shorten it.
	left, err = l.KeepLog(ctx, id, time.Second)
	if err != nil || left <= 50*time.Second {
		t.Fatalf("KeepLog(1s) after KeepLog(1m): %v, %v; want the minute kept", left, err)
	}
	if left, err = l.KeepLog(ctx, id, 0); err != nil || left <= 50*time.Second {
		t.Fatalf("KeepLog(0): %v, %v; want what is left of the minute", left, err)
	}
	// An ended log is kept, readable, for its hold.
	appendRecs(t, l, id, "tok", state.LogRecord{Seq: 1, Data: []byte("ok"), End: state.LogSucceeded})
	in, recs := read(t, l, id, 0, 10)
	if in.End != state.LogSucceeded || len(recs) != 1 {
		t.Fatalf("the ended log: %+v, %v", in, recs)
	}
}

func testLogBinary(t *testing.T, l state.EventLogs) {
	id := logID(t, 0)
	create(t, l, id, info("tok"))
	data := make([]byte, 256*3)
	for i := range data {
		data[i] = byte(i)
	}
	appendRecs(t, l, id, "tok", state.LogRecord{Seq: 1, Data: data}, state.LogRecord{Seq: 2}, state.LogRecord{Seq: 3, Data: data[:1], End: state.LogFailed})
	_, recs := read(t, l, id, 0, 10)
	if len(recs) != 3 || !bytes.Equal(recs[0].Data, data) || len(recs[1].Data) != 0 || !bytes.Equal(recs[2].Data, data[:1]) || recs[2].End != state.LogFailed {
		t.Fatalf("records not kept byte for byte: %d records", len(recs))
	}
}

func testLogsIndependent(t *testing.T, l state.EventLogs) {
	a, b := logID(t, 1), logID(t, 2)
	create(t, l, a, info("tok-a"))
	create(t, l, b, info("tok-b"))
	appendRecs(t, l, a, "tok-a", events(1, 3)...)
	appendRecs(t, l, b, "tok-b", events(1, 1)...)
	appendRecs(t, l, b, "tok-b", state.LogRecord{Seq: 2, End: state.LogSucceeded})
	ia, ra := read(t, l, a, 0, 10)
	ib, rb := read(t, l, b, 0, 10)
	if len(ra) != 3 || ia.End != state.LogOpen || len(rb) != 2 || ib.End != state.LogSucceeded {
		t.Fatalf("logs mixed up: a %+v %d records, b %+v %d records", ia, len(ra), ib, len(rb))
	}
	if err := l.DeleteLog(t.Context(), a, "tok-a"); err != nil {
		t.Fatal(err)
	}
	if _, recs := read(t, l, b, 0, 10); len(recs) != 2 {
		t.Fatalf("deleting a took b's records: %d left", len(recs))
	}
}
