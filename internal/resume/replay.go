package resume

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"strconv"
	"time"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/state"
)

// readBatch is how many records one read of a log returns at most.
const readBatch = 256

// holdEvery returns how often a reader renews its hold on a log: often
// enough that the hold (Grace plus this) never lapses while it reads.
func (c Config) holdEvery() time.Duration {
	return min(max(c.Grace/3, 50*time.Millisecond), 10*time.Second)
}

// Replay sends send the events of call id whose sequence is above after,
// in order, then the call's live events as they are logged, until the
// call ends. It returns nil when the call succeeded (its final event was
// sent), the call's own status when it failed, send's error when the
// client could not be written to, or:
//
//   - NOT_FOUND (RESUMABLE_CALL_NOT_FOUND): no log id, now or any more
//     while reading (given up on, or its replica is gone);
//   - PERMISSION_DENIED (RESUME_KEY_MISMATCH): owner did not start it
//     (Owner.owns);
//   - OUT_OF_RANGE (RESUME_SEQUENCE_AHEAD): after is past the call's end;
//   - DATA_LOSS (RESUME_EVENTS_LOST): the log misses events;
//   - ABORTED (RESUMABLE_CALL_LOST): the replica running the call is gone
//     (the store says so: state.LogInfo.WriterGone), once the events it
//     logged are sent; the log then ends so, for every later reader;
//   - UNAVAILABLE (STATE_STORE_UNAVAILABLE): the store cannot be read.
//
// While it reads, Replay holds the log (state.EventLogs.KeepLog), so the
// replica running the call keeps it running; when it stops, the call gets
// the grace period again.
func (r *Registry) Replay(ctx context.Context, id string, owner Owner, after uint64, send func(data []byte) error) error {
	in, recs, err := r.logs.ReadLog(ctx, id, after, readBatch, 0)
	switch {
	case errors.Is(err, state.ErrLogNotFound):
		return errNotFound(id)
	case err != nil:
		return storeError(ctx, err)
	case !owner.owns(in):
		return &apierr.Error{Kind: apierr.PermissionDenied, Reason: ReasonKeyMismatch,
			Message:  "another API key started the call with request_id " + id + "; only that key may resume it",
			Metadata: map[string]string{"request_id": id}}
	case in.End != state.LogOpen && after >= in.Last:
		return r.ahead(ctx, id, in, after)
	}
	r.metrics.ResumeEvent(metrics.ResumeResumed)
	every := r.cfg.holdEvery()
	hold := r.cfg.Grace + every
	if _, err := r.logs.KeepLog(ctx, id, hold); err != nil {
		return r.readError(ctx, id, err)
	}
	defer r.release(id)
	renew := r.clock.Now().Add(every)
	next := after
	// goneSince is when the writer was first seen gone with nothing new
	// since; zero while it is not.
	var goneSince time.Time
	if len(recs) == 0 && in.WriterGone {
		goneSince = r.clock.Now()
	}
	for {
		for _, rec := range recs {
			if rec.Seq != next+1 {
				return &apierr.Error{Kind: apierr.DataLoss, Reason: ReasonEventsLost,
					Message:  "the call's log misses events after " + strconv.FormatUint(next, 10) + "; call Generate again",
					Metadata: map[string]string{"request_id": id}}
			}
			if rec.End != state.LogOpen {
				return outcome(rec)
			}
			if err := send(rec.Data); err != nil {
				return err
			}
			next = rec.Seq
		}
		if now := r.clock.Now(); !now.Before(renew) {
			if _, err := r.logs.KeepLog(ctx, id, hold); err != nil {
				return r.readError(ctx, id, err)
			}
			renew = now.Add(every)
		}
		in, recs, err = r.logs.ReadLog(ctx, id, next, readBatch, every)
		if err != nil {
			return r.readError(ctx, id, err)
		}
		switch {
		case len(recs) > 0:
			goneSince = time.Time{}
		case in.End != state.LogOpen && next >= in.Last:
			// The reader is ahead of an end stored after it began: its
			// live stream went on past a log that ended early.
			return r.ahead(ctx, id, in, next)
		case !in.WriterGone:
			goneSince = time.Time{}
		case goneSince.IsZero():
			goneSince = r.clock.Now()
		case r.clock.Now().Sub(goneSince) >= writerGoneFor:
			if goOn, err := r.lost(ctx, id, in); !goOn {
				return err
			}
			goneSince = time.Time{}
		}
	}
}

// writerGoneFor is how long a reader sees a log's writer gone, with
// nothing new in the log, before it takes the call for lost: a replica
// whose connection to Redis broke a moment (a network blip, a failover)
// subscribes to its presence again well within it, and its calls are not
// taken for lost (and sent again by their clients) meanwhile.
const writerGoneFor = time.Second

// lost ends the log in describes, whose writer is gone, with
// RESUMABLE_CALL_LOST, keeps it for the grace period (so that every
// reader from now on learns the same, and a client sending the request
// again replaces it), and returns its end: that one, or the writer's own
// if it got there first. goOn, with a nil error, says that the writer
// appended an event after all (it was only cut off from the store for a
// moment): the reader reads on.
func (r *Registry) lost(ctx context.Context, id string, in state.LogInfo) (goOn bool, err error) {
	end := state.LogRecord{Seq: in.Last + 1, Data: statusBytes(errLost(id)), End: state.LogFailed}
	if err := r.logs.AppendLog(ctx, id, in.Token, []state.LogRecord{end}); err != nil {
		return false, r.readError(ctx, id, err)
	}
	if _, err := r.logs.KeepLog(ctx, id, r.cfg.Grace); err != nil {
		return false, r.readError(ctx, id, err)
	}
	_, recs, err := r.logs.ReadLog(ctx, id, in.Last, 1, 0)
	switch {
	case err != nil:
		return false, r.readError(ctx, id, err)
	case len(recs) == 0:
		return false, r.readError(ctx, id, state.ErrLogNotFound)
	case recs[0].End == state.LogOpen:
		return true, nil
	case bytes.Equal(recs[0].Data, end.Data):
		r.log.Warn("resumable call lost with the replica that ran it", "request_id", id)
		r.metrics.ResumeEvent(metrics.ResumeLost)
	}
	return false, outcome(recs[0])
}

// ahead answers a reader whose after is at or past the end of the log in
// describes (in.End is not LogOpen): a client may be ahead of a log that
// ended early (full) because its live stream went on, and learns why it
// cannot resume (the end's status); past a successful end, it is
// OUT_OF_RANGE (RESUME_SEQUENCE_AHEAD).
func (r *Registry) ahead(ctx context.Context, id string, in state.LogInfo, after uint64) error {
	if in.End == state.LogFailed {
		_, end, err := r.logs.ReadLog(ctx, id, in.Last-1, 1, 0)
		if err != nil || len(end) == 0 {
			return r.readError(ctx, id, cmp.Or(err, state.ErrLogNotFound))
		}
		return outcome(end[0])
	}
	return &apierr.Error{Kind: apierr.OutOfRange, Reason: ReasonSequenceAhead,
		Message:  "after_sequence " + strconv.FormatUint(after, 10) + " is past the call's last event, " + strconv.FormatUint(in.Last-1, 10),
		Metadata: map[string]string{"request_id": id, "last_sequence": strconv.FormatUint(in.Last-1, 10)}}
}

// readError maps an error of the store while a log is read.
func (r *Registry) readError(ctx context.Context, id string, err error) error {
	if errors.Is(err, state.ErrLogNotFound) {
		return errNotFound(id)
	}
	return storeError(ctx, err)
}

// release gives the call the grace period again when a reader stops: its
// hold then passes Grace from now.
func (r *Registry) release(id string) {
	ctx, cancel := context.WithTimeout(r.ctx, keepTimeout)
	defer cancel()
	// A hold only grows: the reader's own (Grace plus a renewal period,
	// renewed) passes at most a renewal period later than this.
	_, _ = r.logs.KeepLog(ctx, id, r.cfg.Grace)
}

// outcome returns the call's outcome from its log's last record.
func outcome(rec state.LogRecord) error {
	if rec.End == state.LogSucceeded {
		return nil
	}
	var st spb.Status
	if err := proto.Unmarshal(rec.Data, &st); err != nil || st.GetCode() == 0 {
		return &apierr.Error{Kind: apierr.Unknown, Reason: apierr.ReasonInternal, Message: "the call failed", Cause: err}
	}
	return status.ErrorProto(&st)
}
