// Package resume owns resumable calls (GenerateRequest.resumable,
// docs/resume.md): a call that survives its client's stream. While such a
// call runs, every event its emitter numbers is also appended to the
// call's event log in the state store (state.EventLogs: this process's
// memory, or a Redis Stream that every replica can read); when the
// client's stream goes away the call runs on, detached from it, and a
// Resume (on any replica sharing the store) replays the log after the
// last event the client saw and tails it to the end.
//
// It decides, in one place:
//
//   - how long a call runs without a reader: Config.Grace after its
//     stream went away, or after its last reader left, whichever is
//     later; then it is cancelled (RESUME_GRACE_EXPIRED) and its log
//     deleted. Readers anywhere keep a call wanted through the log's hold
//     (state.EventLogs.KeepLog), which the replica running it reads
//     before giving up on it;
//   - how long a log is kept after the call ended: Config.Grace;
//   - how much is kept: Config.MaxCallBytes per call, MaxBufferedBytes
//     for all the calls of this replica (each call's own cost,
//     CallOverhead, included). A call past either stops being
//     resumable: its log ends with RESUME_BUFFER_FULL, and the call is
//     cancelled as soon as nobody on this replica reads it live;
//   - who may resume a call: the API key that started it
//     (PERMISSION_DENIED otherwise), and what a repeated Generate with the
//     id of a call still kept does (it attaches to that call; another key
//     or request: ALREADY_EXISTS; a call that failed or was lost is
//     replaced);
//   - when a call is lost (ABORTED, RESUMABLE_CALL_LOST: nothing more will
//     come, and the same request may be sent again): cut off by this
//     server's shutdown (Call.End), or found by a reader with its writer
//     gone (state.LogInfo.WriterGone: its replica crashed), which then
//     closes the log so for every later reader;
//   - what a detached call keeps of its stream's context (Detach): its
//     values, its deadline and the shutdown's cut-off, not the client's
//     cancellation.
//
// Event numbering stays the service's emitter's: this package stores and
// replays what it is given, checking only that a replay has no gap.
package resume

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/setting"
	"github.com/llmrelay/llmrelay/internal/state"
)

// Config bounds resumable calls (the config's `resume` section).
//
// It is the resume section of llmrelay's configuration: a call past a
// bound stops being resumable (RESUME_BUFFER_FULL).
type Config struct {
	// Grace is how long a call runs without a reader, waiting for a
	// Resume, and how long its events are kept after it ended.
	Grace time.Duration `yaml:"grace"`
	// MaxCallBytes bounds the events kept for one call (each costs its
	// bytes and RecordOverhead).
	MaxCallBytes int64 `yaml:"max_call_bytes"`
	// MaxBufferedBytes bounds what all the calls of this replica keep
	// (their records, and CallOverhead each), in memory or, with the redis
	// store, in Redis.
	MaxBufferedBytes int64 `yaml:"max_buffered_bytes"`
	// MaxReadersPerKey bounds the Resume streams one API key has open at
	// once (across the replicas that share a redis store), or the key's
	// max_concurrent_streams when that is higher: one key's readers cannot
	// crowd out another's.
	MaxReadersPerKey int `yaml:"max_readers_per_key"`
}

// DefaultConfig returns the resume section's defaults.
func DefaultConfig() Config {
	return Config{Grace: 60 * time.Second, MaxCallBytes: 8 << 20, MaxBufferedBytes: 256 << 20, MaxReadersPerKey: 32}
}

// Check reports the section's problems.
func (c Config) Check(p setting.Problems) {
	if c.Grace <= 0 {
		p.Bad("grace", "must be positive")
	}
	if c.MaxCallBytes <= 0 {
		p.Bad("max_call_bytes", "must be positive")
	} else if c.MaxBufferedBytes < c.MaxCallBytes {
		p.Bad("max_buffered_bytes", "%d is below resume.max_call_bytes (%d)", c.MaxBufferedBytes, c.MaxCallBytes)
	}
	if c.MaxReadersPerKey <= 0 {
		p.Bad("max_readers_per_key", "must be positive")
	}
}

// What a kept call costs, charged against the bounds and reported by
// llmrelay_resume_buffered_bytes, so that they bound the memory kept calls
// really take, however small their events (TestKeptCallsCostWhatIsCharged
// measures it).
const (
	// RecordOverhead is what each record of a log costs beyond its bytes
	// (in memory: the record; in Redis: the stream entry and its ID),
	// against both bounds.
	RecordOverhead = 64
	// CallOverhead is what each kept call costs once, against
	// MaxBufferedBytes: the Call, its place in the registry, its grace
	// timer, and the log's own record in the store.
	CallOverhead = 768
)

// recordCost is what one record holding data costs against the bounds.
func recordCost(data []byte) int64 { return int64(len(data)) + RecordOverhead }

// maxRecords is the store's safety cap on a log's records: more than the
// per-call bound lets a call keep, so it never trims a log by itself.
func (c Config) maxRecords() int { return int(c.MaxCallBytes/RecordOverhead) + 16 }

// Clock is the time the registry runs on: when a call is given up on, and
// when a reader renews its hold. The store keeps its own clock (the redis
// store's is Redis's).
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed, unless
	// the returned stop is called first (stop reports whether it was).
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// Option adjusts a Registry.
type Option func(*Registry)

// WithClock runs the registry on c instead of the wall clock; tests pass
// one they move.
func WithClock(c Clock) Option { return func(r *Registry) { r.clock = c } }

// ErrorInfo reasons of resumable calls. Stable: clients switch on them.
const (
	// NOT_FOUND: no resumable call has the request id (any more).
	ReasonNotFound = "RESUMABLE_CALL_NOT_FOUND"
	// PERMISSION_DENIED: another API key started the call.
	ReasonKeyMismatch = "RESUME_KEY_MISMATCH"
	// OUT_OF_RANGE: after_sequence is past the call's last event.
	ReasonSequenceAhead = "RESUME_SEQUENCE_AHEAD"
	// RESOURCE_EXHAUSTED: the call's events outgrew the resume bounds.
	ReasonBufferFull = "RESUME_BUFFER_FULL"
	// CANCELLED: nobody resumed the call within the grace period (the
	// status of the call itself, in its log line and metrics).
	ReasonGraceExpired = "RESUME_GRACE_EXPIRED"
	// DATA_LOSS: the call's log lost events (a store that trimmed it).
	ReasonEventsLost = "RESUME_EVENTS_LOST"
	// ALREADY_EXISTS: a resumable call with this request id is kept for
	// another request or API key.
	ReasonRequestIDInUse = "REQUEST_ID_IN_USE"
	// UNAVAILABLE: the server serving a Resume is shutting down; the call
	// goes on (on the replica that runs it): resume again.
	ReasonInterrupted = "RESUME_INTERRUPTED"
	// ABORTED: the call is gone before its end (its replica crashed, or
	// shut down before the call finished): nothing more will come. The
	// client may send the same request again (the same request_id is
	// accepted) and must discard what the lost call showed.
	ReasonLost = "RESUMABLE_CALL_LOST"
)

// storeRetryAfter is the RetryInfo delay when the store cannot be read.
const storeRetryAfter = time.Second

func errNotFound(id string) *apierr.Error {
	return &apierr.Error{Kind: apierr.NotFound, Reason: ReasonNotFound,
		Message:  "no resumable call has request_id " + id + ": it was not resumable, its grace period passed, or the replica that ran it is gone; call Generate again",
		Metadata: map[string]string{"request_id": id}}
}

func errBufferFull(id string) *apierr.Error {
	return &apierr.Error{Kind: apierr.ResourceExhausted, Reason: ReasonBufferFull,
		Message:  "the call's events outgrew the server's resume bounds, so it is no longer resumable; call Generate again",
		Metadata: map[string]string{"request_id": id}}
}

// errLost is the status of a call gone before its end: the replica running
// it crashed, or shut down before the call finished.
func errLost(id string) *apierr.Error {
	return &apierr.Error{Kind: apierr.Aborted, Reason: ReasonLost,
		Message:  "the resumable call is lost: the server running it stopped before it finished, and nothing more will come; send the same request again (its request_id is accepted) and discard what this call showed",
		Metadata: map[string]string{"request_id": id}, CallAgain: true}
}

func errGraceExpired(id string) *apierr.Error {
	return &apierr.Error{Kind: apierr.Canceled, Reason: ReasonGraceExpired,
		Message:  "the client went away and did not resume the call within the grace period",
		Metadata: map[string]string{"request_id": id}}
}

func errInUse(id string) *apierr.Error {
	return &apierr.Error{Kind: apierr.AlreadyExists, Reason: ReasonRequestIDInUse,
		Message:  "a resumable call with request_id " + id + " is kept for another request; resume it with Resume, or use a new request_id",
		Metadata: map[string]string{"request_id": id}}
}

// Interrupted returns the status of a Resume (or a repeated Generate) cut
// off because the server serving it shuts down: not the call's end, which
// runs on (on the replica that runs it), so the client resumes again,
// typically on another replica.
func Interrupted() *apierr.Error {
	return &apierr.Error{Kind: apierr.Unavailable, Reason: ReasonInterrupted,
		Message: "this server is shutting down; the call goes on: resume it again", RetryAfter: storeRetryAfter, CallAgain: true}
}

// storeError maps a store failure; ctx's own end passes as it is.
func storeError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return &apierr.Error{Kind: apierr.Unavailable, Reason: apierr.ReasonStateStoreUnavailable,
		Message: "the store of resumable calls cannot be reached right now; try again", RetryAfter: storeRetryAfter, CallAgain: true, Cause: err}
}

// CannotKeep reports whether err, from Start, says that the call cannot be
// kept for now (the store cannot be reached, or this replica's kept calls
// fill MaxBufferedBytes) rather than that it must not run: the caller may
// run it as an ordinary call, which its client can tell by the missing
// resumable header.
func CannotKeep(err error) bool {
	var ae *apierr.Error
	return errors.As(err, &ae) && (ae.Reason == apierr.ReasonStateStoreUnavailable || ae.Reason == ReasonBufferFull)
}

// ErrAttach is returned by Start when a resumable call with the id, of
// the same key and request, is kept already: the caller replays it
// (Replay from 0) instead of running the request again.
var ErrAttach = errors.New("resume: the call is kept already")

// Attaches reports whether Start, for call id of owner running the
// request fingerprinted fp, would return ErrAttach at once: a call of that
// owner and request is kept, and has neither failed nor lost its writer.
// Admission asks it before it charges a repeated Generate for a call it
// would not run (engine.Attach); one read of the log's info, no record.
// It reports false when it cannot tell (no such log, the store cannot be
// read): the request is then admitted as a new call, and Start decides.
func (r *Registry) Attaches(ctx context.Context, id string, owner Owner, fp string) bool {
	// After the last possible event: the info alone, and for a running
	// log whether its writer is still there (a store checks that only
	// when it found nothing new).
	in, _, err := r.logs.ReadLog(ctx, id, math.MaxUint64-1, 1, 0)
	return err == nil && attaches(in, owner, fp)
}

// attaches is Start's rule for the log described by in, kept already:
// the same owner and request, neither failed nor lost (create: a failed or
// lost call is replaced, another owner's or request's is in use).
func attaches(in state.LogInfo, owner Owner, fp string) bool {
	return owner.owns(in) && in.Fingerprint == fp && in.End != state.LogFailed && !(in.End == state.LogOpen && in.WriterGone)
}

// Registry runs the resumable calls of this replica and replays the logs
// of any. It outlives config reloads (the server keeps one). It is safe
// for concurrent use.
type Registry struct {
	cfg     Config
	logs    state.EventLogs
	log     *slog.Logger
	metrics *metrics.Metrics
	clock   Clock
	// cutoff ends the detached calls at the shutdown's cut-off; nil: none.
	cutoff context.Context

	// buffered is the bytes charged for the logs of this replica's calls
	// still kept.
	buffered atomic.Int64

	// closing is closed when Close begins: writers with nothing left to
	// store stop. ctx ends when the writers have had their time to finish.
	closing chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup // writers

	mu     sync.Mutex
	calls  map[string]*Call // by token
	closed bool
}

// New returns a Registry on logs. log and m may be nil.
func New(cfg Config, logs state.EventLogs, log *slog.Logger, m *metrics.Metrics, opts ...Option) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Registry{cfg: cfg, logs: logs, log: log.With("component", "resume"), metrics: m, clock: realClock{}, calls: make(map[string]*Call), closing: make(chan struct{})}
	for _, o := range opts {
		o(r)
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// Config returns the registry's bounds.
func (r *Registry) Config() Config { return r.cfg }

// Buffered returns what this replica's kept calls cost against
// MaxBufferedBytes: their events and their own cost (see CallOverhead).
func (r *Registry) Buffered() int64 { return r.buffered.Load() }

// charge takes n bytes of the replica's bound, and reports whether they
// fit.
func (r *Registry) charge(n int64) bool {
	if r.buffered.Add(n) > r.cfg.MaxBufferedBytes {
		r.buffered.Add(-n)
		return false
	}
	r.metrics.ResumeBuffered(r.buffered.Load())
	return true
}

// chargeAnyway takes n bytes of the replica's bound, fitting or not.
func (r *Registry) chargeAnyway(n int64) { r.metrics.ResumeBuffered(r.buffered.Add(n)) }

func (r *Registry) uncharge(n int64) {
	if n != 0 {
		r.metrics.ResumeBuffered(r.buffered.Add(-n))
	}
}

// Owner is the API key a resumable call belongs to: only that key may
// resume the call or attach to it. ID identifies the key itself
// (auth.Identity.ID, a digest of its secret's hash: a rename keeps it,
// and another key given the name does not have it); Name is its
// configured name, which a log a replica of an earlier version wrote is
// bound to instead. Both are "" on a server without keys.
type Owner struct{ ID, Name string }

// owns reports whether o owns the call whose log says in: by the key's ID,
// or, for a log written without one (by a replica of a version before
// it, sharing the store), by the key's name as that version decided.
func (o Owner) owns(in state.LogInfo) bool {
	if in.KeyID != "" {
		return in.KeyID == o.ID
	}
	return in.Key == o.Name
}

// Start makes call id resumable: it creates the call's log, for owner
// (the API key; the zero Owner without keys) running the request
// fingerprinted fp.
// cancel cancels the call: the registry does so, with the call's status
// as the cause, when nobody resumes it within the grace period or when its
// log outgrows the bounds while nobody reads it.
//
// When a call id is kept already: of the same owner and request, Start
// returns ErrAttach (unless it failed or was lost with its replica: then
// it is replaced); of another,
// ALREADY_EXISTS (REQUEST_ID_IN_USE). A store that cannot be reached
// fails with UNAVAILABLE; a replica whose kept calls fill
// MaxBufferedBytes, with RESOURCE_EXHAUSTED (RESUME_BUFFER_FULL).
func (r *Registry) Start(ctx context.Context, id string, owner Owner, fp string, cancel context.CancelCauseFunc) (*Call, error) {
	if !r.charge(CallOverhead) {
		return nil, errBufferFull(id)
	}
	c := &Call{r: r, id: id, token: newToken(), cancel: cancel, attached: true, charged: CallOverhead, wake: make(chan struct{}, 1)}
	c, err := r.create(ctx, c, owner, fp)
	if err != nil {
		r.uncharge(CallOverhead)
	}
	return c, err
}

// create creates c's log, for Start.
func (r *Registry) create(ctx context.Context, c *Call, owner Owner, fp string) (*Call, error) {
	id := c.id
	info := state.LogInfo{Key: owner.Name, KeyID: owner.ID, Fingerprint: fp, Token: c.token, MaxRecords: r.cfg.maxRecords()}
	confirmed := false
	for range 4 {
		got, err := r.logs.CreateLog(ctx, id, info)
		switch {
		case err == nil:
			return c, r.add(c)
		case !errors.Is(err, state.ErrLogExists):
			return nil, storeError(ctx, err)
		case !owner.owns(got) || got.Fingerprint != fp:
			return nil, errInUse(id)
		case got.End == state.LogOpen && got.WriterGone && !confirmed:
			// As a reader does (writerGoneFor): a writer reconnecting
			// to the store is not gone; look again in a second.
			if err := r.sleep(ctx, writerGoneFor); err != nil {
				return nil, err
			}
			confirmed = true
		case !attaches(got, owner, fp):
			// A call that failed, or was lost, is run again: its log
			// makes way.
			if err := r.logs.DeleteLog(ctx, id, got.Token); err != nil {
				return nil, storeError(ctx, err)
			}
		default:
			return nil, ErrAttach
		}
	}
	return nil, errInUse(id)
}

// sleep waits d on the registry's clock, or until ctx ends (its cause).
func (r *Registry) sleep(ctx context.Context, d time.Duration) error {
	done := make(chan struct{})
	stop := r.clock.AfterFunc(d, func() { close(done) })
	defer stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// add registers c and starts its writer.
func (r *Registry) add(c *Call) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		go func() { _ = r.logs.DeleteLog(context.Background(), c.id, c.token) }()
		return apierr.FromError(apierr.ErrShuttingDown)
	}
	r.calls[c.token] = c
	r.wg.Add(1)
	go c.write()
	return nil
}

// forget drops c, whose log is gone, and gives back what it charged.
func (r *Registry) forget(c *Call) {
	r.mu.Lock()
	delete(r.calls, c.token)
	r.mu.Unlock()
	c.mu.Lock()
	n := c.charged
	c.charged = 0
	c.mu.Unlock()
	r.uncharge(n)
}

// closeWait bounds how long Close waits for the writers to put the last
// events of their calls in the store.
const closeWait = 2 * time.Second

// Close stops the registry, once the server's calls have ended: it stops
// the grace timers and waits (briefly) for the writers to store the last
// events, so that the logs of ended calls stay readable (for the rest of
// their grace period, on the other replicas that share a redis store).
func (r *Registry) Close() {
	r.mu.Lock()
	if !r.closed {
		close(r.closing)
	}
	r.closed = true
	calls := make([]*Call, 0, len(r.calls))
	for _, c := range r.calls {
		calls = append(calls, c)
	}
	r.mu.Unlock()
	for _, c := range calls {
		c.stopForGood()
	}
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	r.cancel()
	<-done
}

// newToken returns a random token naming one call's log.
func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
