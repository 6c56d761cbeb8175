// Package offstack runs short, CPU-only pieces of a call that need a deep
// stack (checking a request against its validation rules, say) on a few
// long-lived goroutines, so the goroutine of a long stream call keeps a
// small stack.
//
// Why: a stream call's handler waits for as long as its stream lasts, with
// tens of thousands open at once. Once anything on the handler's goroutine
// has grown its stack to 16 KiB, the runtime halves it again only while
// less than a quarter of it is in use, and a handler waits about 6 KiB
// deep: the 16 KiB stays for the call's life. Work run here grows the
// workers' stacks instead, which stay grown and are shared by every call.
//
// Only work that never waits for I/O, a lock held across I/O or another
// call belongs here: a worker is held for as long as the work runs, and a
// caller waits for a free worker when all are busy. Work run here must not
// itself call Run.
package offstack

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// task is one Run: the work and where its caller waits.
type task struct {
	f    func()
	done chan *Panic
}

var (
	start sync.Once
	tasks chan *task
	// taskPool keeps tasks (and their done channels) between calls.
	taskPool = sync.Pool{New: func() any { return &task{done: make(chan *Panic, 1)} }}
)

// Workers returns the number of worker goroutines: twice the CPUs Go may
// use (GOMAXPROCS at the first Run), at least 4. The work is CPU-bound, so
// more would only queue for the CPUs; twice covers a worker descheduled
// while it runs.
func Workers() int {
	return max(4, 2*runtime.GOMAXPROCS(0))
}

// Run runs f on one of the workers and returns when it has returned,
// waiting for a free worker when every one is busy. A panic in f is raised
// again on the caller's goroutine as a *Panic, which keeps f's stack.
func Run(f func()) {
	start.Do(startWorkers)
	t := taskPool.Get().(*task)
	t.f = f
	tasks <- t
	p := <-t.done
	t.f = nil
	taskPool.Put(t)
	if p != nil {
		panic(p)
	}
}

// startWorkers starts the workers; they live as long as the process.
func startWorkers() {
	n := Workers()
	tasks = make(chan *task)
	for range n {
		go work()
	}
}

// work runs tasks until the process ends; a task that ends its worker
// (runtime.Goexit) has a new worker take its place.
func work() {
	for t := range tasks {
		runTask(t)
	}
}

// runTask runs t and tells its caller how it ended: nil, or the *Panic
// that ended it. Work that ends its goroutine (runtime.Goexit) is a
// *Panic too, and a new worker takes the place of the one it ended.
func runTask(t *task) {
	returned := false
	defer func() {
		if returned {
			t.done <- nil
			return
		}
		v := recover()
		if v == nil {
			v = errGoexit
			go work()
		}
		t.done <- &Panic{Value: v, Stack: debug.Stack()}
	}()
	t.f()
	returned = true
}

// errGoexit is the panic value of work that called runtime.Goexit.
var errGoexit = errors.New("offstack: the work called runtime.Goexit")

// Panic is a panic raised by work given to Run, raised again on Run's
// caller: Value is what the work panicked with, Stack the worker's stack
// where it did.
type Panic struct {
	Value any
	Stack []byte
}

// Error describes the panic (a recovered *Panic prints as its value).
func (p *Panic) Error() string { return fmt.Sprint(p.Value) }

// String is Error.
func (p *Panic) String() string { return p.Error() }

// WorkerFunction is the function the workers wait in, for leak checks
// (goleak.IgnoreAnyFunction) to leave them out: they live as long as the
// process.
const WorkerFunction = "github.com/llmrelay/llmrelay/internal/offstack.work"
