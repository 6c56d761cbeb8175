package servertest

import "github.com/llmrelay/llmrelay/internal/logtest"

// LockedBuffer collects output written concurrently (a server's log, a
// subprocess's output) for a test to read: logtest.Buffer, under the name
// the server's tests know it by.
type LockedBuffer = logtest.Buffer
