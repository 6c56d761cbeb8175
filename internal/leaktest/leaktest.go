// Package leaktest checks that tests leave no goroutine running, as goleak
// does, with a wait for goroutines on their way out that a loaded machine
// does not outrun.
//
// goleak looks again for about 0.4 s before it reports a goroutine; one
// whose end is already set in motion (a call's writer after its log was
// dropped, a closed connection's reader) may not be scheduled that soon on
// a busy machine, and was reported as a leak. The functions here look
// again for up to Wait; a goroutine that is really left running is
// reported all the same, Wait later.
package leaktest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Wait is how long goroutines that are ending have to end.
const Wait = 30 * time.Second

// Find returns nil once no unexpected goroutine runs (see goleak.Find
// for opts), or goleak's report when some still run after Wait.
func Find(opts ...goleak.Option) error { return find(Wait, opts...) }

func find(wait time.Duration, opts ...goleak.Option) error {
	deadline := time.Now().Add(wait)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// VerifyNone fails t when goroutines other than those opts allow still
// run after Wait.
func VerifyNone(t testing.TB, opts ...goleak.Option) {
	t.Helper()
	if err := Find(opts...); err != nil {
		t.Error(err)
	}
}

// VerifyTestMain runs the tests of m, then, when they passed, fails the
// run when goroutines other than those opts allow still run after Wait.
// It calls os.Exit: TestMain's last call.
func VerifyTestMain(m *testing.M, opts ...goleak.Option) {
	code := m.Run()
	if code == 0 {
		if err := Find(opts...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
