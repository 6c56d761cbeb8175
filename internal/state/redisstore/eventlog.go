package redisstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmrelay/llmrelay/internal/state"
)

// The event logs of resumable calls (state.EventLogs), one per call, in
// three keys that share the hash tag {r:<id>} (one Cluster slot):
//
//	<prefix>{r:<id>}:meta  a hash: key, fp (fingerprint), token, max
//	                       (MaxRecords), w (the writer: the replica that
//	                       created it), last (the last record's Seq) and,
//	                       once the log ended, end ("ok" or "failed")
//	<prefix>{r:<id>}:log   a Redis Stream: record n has the entry ID 0-n,
//	                       one field, "e" (an event) or the end's kind, the
//	                       record's data its value; XADD with MAXLEN ~
//	                       max, a safety cap
//	<prefix>{r:<id>}:hold  a string whose TTL is the log's hold (KeepLog)
//
// and, once DeleteLog deleted the log of a token, for LeaseTTL,
//
//	<prefix>{r:<id>}:gone:<token>  a tombstone: the log of that token
//	                               must not be put back (below)
//
// A running log expires LeaseTTL after its replica last renewed it (every
// LeaseTTL/3, in one pipeline for all its logs), so a crashed replica's
// logs go within LeaseTTL; an ended one is kept until its hold passes.
//
// A running log that Redis lost (it restarted without persistence, a
// failover lost the last writes) is put back by its writer, as the
// leases are: the next renewal (at once when a restart is noticed) or the
// next append creates its meta again, with last at the last record the
// writer had stored, or one before the first it still holds. The records
// stored before are gone: a reader that needs one finds the log starting
// later (a gap: RESUME_EVENTS_LOST), and one that has them reads on. A log
// that was deleted is never put back: DeleteLog leaves its token's
// tombstone, which the put-back of an append or a renewal that took the
// log for its writer's before the delete (on this replica, or on one that
// does not know yet that another deleted its log) respects, and a new
// call's log under the id (another token) does not see. It outlives any
// such operation in flight; a writer cut off for longer would have seen
// its log lapse anyway. Until
// every replica could have put its logs back (the restart gate's window,
// restart.go), a log not found is unavailable rather than not found, so
// a client resumes again instead of taking its call for lost.
//
// Whether a running log's writer is alive is known at once, not after the
// lease TTL: every replica holds a sharded Pub/Sub subscription to a
// channel of its own, <prefix>{p:<replica>}, for as long as it runs, and
// Redis drops it the moment the replica's connection closes (a crash, a
// kill -9). A reader that finds nothing new in a running log counts the
// writer's subscribers (PUBSUB SHARDNUMSUB): none, and the log is
// state.LogInfo.WriterGone.
// Readers tail with XREAD BLOCK on a client of their own, so a blocked read
// never takes a connection that admission needs, and a slow one never
// marks the store unreachable; the blocking reads in flight are bounded by
// that client's pool (logState.slot), so one never fails for want of a
// connection.

var _ state.EventLogs = (*Store)(nil)

// logReadBlockMax bounds one blocking read: a waiting reader comes back at
// least this often to see whether the log still exists and its writer is
// alive, and holds a slot of the tail client no longer than this.
const logReadBlockMax = 500 * time.Millisecond

// logState is the store's event log state. The zero value is ready.
type logState struct {
	once sync.Once // starts the renewal loop and the tail client
	tail redis.UniversalClient
	// slots bound the blocking reads in flight to the tail client's pool
	// size (see slot).
	slots chan struct{}
	// presence is this replica's subscription to its presence channel.
	presence *redis.PubSub
	wg       sync.WaitGroup

	// renewNow asks the renewal of the logs to run at once (Redis
	// restarted: restart.go). New makes it.
	renewNow chan struct{}

	mu    sync.Mutex
	owned map[string]ownedLog // the running logs this replica created, by id

	// beforeAppend, set by tests only, runs in AppendLog between its
	// read of owned and its script.
	beforeAppend func(id string)
}

// ownedLog is a running log this replica created: what its meta needs to
// be put back when Redis lost it.
type ownedLog struct {
	token, key, fp string
	keyID          string
	max            int    // its MaxRecords
	last           uint64 // the last Seq it stored
}

func (s *Store) logKeys(id string) []string {
	tag := s.prefix + "{r:" + id + "}:"
	return []string{tag + "meta", tag + "log", tag + "hold"}
}

// ownLogKeys are the keys of the log id of token: its three, then its
// tombstone.
func (s *Store) ownLogKeys(id, token string) []string {
	return append(s.logKeys(id), s.prefix+"{r:"+id+"}:gone:"+token)
}

// startLogs starts, once, the renewal of this replica's running logs and
// the client that blocking reads use.
func (s *Store) startLogs() {
	s.logs.once.Do(func() {
		o := *s.opts
		o.PoolSize = tailPoolSize(s.opts)
		o.MinIdleConns = 0
		s.logs.tail = redis.NewUniversalClient(&o)
		s.logs.slots = make(chan struct{}, o.PoolSize)
		s.logs.presence = s.subscribePresence()
		s.logs.owned = make(map[string]ownedLog)
		if s.closed.Load() {
			return
		}
		s.logs.wg.Add(1)
		go s.renewLogs()
	})
}

// tailPoolSize is the size of the tail client's pool: the store's own
// (pool_size, per node), or go-redis's default, 10 per CPU.
func tailPoolSize(o *redis.UniversalOptions) int {
	if o.PoolSize > 0 {
		return o.PoolSize
	}
	return 10 * runtime.GOMAXPROCS(0)
}

// slot takes one of the tail client's slots, waiting up to wait (and while
// ctx lasts) for one, and returns its release. Blocking reads hold a slot
// each, and there are as many slots as the tail client has connections
// per node, so a blocking read never waits inside go-redis for a
// connection (where a wait longer than its pool timeout is an error):
// it waits here, in turn (a channel's senders are served first come,
// first served), and each slot is given back within logReadBlockMax. A
// reader that gets none within wait reads again, which is what it does
// after a wait that saw nothing. Non-blocking operations never touch the
// tail client.
func (l *logState) slot(ctx context.Context, wait time.Duration) (release func(), ok bool) {
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, true
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, false
}

// closeLogs stops what startLogs started; Close and Crash call it once the
// store has stopped.
func (s *Store) closeLogs() {
	s.logs.wg.Wait()
	if s.logs.presence != nil {
		_ = s.logs.presence.Close()
	}
	if s.logs.tail != nil {
		_ = s.logs.tail.Close()
	}
}

// presenceChannel is the sharded Pub/Sub channel whose subscriber says
// that replica runs.
func (s *Store) presenceChannel(replica string) string {
	return s.prefix + "{p:" + replica + "}"
}

// subscribePresence subscribes this replica to its presence channel and
// waits (briefly) for Redis to confirm it, so that the logs it creates
// from now on have a writer that readers see alive. The subscription's
// own goroutine (PubSub.Channel) keeps it: it pings, and re-subscribes on
// a new connection when one fails.
func (s *Store) subscribePresence() *redis.PubSub {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.DialTimeout+s.opts.ReadTimeout)
	defer cancel()
	ps := s.rdb.SSubscribe(ctx, s.presenceChannel(s.replica))
	if _, err := ps.Receive(ctx); err != nil {
		s.log.Warn("resumable calls: cannot subscribe to this replica's presence channel yet; readers elsewhere may take its calls for lost until it can", "error", err)
	}
	ps.Channel() // nothing is ever published: this keeps the subscription
	return ps
}

// writerGone reports whether writer, the replica that created a running
// log, is gone: nobody holds its presence subscription. This replica is
// never gone to itself.
func (s *Store) writerGone(ctx context.Context, writer string) (bool, error) {
	if writer == "" || writer == s.replica {
		return false, nil
	}
	ch := s.presenceChannel(writer)
	var c redis.Cmdable = s.rdb
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		// PUBSUB SHARDNUMSUB counts on the node that serves the
		// channel's slot.
		node, err := cc.MasterForKey(ctx, ch)
		if err != nil {
			return false, err
		}
		c = node
	}
	n, err := c.PubSubShardNumSub(ctx, ch).Result()
	if err != nil {
		return false, err
	}
	return n[ch] == 0, nil
}

// logError turns a failed command of a log operation into the error it
// returns: the caller's own cancellation as it is; anything else marks the
// store unreachable and is a *state.UnavailableError.
func (s *Store) logError(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	s.metrics.StateStoreError(op)
	s.markDown(err)
	return &state.UnavailableError{Cause: err}
}

// unavailable returns the error of a log operation while the store is
// unreachable, nil while it is reachable.
func (s *Store) unavailable() error {
	if s.up.Load() {
		return nil
	}
	s.condMu.Lock()
	defer s.condMu.Unlock()
	return &state.UnavailableError{Cause: s.lastErr}
}

// createLogScript creates a log's meta, unless it exists, or puts it back.
//
//	KEYS  meta, log, hold; to put a log back, its token's tombstone too
//	ARGV  key, fingerprint, token, max records, TTL (ms), writer, last, key id
//
// It returns {} when it created the log, {logDeleted} when it would put
// back a deleted one, else the existing meta's fields. last is 0 for a new
// log, the last record stored for one put back.
var createLogScript = redis.NewScript(`
local cur = redis.call('HGETALL', KEYS[1])
if #cur > 0 then return cur end
if KEYS[4] and redis.call('EXISTS', KEYS[4]) == 1 then return {'deleted'} end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'key', ARGV[1], 'fp', ARGV[2], 'token', ARGV[3], 'max', ARGV[4], 'last', ARGV[7], 'w', ARGV[6], 'kid', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {}
`)

// logDeleted is createLogScript's answer to a put-back of a deleted log.
const logDeleted = "deleted"

// CreateLog implements state.EventLogs.
func (s *Store) CreateLog(ctx context.Context, id string, info state.LogInfo) (state.LogInfo, error) {
	if err := s.unavailable(); err != nil {
		return state.LogInfo{}, err
	}
	s.startLogs()
	res, err := createLogScript.Run(ctx, s.rdb, s.logKeys(id),
		info.Key, info.Fingerprint, info.Token, info.MaxRecords, s.ttl.Milliseconds(), s.replica, 0, info.KeyID).StringSlice()
	if err != nil {
		return state.LogInfo{}, s.logError(ctx, "create_log", err)
	}
	if len(res) > 0 {
		got, writer := parseMeta(res)
		if got.End == state.LogOpen {
			if got.WriterGone, err = s.writerGone(ctx, writer); err != nil {
				return state.LogInfo{}, s.logError(ctx, "create_log", err)
			}
		}
		return got, state.ErrLogExists
	}
	s.logs.mu.Lock()
	s.logs.owned[id] = ownedLog{token: info.Token, key: info.Key, keyID: info.KeyID, fp: info.Fingerprint, max: info.MaxRecords}
	s.logs.mu.Unlock()
	info.Last, info.End = 0, state.LogOpen
	return info, nil
}

// parseMeta reads a log's meta from HGETALL's field-value list, and its
// writer.
func parseMeta(kv []string) (in state.LogInfo, writer string) {
	for i := 0; i+1 < len(kv); i += 2 {
		v := kv[i+1]
		switch kv[i] {
		case "w":
			writer = v
		case "key":
			in.Key = v
		case "kid":
			in.KeyID = v
		case "fp":
			in.Fingerprint = v
		case "token":
			in.Token = v
		case "max":
			in.MaxRecords, _ = strconv.Atoi(v)
		case "last":
			in.Last, _ = strconv.ParseUint(v, 10, 64)
		case "end":
			in.End = endOf(v)
		}
	}
	return in, writer
}

// The stream field of a record, by how it ends the log.
const (
	fieldEvent     = "e"
	fieldSucceeded = "ok"
	fieldFailed    = "failed"
)

func fieldOf(e state.LogEnd) string {
	switch e {
	case state.LogSucceeded:
		return fieldSucceeded
	case state.LogFailed:
		return fieldFailed
	}
	return fieldEvent
}

func endOf(field string) state.LogEnd {
	switch field {
	case fieldSucceeded:
		return state.LogSucceeded
	case fieldFailed:
		return state.LogFailed
	}
	return state.LogOpen
}

// appendLogScript appends records whose Seq is above the log's last,
// until one ends it.
//
//	KEYS  meta, log, hold
//	ARGV  token, max records (0: no cap), then per record: Seq, field, data
//
// It returns -1 when there is no log of that token, 0 when it had ended
// already, 1 when it is still open, 2 when these records ended it; an
// ended log is then kept at least as long as its hold.
var appendLogScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return -1 end
if redis.call('HEXISTS', KEYS[1], 'end') == 1 then return 0 end
local last = tonumber(redis.call('HGET', KEYS[1], 'last'))
local max = tonumber(ARGV[2])
local ended = 0
for i = 3, #ARGV, 3 do
  local seq = tonumber(ARGV[i])
  if ended == 0 and seq > last then
    if max > 0 then
      redis.call('XADD', KEYS[2], 'MAXLEN', '~', max, '0-' .. ARGV[i], ARGV[i+1], ARGV[i+2])
    else
      redis.call('XADD', KEYS[2], '0-' .. ARGV[i], ARGV[i+1], ARGV[i+2])
    end
    last = seq
    if ARGV[i+1] ~= 'e' then
      redis.call('HSET', KEYS[1], 'end', ARGV[i+1])
      ended = 1
    end
  end
end
redis.call('HSET', KEYS[1], 'last', last)
local ttl = redis.call('PTTL', KEYS[1])
if ended == 1 then
  local hold = redis.call('PTTL', KEYS[3])
  if hold > ttl then
    ttl = hold
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
end
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1 + ended
`)

// AppendLog implements state.EventLogs. The writer of a running log that
// Redis lost puts it back first (see above).
func (s *Store) AppendLog(ctx context.Context, id, token string, recs []state.LogRecord) error {
	if len(recs) == 0 {
		return nil
	}
	if err := s.unavailable(); err != nil {
		return err
	}
	s.startLogs()
	// The cap: the writer knows it from CreateLog (a log is appended to by
	// the replica that created it).
	s.logs.mu.Lock()
	o, mine := s.logs.owned[id]
	s.logs.mu.Unlock()
	mine = mine && o.token == token
	if s.logs.beforeAppend != nil {
		s.logs.beforeAppend(id)
	}
	args := make([]any, 0, 2+3*len(recs))
	args = append(args, token, o.max)
	for _, r := range recs {
		args = append(args, r.Seq, fieldOf(r.End), r.Data)
	}
	for putBack := mine; ; putBack = false {
		n, err := appendLogScript.Run(ctx, s.rdb, s.logKeys(id), args...).Int()
		if err != nil {
			return s.logError(ctx, "append_log", err)
		}
		switch n {
		case -1:
			if !putBack {
				return state.ErrLogNotFound
			}
			if err := s.putBack(ctx, id, o, recs[0].Seq-1); err != nil {
				return err
			}
			continue
		case 0, 2:
			s.disown(id)
		case 1:
			if mine {
				s.stored(id, token, recs[len(recs)-1].Seq)
			}
		}
		return nil
	}
}

// putBack creates again the meta of o, the running log id that Redis
// lost, from last (its records up to last are gone). It returns
// ErrLogNotFound when the log was deleted, or another call's log took the
// id meanwhile: the writer's call is no longer the id's.
func (s *Store) putBack(ctx context.Context, id string, o ownedLog, last uint64) error {
	res, err := createLogScript.Run(ctx, s.rdb, s.ownLogKeys(id, o.token),
		o.key, o.fp, o.token, o.max, s.ttl.Milliseconds(), s.replica, last, o.keyID).StringSlice()
	if err != nil {
		return s.logError(ctx, "append_log", err)
	}
	if len(res) > 0 {
		deleted := len(res) == 1 && res[0] == logDeleted
		if got, _ := parseMeta(res); deleted || got.Token != o.token {
			s.disownToken(id, o.token)
			return state.ErrLogNotFound
		}
		return nil // put back by the renewal meanwhile
	}
	s.logPutBack(id, last)
	return nil
}

// errLogsSettling is why a log is not found in the moments after a
// restart of Redis: it may not have been put back yet.
var errLogsSettling = errors.New("redis restarted moments ago: the replicas are putting back the logs of their running calls")

// notFound is what a reader is told of a log not found: ErrLogNotFound,
// except moments after a restart of Redis, when its writer may not have
// put it back yet: until then the store is unavailable for it.
func (s *Store) notFound() error {
	if s.gate.settling() {
		return &state.UnavailableError{Cause: errLogsSettling}
	}
	return state.ErrLogNotFound
}

// logPutBack says that the running log id was put back from last.
func (s *Store) logPutBack(id string, last uint64) {
	s.log.Warn("redis lost the log of a resumable call running here (a restart without persistence, a failover): put back; "+
		"a resume from before its first record stored again fails with RESUME_EVENTS_LOST",
		"request_id", id, "from_sequence", last)
}

// stored records that the running log id of token holds the records up
// to last.
func (s *Store) stored(id, token string, last uint64) {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	if o, ok := s.logs.owned[id]; ok && o.token == token && last > o.last {
		o.last = last
		s.logs.owned[id] = o
	}
}

// disown stops renewing log id: it ended, or is gone.
func (s *Store) disown(id string) {
	s.logs.mu.Lock()
	delete(s.logs.owned, id)
	s.logs.mu.Unlock()
}

// disownToken stops renewing log id if it is token's: another call's log
// took the id.
func (s *Store) disownToken(id, token string) {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	if o, ok := s.logs.owned[id]; ok && o.token == token {
		delete(s.logs.owned, id)
	}
}

// ReadLog implements state.EventLogs: the meta and the records after seq
// in one transaction; when there are none and wait > 0, one XREAD BLOCK
// (of at most logReadBlockMax) on the tail client, holding one of its
// slots (tailWait).
func (s *Store) ReadLog(ctx context.Context, id string, after uint64, max int, wait time.Duration) (state.LogInfo, []state.LogRecord, error) {
	if err := ctx.Err(); err != nil {
		return state.LogInfo{}, nil, err
	}
	if err := s.unavailable(); err != nil {
		return state.LogInfo{}, nil, err
	}
	s.startLogs()
	keys := s.logKeys(id)
	var meta *redis.MapStringStringCmd
	var rng *redis.XMessageSliceCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		meta = p.HGetAll(ctx, keys[0])
		rng = p.XRangeN(ctx, keys[1], "(0-"+strconv.FormatUint(after, 10), "+", int64(max))
		return nil
	})
	if err != nil {
		return state.LogInfo{}, nil, s.logError(ctx, "read_log", err)
	}
	m := meta.Val()
	if len(m) == 0 {
		return state.LogInfo{}, nil, s.notFound()
	}
	kv := make([]string, 0, 2*len(m))
	for k, v := range m {
		kv = append(kv, k, v)
	}
	in, writer := parseMeta(kv)
	recs, err := records(rng.Val())
	if err != nil || len(recs) > 0 || in.End != state.LogOpen {
		return in, recs, err
	}
	// Nothing new in a running log: is anyone still writing it?
	if in.WriterGone, err = s.writerGone(ctx, writer); err != nil {
		return state.LogInfo{}, nil, s.logError(ctx, "read_log", err)
	}
	if in.WriterGone || wait <= 0 {
		return in, nil, nil
	}
	return s.tailLog(ctx, keys[1], in, after, max, wait)
}

// tailLog waits, up to wait, for a record of the open log in to be
// appended after after, with one XREAD BLOCK on the tail client. The read
// starts at the log's last record, not after, so that it also wakes when
// the log ends at a Seq not above after (a reader ahead of an end stored
// late): the returned info then says the log ended.
func (s *Store) tailLog(ctx context.Context, stream string, in state.LogInfo, after uint64, max int, wait time.Duration) (state.LogInfo, []state.LogRecord, error) {
	block := min(wait, logReadBlockMax)
	release, ok := s.logs.slot(ctx, block)
	if !ok {
		if err := ctx.Err(); err != nil {
			return state.LogInfo{}, nil, err
		}
		return in, nil, nil // every slot busy for all of the wait: read again
	}
	defer release()
	from := min(after, in.Last)
	res, err := s.logs.tail.XRead(ctx, &redis.XReadArgs{
		Streams: []string{stream, "0-" + strconv.FormatUint(from, 10)},
		Count:   int64(max),
		Block:   block,
	}).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return in, nil, nil
	case err != nil:
		if ctxErr := ctx.Err(); ctxErr != nil {
			return state.LogInfo{}, nil, ctxErr
		}
		// Not an outage of the store: a slow blocking read does not mark
		// it unreachable.
		return state.LogInfo{}, nil, &state.UnavailableError{Cause: err}
	}
	if len(res) == 0 {
		return in, nil, nil
	}
	got, err := records(res[0].Messages)
	if err != nil {
		return state.LogInfo{}, nil, err
	}
	recs := got[:0]
	for _, r := range got {
		if r.Seq > in.Last {
			in.Last = r.Seq
		}
		if r.End != state.LogOpen {
			in.End = r.End
		}
		if r.Seq > after {
			recs = append(recs, r)
		}
	}
	return in, recs, nil
}

// records decodes stream entries into records.
func records(msgs []redis.XMessage) ([]state.LogRecord, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	out := make([]state.LogRecord, 0, len(msgs))
	for _, m := range msgs {
		_, n, ok := strings.Cut(m.ID, "-")
		seq, err := strconv.ParseUint(n, 10, 64)
		if !ok || err != nil || len(m.Values) != 1 {
			return nil, fmt.Errorf("redisstore: event log entry %q is not llmrelay's", m.ID)
		}
		for field, v := range m.Values {
			data, _ := v.(string)
			out = append(out, state.LogRecord{Seq: seq, Data: []byte(data), End: endOf(field)})
		}
	}
	return out, nil
}

// keepLogScript extends a log's hold, and keeps an ended log that long.
//
//	KEYS  meta, log, hold
//	ARGV  the hold wanted from now (ms); 0 changes nothing
//
// It returns -1 when there is no log, else the hold left (ms).
var keepLogScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local d = tonumber(ARGV[1])
local cur = redis.call('PTTL', KEYS[3])
if cur < 0 then cur = 0 end
if d > cur then
  redis.call('SET', KEYS[3], '1', 'PX', d)
  cur = d
end
if cur > 0 and redis.call('HEXISTS', KEYS[1], 'end') == 1 and redis.call('PTTL', KEYS[1]) < cur then
  redis.call('PEXPIRE', KEYS[1], cur)
  redis.call('PEXPIRE', KEYS[2], cur)
end
return cur
`)

// KeepLog implements state.EventLogs, on Redis's clock.
func (s *Store) KeepLog(ctx context.Context, id string, d time.Duration) (time.Duration, error) {
	if err := s.unavailable(); err != nil {
		return 0, err
	}
	ms := d.Milliseconds()
	if d > 0 && ms == 0 {
		ms = 1
	}
	n, err := keepLogScript.Run(ctx, s.rdb, s.logKeys(id), ms).Int64()
	if err != nil {
		return 0, s.logError(ctx, "keep_log", err)
	}
	if n < 0 {
		return 0, s.notFound()
	}
	return time.Duration(n) * time.Millisecond, nil
}

// deleteLogScript deletes a log unless it is another token's, and leaves
// the token's tombstone.
//
//	KEYS  meta, log, hold, the token's tombstone
//	ARGV  token, the tombstone's TTL (ms)
var deleteLogScript = redis.NewScript(`
local tok = redis.call('HGET', KEYS[1], 'token')
if tok and tok ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('SET', KEYS[4], '1', 'PX', ARGV[2])
return 0
`)

// DeleteLog implements state.EventLogs.
func (s *Store) DeleteLog(ctx context.Context, id, token string) error {
	s.disownToken(id, token)
	if err := s.unavailable(); err != nil {
		return err
	}
	if err := deleteLogScript.Run(ctx, s.rdb, s.ownLogKeys(id, token), token, s.ttl.Milliseconds()).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return s.logError(ctx, "delete_log", err)
	}
	return nil
}

// renewLogScript pushes a running log's expiry forward, if it is still
// the writer's (token ARGV[1]), and puts it back if Redis lost it.
//
//	KEYS  meta, log, hold, the token's tombstone
//	ARGV  token, TTL (ms), key, fingerprint, max records, writer, last, key id
//
// It returns 0 when it renewed the log (or it ended), 1 when it put it
// back, -1 when the id is another call's or the log was deleted.
var renewLogScript = redis.NewScript(`
local tok = redis.call('HGET', KEYS[1], 'token')
if not tok then
  if redis.call('EXISTS', KEYS[4]) == 1 then return -1 end
  redis.call('DEL', KEYS[2], KEYS[3])
  redis.call('HSET', KEYS[1], 'key', ARGV[3], 'fp', ARGV[4], 'token', ARGV[1], 'max', ARGV[5], 'last', ARGV[7], 'w', ARGV[6], 'kid', ARGV[8])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if tok ~= ARGV[1] then return -1 end
if redis.call('HEXISTS', KEYS[1], 'end') == 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return 0
`)

// renewLogs renews this replica's running logs every LeaseTTL/3, all in
// one pipelined round trip, and at once when Redis restarted, until the
// store stops.
func (s *Store) renewLogs() {
	defer s.logs.wg.Done()
	t := time.NewTicker(s.ttl / 3)
	defer t.Stop()
	for {
		restarted := false
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.logs.renewNow:
			restarted = true
		}
		// While the store is down a routine renewal would only fail;
		// after a restart, the store may not know yet that it is up.
		if restarted || s.up.Load() {
			s.renewLogsOnce()
		}
	}
}

// renewLogsOnce renews, or puts back, every running log this replica
// writes, in one pipeline.
func (s *Store) renewLogsOnce() {
	s.logs.mu.Lock()
	owned := make(map[string]ownedLog, len(s.logs.owned))
	maps.Copy(owned, s.logs.owned)
	s.logs.mu.Unlock()
	if len(owned) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.ttl/3)
	defer cancel()
	pipe := s.rdb.Pipeline()
	cmds := make(map[string]*redis.Cmd, len(owned))
	for id, o := range owned {
		cmds[id] = renewLogScript.Eval(ctx, pipe, s.ownLogKeys(id, o.token),
			o.token, s.ttl.Milliseconds(), o.key, o.fp, o.max, s.replica, o.last, o.keyID)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.metrics.StateStoreError("renew_log")
		s.markDown(err)
		return
	}
	for id, cmd := range cmds {
		switch n, _ := cmd.Int(); n {
		case 1:
			s.logPutBack(id, owned[id].last)
		case -1:
			s.disownToken(id, owned[id].token)
		}
	}
}
