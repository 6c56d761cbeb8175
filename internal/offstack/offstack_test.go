package offstack_test

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/llmrelay/llmrelay/internal/offstack"
)

func TestRunReturnsWhatTheFunctionReturned(t *testing.T) {
	errBoom := errors.New("boom")
	n, err := offstack.Run2(func() (int, error) { return 7, errBoom })
	if n != 7 || !errors.Is(err, errBoom) {
		t.Errorf("Run2 = %d, %v; want 7, boom", n, err)
	}
	if got := offstack.Run(func() string { return "ok" }); got != "ok" {
		t.Errorf("Run = %q, want ok", got)
	}
}

func panicsInSetup() int { panic("boom in setup") }

// TestPanicIsRaisedOnTheCaller: a recovery on the caller's goroutine gets
// the panic, with its value and the stack where it happened.
func TestPanicIsRaisedOnTheCaller(t *testing.T) {
	var p any
	func() {
		defer func() { p = recover() }()
		offstack.Run(panicsInSetup)
	}()
	op, ok := p.(*offstack.Panic)
	if !ok {
		t.Fatalf("recovered %T %v, want *offstack.Panic", p, p)
	}
	if op.Value != "boom in setup" || !strings.Contains(string(op.Stack), "offstack_test.panicsInSetup") {
		t.Errorf("panic %v with stack\n%s\nwant the value and panicsInSetup's frame", op.Value, op.Stack)
	}
}

// TestGoexitEndsTheCaller: a function that ends its goroutine
// (runtime.Goexit, as t.FailNow does) ends the caller's too.
func TestGoexitEndsTheCaller(t *testing.T) {
	var wg sync.WaitGroup
	returned := false
	wg.Add(1)
	go func() {
		defer wg.Done()
		offstack.Run(func() int { runtimeGoexit(); return 0 })
		returned = true
	}()
	wg.Wait()
	if returned {
		t.Error("Run returned after its function called runtime.Goexit")
	}
}

var runtimeGoexit = runtime.Goexit
