package redisstore

// Crash stops s as a killed process would: no more renewals, no release,
// and its connections dropped.
func Crash(s *Store) {
	s.closed.Store(true)
	close(s.stop)
	s.wg.Wait()
	s.closeLogs()
	_ = s.rdb.Close()
}

// ErrLogsSettling is why a log is unavailable rather than not found
// moments after a restart of Redis.
var ErrLogsSettling = errLogsSettling

// BeforeAppend has f run in s's AppendLog between its read of the logs s
// writes and its script. Set it before s appends.
func BeforeAppend(s *Store, f func(id string)) { s.logs.beforeAppend = f }

// RenewLogs renews, or puts back, the running logs s writes, as its
// renewal loop does every LeaseTTL/3.
func RenewLogs(s *Store) { s.renewLogsOnce() }
