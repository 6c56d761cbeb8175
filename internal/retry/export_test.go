package retry

// SetTestHookEnded makes Run tell f of each attempt of a race it saw end,
// until the test ends (see testHookEnded).
func SetTestHookEnded(cleanup func(func()), f func(n int)) {
	testHookEnded = f
	cleanup(func() { testHookEnded = nil })
}

// Targets returns how many targets' windows l keeps.
func (l *Latencies) Targets() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
