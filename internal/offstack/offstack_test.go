package offstack_test

import (
	"bytes"

	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/offstack"
)

// goroutineID returns the calling goroutine's number, from its stack's
// first line ("goroutine 7 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}

// TestRunRunsTheWorkOnAWorker: the work runs on another goroutine than
// its caller's (whose stack it so leaves as it was), and Run returns once
// it has.
func TestRunRunsTheWorkOnAWorker(t *testing.T) {
	caller := goroutineID()
	var worker string
	done := false
	offstack.Run(func() {
		worker = goroutineID()
		done = true
	})
	if !done {
		t.Fatal("Run returned before the work did")
	}
	if worker == caller {
		t.Fatalf("the work ran on its caller's goroutine %s", caller)
	}
}

// TestPanicInTheWorkIsRaisedOnTheCaller: a panic in the work reaches
// Run's caller as a *Panic with the value and the stack where it
// happened; the worker goes on serving.
func TestPanicInTheWorkIsRaisedOnTheCaller(t *testing.T) {
	p := func() (p any) {
		defer func() { p = recover() }()
		offstack.Run(panickingWork)
		return nil
	}()
	op, ok := p.(*offstack.Panic)
	if !ok {
		t.Fatalf("recovered %T %v, want a *offstack.Panic", p, p)
	}
	if op.Value != "broken" || op.Error() != "broken" {
		t.Errorf("Value %v, Error %q: want the work's own panic value", op.Value, op.Error())
	}
	if !strings.Contains(string(op.Stack), "panickingWork") {
		t.Errorf("the stack does not show where the work panicked:\n%s", op.Stack)
	}
	ran := false
	offstack.Run(func() { ran = true })
	if !ran {
		t.Error("no worker ran the next work")
	}
}

func panickingWork() { panic("broken") }

// TestGoexitInTheWorkLeavesThePoolWhole: work that ends its goroutine
// fails its caller with a *Panic instead of leaving it waiting, and every
// worker it ended is replaced: as many works as there are workers can
// still run at once.
func TestGoexitInTheWorkLeavesThePoolWhole(t *testing.T) {
	n := offstack.Workers()
	for range n {
		func() {
			defer func() {
				if _, ok := recover().(*offstack.Panic); !ok {
					t.Fatal("work that called runtime.Goexit did not fail its caller with a *Panic")
				}
			}()
			offstack.Run(runtime.Goexit)
		}()
	}
	if running := runAtOnce(t, n); running != n {
		t.Fatalf("%d works ran at once after the Goexits, want %d (one per worker)", running, n)
	}
}

// TestMoreCallersThanWorkersAllGetServed: callers beyond the workers wait
// for a free one; each work runs once.
func TestMoreCallersThanWorkersAllGetServed(t *testing.T) {
	n := 10 * offstack.Workers()
	var mu sync.Mutex
	ran := 0
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			offstack.Run(func() {
				mu.Lock()
				ran++
				mu.Unlock()
			})
		})
	}
	wg.Wait()
	if ran != n {
		t.Fatalf("%d works ran, want %d", ran, n)
	}
}

// runAtOnce starts n works that each wait until all n have started, and
// returns how many had started when the last did (n), or when a minute
// passed without it (fewer: some never got a worker).
func runAtOnce(t *testing.T, n int) int {
	t.Helper()
	var mu sync.Mutex
	started := 0
	all := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			offstack.Run(func() {
				mu.Lock()
				started++
				if started == n {
					close(all)
				}
				mu.Unlock()
				<-all
			})
		})
	}
	select {
	case <-all:
		wg.Wait()
	case <-time.After(time.Minute):
		mu.Lock()
		defer mu.Unlock()
		return started
	}
	return n
}
