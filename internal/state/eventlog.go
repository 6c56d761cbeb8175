package state

import (
	"context"
	"errors"
	"time"
)

// EventLogs keeps the event logs of resumable calls (docs/resume.md): each
// call's events in sequence, written by the replica that runs the call and
// read, live, by any replica that shares the store, so that a client whose
// connection dropped can pick the call up where it left it. The memory
// store keeps them in this process (a call can then only be resumed on the
// replica that runs it); the redis store in one Redis Stream per call.
//
// A log is named by its call's id (the request id) and holds records
// numbered by Seq, from 1, in the order they were appended; an End record
// closes it. What the records hold is the caller's: the store only keeps
// them. Bounds on a log's size are the caller's too (internal/resume); a
// store may add a safety cap (LogInfo.MaxRecords) past which it drops a
// log's oldest records, which a reader notices as a gap in Seq.
//
// Whether a log is still wanted is its hold (KeepLog): the replica that
// runs the call reads it to decide whether anyone is still reading when
// nobody is on its side, and a store that expires logs by itself (redis)
// keeps an ended log at least that long. A store deletes a log when
// DeleteLog says so, and may delete the log of a replica that stopped
// renewing it (it crashed) within its lease TTL.
//
// It is an optional capability of a Store, found by type assertion (both
// stores implement it). Implementations are safe for concurrent use; an
// error other than ErrLogExists and ErrLogNotFound means the store could
// not be reached (it matches ErrUnavailable) or ctx ended.
// statetest.RunEventLogs is its conformance suite.
type EventLogs interface {
	// CreateLog creates the empty log id, described by info, unless a log
	// id exists: then it creates nothing and returns that log's info and
	// ErrLogExists.
	CreateLog(ctx context.Context, id string, info LogInfo) (LogInfo, error)
	// AppendLog appends recs to the log id whose Token is token, in order.
	// A record whose Seq is not above the log's last is skipped, so a batch
	// whose reply was lost may be appended again; a log that ended takes
	// nothing more. It returns ErrLogNotFound when there is no log id of
	// that token: none, or another call's that replaced it (a writer that
	// was cut off from the store, or taken for gone, never appends to its
	// successor).
	AppendLog(ctx context.Context, id, token string, recs []LogRecord) error
	// ReadLog returns the log's info and up to max of its records whose Seq
	// is above after, in order. When there are none, it waits up to wait
	// for one to be appended (0: it does not wait), and returns none if
	// none came. A log that ended, or ends while it waits (even at a Seq
	// not above after: a reader may be ahead of an end stored late), ends
	// the wait, and the info returned says so. It returns ErrLogNotFound
	// when there is no log id.
	ReadLog(ctx context.Context, id string, after uint64, max int, wait time.Duration) (LogInfo, []LogRecord, error)
	// KeepLog extends the log's hold to at least d from now (d 0 changes
	// nothing) and returns how much of it is left: 0 when it has passed. A
	// log that ended is kept at least until its hold passes. It returns
	// ErrLogNotFound when there is no log id.
	KeepLog(ctx context.Context, id string, d time.Duration) (time.Duration, error)
	// DeleteLog deletes the log id if its Token is token; otherwise, or
	// when there is no log id, it does nothing.
	DeleteLog(ctx context.Context, id, token string) error
}

// LogInfo describes a log.
type LogInfo struct {
	// Key is the name of the API key whose call writes the log ("" without
	// keys).
	Key string
	// KeyID identifies that key itself (auth.Identity.ID), which a rename
	// keeps: what the call belongs to. "" without keys, and in a log a
	// replica of a version before it wrote, which knew the key by Key
	// alone.
	KeyID string
	// Fingerprint identifies the request the call runs, so that the same
	// request id with another request can be told apart.
	Fingerprint string
	// Token identifies the writer: the one call, on one replica, that
	// created the log. DeleteLog needs it.
	Token string
	// MaxRecords is the store's safety cap on the log's records, 0 for
	// none (see EventLogs). Set at creation.
	MaxRecords int
	// Last is the Seq of the log's last record, 0 when it has none.
	Last uint64
	// End says whether and how the log ended.
	End LogEnd
	// WriterGone says that the log has not ended but the replica writing
	// it is gone (it crashed, or lost the store): nothing more will be
	// appended by it. A store reports it, when it can tell, where a log's
	// info is read and nothing new was found (ReadLog) or where one exists
	// already (CreateLog); the memory store never does (its writer is
	// this process).
	WriterGone bool
}

// LogEnd says whether and how a log ended.
type LogEnd uint8

// How a log ends.
const (
	// LogOpen: the log has not ended; records may follow.
	LogOpen LogEnd = iota
	// LogSucceeded: it ended with the call's success.
	LogSucceeded
	// LogFailed: it ended with the call's failure (or the log's own, when
	// the call outgrew it).
	LogFailed
)

// LogRecord is one record of a log.
type LogRecord struct {
	// Seq numbers the record: 1, 2, 3, ... in the order appended.
	Seq uint64
	// Data is what the record holds.
	Data []byte
	// End makes the record the log's last, ending it as it says; LogOpen
	// for every other record.
	End LogEnd
}

// Errors of EventLogs.
var (
	// ErrLogExists is returned by CreateLog when a log with the id exists.
	ErrLogExists = errors.New("state: event log exists")
	// ErrLogNotFound is returned when there is no log with the id.
	ErrLogNotFound = errors.New("state: event log not found")
)
