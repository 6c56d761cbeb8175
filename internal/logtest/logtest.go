// Package logtest holds what a test needs to read a log that the code
// under test writes from its own goroutines.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a log's destination (an io.Writer) that goroutines may write
// while a test reads it. The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
