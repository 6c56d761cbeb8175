package memory

import (
	"context"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
)

var _ state.EventLogs = (*Store)(nil)

// eventLogs are the store's event logs (state.EventLogs), by id. The
// zero value is ready.
type eventLogs struct {
	mu   sync.Mutex
	logs map[string]*eventLog
}

// eventLog is one log. Its fields are guarded by eventLogs.mu.
type eventLog struct {
	info state.LogInfo
	recs []state.LogRecord
	// hold is when the log's hold passes (KeepLog).
	hold time.Time
	// grew is closed, and replaced, whenever records are appended or the
	// log is deleted, waking the readers waiting for them.
	grew chan struct{}
}

// CreateLog implements state.EventLogs.
func (s *Store) CreateLog(ctx context.Context, id string, info state.LogInfo) (state.LogInfo, error) {
	if err := ctx.Err(); err != nil {
		return state.LogInfo{}, err
	}
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	if l, ok := s.logs.logs[id]; ok {
		return l.info, state.ErrLogExists
	}
	if s.logs.logs == nil {
		s.logs.logs = make(map[string]*eventLog)
	}
	info.Last, info.End = 0, state.LogOpen
	s.logs.logs[id] = &eventLog{info: info, grew: make(chan struct{})}
	return info, nil
}

// AppendLog implements state.EventLogs.
func (s *Store) AppendLog(ctx context.Context, id, token string, recs []state.LogRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	l, ok := s.logs.logs[id]
	if !ok || l.info.Token != token {
		return state.ErrLogNotFound
	}
	// The records' data is copied into one allocation per batch: a kept
	// log costs its bytes, not a rounded-up allocation per record.
	size := 0
	for _, r := range recs {
		size += len(r.Data)
	}
	buf := make([]byte, 0, size)
	added := false
	for _, r := range recs {
		if l.info.End != state.LogOpen || r.Seq <= l.info.Last {
			continue
		}
		start := len(buf)
		buf = append(buf, r.Data...)
		r.Data = buf[start:len(buf):len(buf)]
		l.recs = append(l.recs, r)
		l.info.Last, l.info.End = r.Seq, r.End
		added = true
	}
	switch max := l.info.MaxRecords; {
	case max > 0 && len(l.recs) > max:
		l.recs = append(l.recs[:0:0], l.recs[len(l.recs)-max:]...)
	case added && l.info.End != state.LogOpen:
		// An ended log is kept as it is for its hold: without the room
		// its growth left.
		l.recs = append(l.recs[:0:0], l.recs...)
	}
	if added {
		close(l.grew)
		l.grew = make(chan struct{})
	}
	return nil
}

// ReadLog implements state.EventLogs.
func (s *Store) ReadLog(ctx context.Context, id string, after uint64, max int, wait time.Duration) (state.LogInfo, []state.LogRecord, error) {
	var timeout <-chan time.Time
	for {
		if err := ctx.Err(); err != nil {
			return state.LogInfo{}, nil, err
		}
		s.logs.mu.Lock()
		l, ok := s.logs.logs[id]
		if !ok {
			s.logs.mu.Unlock()
			return state.LogInfo{}, nil, state.ErrLogNotFound
		}
		info, recs, grew := l.info, l.after(after, max), l.grew
		s.logs.mu.Unlock()
		if len(recs) > 0 || wait <= 0 || info.End != state.LogOpen {
			return info, recs, nil
		}
		if timeout == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-grew:
		case <-timeout:
			return info, nil, nil
		case <-ctx.Done():
			return state.LogInfo{}, nil, ctx.Err()
		}
	}
}

// after returns up to max records with Seq above seq; the data is shared
// (records are never changed once appended).
func (l *eventLog) after(seq uint64, max int) []state.LogRecord {
	i := 0
	for i < len(l.recs) && l.recs[i].Seq <= seq {
		i++
	}
	n := min(len(l.recs)-i, max)
	if n <= 0 {
		return nil
	}
	return append([]state.LogRecord(nil), l.recs[i:i+n]...)
}

// KeepLog implements state.EventLogs, on the store's clock.
func (s *Store) KeepLog(ctx context.Context, id string, d time.Duration) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	now := s.now()
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	l, ok := s.logs.logs[id]
	if !ok {
		return 0, state.ErrLogNotFound
	}
	if until := now.Add(d); d > 0 && until.After(l.hold) {
		l.hold = until
	}
	return max(0, l.hold.Sub(now)), nil
}

// DeleteLog implements state.EventLogs. Readers waiting on the log wake
// and find it gone.
func (s *Store) DeleteLog(ctx context.Context, id, token string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	if l, ok := s.logs.logs[id]; ok && l.info.Token == token {
		delete(s.logs.logs, id)
		close(l.grew)
	}
	return nil
}
