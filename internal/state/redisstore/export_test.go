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
