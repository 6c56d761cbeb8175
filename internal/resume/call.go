package resume

import (
	"context"
	"errors"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/state"
)

// Call is one resumable call this replica runs: its events go to its log
// through Append, in order, and End closes the log with the call's
// outcome. A writer goroutine puts the events in the store off the call's
// path (a Redis round trip never delays a delta), in batches, retrying
// while the store is unreachable; what is not stored yet still counts
// against the bounds. It is safe for concurrent use.
type Call struct {
	r     *Registry
	id    string
	token string

	mu sync.Mutex
	// cancel cancels the running call; nil once it finished, so that a
	// kept call does not keep its context (its request, its record) alive.
	cancel context.CancelCauseFunc
	// pending are the records not yet in the store, in order.
	pending []state.LogRecord
	// last is the Seq of the last record taken.
	last uint64
	// charged is what the call costs against MaxBufferedBytes, given back
	// when it is dropped: its own cost (CallOverhead) and its records';
	// events is what its events cost against MaxCallBytes.
	charged, events int64
	// full: a bound was passed and the log ended with RESUME_BUFFER_FULL.
	// replaced: another call with the same id has the log now.
	full, replaced bool
	// ended: the log's last record is taken; finished: the call ended.
	ended, finished bool
	// attached: the stream that started the call still reads it.
	attached bool
	// stopTimer stops the timer that gives up on the call when nobody
	// reads it; nil while someone does on this side.
	stopTimer func() bool
	// expired: the call was given up on; its log is deleted. closing:
	// the registry is closing, the timer is off for good.
	expired, closing bool
	wake             chan struct{}
}

// ID returns the call's request id.
func (c *Call) ID() string { return c.id }

// Append takes the event numbered seq, encoded as data, for the log. Past
// a bound the log ends with RESUME_BUFFER_FULL instead, and the call is
// cancelled at once if nobody reads it live. It never blocks on the store.
func (c *Call) Append(seq uint64, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.expired {
		return
	}
	cost := recordCost(data)
	if c.events+cost > c.r.cfg.MaxCallBytes || !c.r.charge(cost) {
		c.overflowLocked(seq)
		return
	}
	c.events += cost
	c.charged += cost
	c.takeLocked(state.LogRecord{Seq: seq, Data: data})
}

// endLocked takes the log's last record, ending it as end says with data
// (the status of a failure). It is charged against MaxBufferedBytes
// whatever the bound: a log always gets its end. c.mu is held.
func (c *Call) endLocked(seq uint64, end state.LogEnd, data []byte) {
	cost := recordCost(data)
	c.r.chargeAnyway(cost)
	c.charged += cost
	c.takeLocked(state.LogRecord{Seq: seq, Data: data, End: end})
}

// overflowLocked ends the log at seq with RESUME_BUFFER_FULL. c.mu is held.
func (c *Call) overflowLocked(seq uint64) {
	c.full = true
	c.r.metrics.ResumeEvent(metrics.ResumeBufferFull)
	c.r.log.Warn("resumable call past the resume bounds: no longer resumable", "request_id", c.id,
		"call_bytes", c.events, "max_call_bytes", c.r.cfg.MaxCallBytes, "max_buffered_bytes", c.r.cfg.MaxBufferedBytes)
	c.endLocked(seq, state.LogFailed, statusBytes(errBufferFull(c.id)))
	if !c.attached && !c.finished {
		c.cancel(errBufferFull(c.id))
	}
}

// takeLocked queues rec for the writer. c.mu is held.
func (c *Call) takeLocked(rec state.LogRecord) {
	c.pending = append(c.pending, rec)
	c.last = rec.Seq
	if rec.End != state.LogOpen {
		c.ended = true
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// End closes the log with the call's outcome: nil after its final event,
// else the error that ended it (as its status). seq is the Seq the end
// takes: one past the call's last event. It returns the status the call
// ends with, on its stream too: err's, except that a call cut off by the
// server's shutdown (SERVER_SHUTTING_DOWN) is lost (ABORTED,
// RESUMABLE_CALL_LOST): nothing will run it on, and its client, told so,
// may send the request again.
func (c *Call) End(seq uint64, err error) error {
	if err == nil {
		c.end(seq, state.LogSucceeded, nil)
		return nil
	}
	e := apierr.FromError(err)
	if e.Reason == apierr.ReasonShuttingDown {
		c.r.metrics.ResumeEvent(metrics.ResumeLost)
		e = errLost(c.id)
	}
	c.end(seq, state.LogFailed, statusBytes(e))
	return e
}

func (c *Call) end(seq uint64, end state.LogEnd, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished, c.cancel = true, nil
	if c.ended || c.expired {
		return
	}
	c.endLocked(seq, end, data)
}

// statusBytes encodes e's status, as a failed log's last record holds it.
func statusBytes(e *apierr.Error) []byte {
	b, _ := proto.Marshal(e.GRPCStatus().Proto())
	return b
}

// Detach says the stream that started the call no longer reads it (it
// went away, or the call ended and its handler returned): from now on
// the call waits Config.Grace for a reader before it is given up on. A
// call whose log is full is cancelled at once: nobody could resume it.
func (c *Call) Detach() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.attached {
		return
	}
	c.attached = false
	if !c.finished {
		c.r.metrics.ResumeEvent(metrics.ResumeDetached)
		switch {
		case c.full:
			c.cancel(errBufferFull(c.id))
		case c.replaced:
			c.r.metrics.ResumeEvent(metrics.ResumeLost)
			c.cancel(errLost(c.id))
		}
	}
	c.armLocked(c.r.cfg.Grace)
}

// armLocked (re)starts the timer that gives up on the call after d.
// c.mu is held.
func (c *Call) armLocked(d time.Duration) {
	if c.expired || c.closing {
		return
	}
	if c.stopTimer != nil {
		c.stopTimer()
	}
	c.stopTimer = c.r.clock.AfterFunc(d, c.expire)
}

// stopForGood stops the grace timer, for good; the writer goes on storing
// what is pending.
func (c *Call) stopForGood() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopTimer != nil {
		c.stopTimer()
	}
	c.closing = true
}

// keepTimeout bounds the store operations the grace timer makes.
const keepTimeout = 5 * time.Second

// expire runs when the call's grace timer fires. When a reader (on any
// replica) still holds the log, it waits for the hold to pass; otherwise
// it gives up on the call: a running call is cancelled, and the log is
// deleted.
func (c *Call) expire() {
	ctx, cancel := context.WithTimeout(c.r.ctx, keepTimeout)
	defer cancel()
	c.mu.Lock()
	replaced := c.replaced
	c.mu.Unlock()
	var left time.Duration
	var err error
	if !replaced { // else the hold is the other call's
		left, err = c.r.logs.KeepLog(ctx, c.id, 0)
	}
	if err != nil && !errors.Is(err, state.ErrLogNotFound) {
		// Nobody can read the log now anyway.
		c.r.log.Warn("resumable call: cannot read its log's hold; giving up on it", "request_id", c.id, "error", err)
	}
	c.mu.Lock()
	if c.expired || c.closing {
		c.mu.Unlock()
		return
	}
	if err == nil && left > 0 {
		c.stopTimer = c.r.clock.AfterFunc(left, c.expire)
		c.mu.Unlock()
		return
	}
	c.expired, c.stopTimer = true, nil
	cancelCall := c.cancel
	c.mu.Unlock()
	if cancelCall != nil { // still running
		c.r.metrics.ResumeEvent(metrics.ResumeGraceExpired)
		cancelCall(errGraceExpired(c.id))
	}
	if err := c.r.logs.DeleteLog(ctx, c.id, c.token); err != nil {
		c.r.log.Warn("resumable call: deleting its log", "request_id", c.id, "error", err)
	}
	c.r.forget(c)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Batches and retries of the writer.
const (
	writeBatch    = 256
	writeTimeout  = 10 * time.Second
	writeRetryMin = 50 * time.Millisecond
	writeRetryMax = 2 * time.Second
)

// write puts the call's records in the store, in order, until the log
// ended (then it keeps the log for the grace period) or is gone.
func (c *Call) write() {
	defer c.r.wg.Done()
	retry := writeRetryMin
	for {
		c.mu.Lock()
		batch := c.pending[:min(len(c.pending), writeBatch)]
		stop := c.expired
		c.mu.Unlock()
		if stop {
			return
		}
		if len(batch) == 0 {
			select {
			case <-c.wake:
				continue
			case <-c.r.closing:
				return // nothing left to store
			case <-c.r.ctx.Done():
				return
			}
		}
		ctx, cancel := context.WithTimeout(c.r.ctx, writeTimeout)
		err := c.r.logs.AppendLog(ctx, c.id, c.token, batch)
		cancel()
		switch {
		case err == nil:
			// Read the batch's end before its records are cleared: batch
			// shares them with pending.
			ended := batch[len(batch)-1].End != state.LogOpen
			c.mu.Lock()
			clear(c.pending[:len(batch)])
			c.pending = c.pending[len(batch):]
			if len(c.pending) == 0 {
				c.pending = nil // its array goes too
			}
			c.mu.Unlock()
			retry = writeRetryMin
			if ended {
				c.keepEnded()
				return
			}
		case errors.Is(err, state.ErrLogNotFound):
			// Given up on, or replaced by another call's (the store
			// puts back a log it lost itself).
			c.replacedBy()
			return
		default:
			// The store is unreachable: the records wait, charged
			// against the bounds, and go in order once it is back.
			t := time.NewTimer(retry)
			select {
			case <-t.C:
			case <-c.r.ctx.Done():
				t.Stop()
				return
			}
			retry = min(2*retry, writeRetryMax)
		}
	}
}

// replacedBy says that the call's log is gone though the call was not
// given up on: a reader took the call for lost (its replica was cut off
// from the store a while) and its client sent the request again, whose
// new call has the id's log now. Nobody can resume this call any more: it
// keeps nothing more, and it is cancelled as lost as soon as no stream
// reads it live, instead of running without a reader for the grace
// period (holding the key's and the provider's slots).
func (c *Call) replacedBy() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.expired || c.replaced {
		return
	}
	c.replaced, c.ended = true, true // ended: Append takes nothing more
	// Its events, stored or pending, are nobody's now: only the call's
	// own cost stays charged, until it is forgotten.
	c.pending = nil
	c.r.uncharge(c.charged - CallOverhead)
	c.charged = CallOverhead
	c.r.log.Warn("resumable call replaced by another with its request_id (taken for lost): no longer resumable", "request_id", c.id)
	if !c.attached && !c.finished {
		c.r.metrics.ResumeEvent(metrics.ResumeLost)
		c.cancel(errLost(c.id))
	}
}

// keepEnded keeps the log of the ended call for the grace period.
func (c *Call) keepEnded() {
	ctx, cancel := context.WithTimeout(c.r.ctx, keepTimeout)
	defer cancel()
	if _, err := c.r.logs.KeepLog(ctx, c.id, c.r.cfg.Grace); err != nil && !errors.Is(err, state.ErrLogNotFound) {
		c.r.log.Warn("resumable call: keeping its ended log", "request_id", c.id, "error", err)
	}
}
