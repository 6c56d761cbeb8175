// Package offstack runs a call's deep one-off work (checking its request,
// preparing it, opening its upstream request) on a short-lived goroutine
// of its own, so that the goroutine that afterwards waits on the call's
// stream, for as long as the stream lasts, keeps a small stack.
//
// The runtime grows a goroutine's stack when a call needs more and halves
// it at a collection only while less than a quarter is in use. A handler
// that waits 7 KiB deep fits an 8 KiB stack, but once work that goes
// deeper (protovalidate's rules, encoding a request, http.Client.Do) has
// grown it to 16 KiB it keeps 16 KiB for the whole stream. Run on a
// goroutine that ends with it, that growth is given back at once.
package offstack

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Run runs f on a new goroutine and returns what it returned. The caller
// waits for f whatever happens (f gets the caller's context through its
// closure and must honour it itself), so nothing f touches is shared while
// it runs. A panic in f is raised again on the caller's goroutine as a
// *Panic, which carries f's value and the stack where it panicked, so a
// recovery above the caller handles it as before; a runtime.Goexit in f
// ends the caller's goroutine too.
func Run[T any](f func() T) T {
	var r T
	call(func() { r = f() })
	return r
}

// Run2 is Run for a function with two results.
func Run2[T, U any](f func() (T, U)) (T, U) {
	var (
		t T
		u U
	)
	call(func() { t, u = f() })
	return t, u
}

// ended is how f ended: returned, panicked (p) or neither (Goexit).
type ended struct {
	returned bool
	p        *Panic
}

func call(f func()) {
	done := make(chan ended, 1)
	go func() {
		var e ended
		defer func() {
			if !e.returned {
				if v := recover(); v != nil {
					e.p = &Panic{Value: v, Stack: debug.Stack()}
				}
			}
			done <- e
		}()
		f()
		e.returned = true
	}()
	switch e := <-done; {
	case e.p != nil:
		panic(e.p)
	case !e.returned:
		runtime.Goexit()
	}
}

// Panic is a panic of a function Run ran, raised again on Run's caller.
type Panic struct {
	// Value is the value the function panicked with.
	Value any
	// Stack is the function's goroutine's stack at the panic.
	Stack []byte
}

// String returns the panic's value and the stack it was raised on.
func (p *Panic) String() string {
	return fmt.Sprintf("%v\n\nraised on a setup goroutine:\n%s", p.Value, p.Stack)
}
