package interceptors

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc"

	"github.com/llmrelay/llmrelay/internal/offstack"
)

// A stream call waits in its handler for as long as it streams: minutes,
// for a slow model, with tens of thousands of calls open at once. Every
// frame between gRPC and the handler stays on the call's stack for all
// that time, and a goroutine whose waiting stack passes 8 KiB keeps a
// 16 KiB stack (the runtime halves a stack only while less than a quarter
// of it is in use). So the stream side of the chain does not nest one
// interceptor inside the next: each link is a set of Steps that the flat
// chain runs from one loop, Enter before the handler in the chain's order
// and Exit after it in reverse, and the handler runs one frame below the
// loop whatever the number of links.

// Steps are a link's part in a stream call, run by the flat chain
// (Compose). A link that only looks at the call before the handler has
// only Enter; one that looks at its outcome has Exit; one that holds
// something for the call's length (a stream slot, a deadline, a provider
// slot) takes it in Enter, keeps it as its value (Call.Set) and lets it go
// in Exit.
type Steps struct {
	// Skip, when set, leaves the link out of the calls of service (a full
	// service name such as "grpc.health.v1.Health").
	Skip func(service string) bool
	// Enter runs before the handler, outermost link first. It may replace
	// the call's context (Call.SetContext), wrap its stream (Call.Wrap) and
	// add checks of the request (Call.OnRequest). An error ends the call:
	// no later link enters and the handler does not run; the links that
	// entered before exit with the error.
	Enter func(c *Call) error
	// Exit runs after the handler (or the Enter that failed), innermost
	// link first, for each link whose Enter ran and succeeded; it gets the
	// call's error so far and returns the call's error.
	Exit func(c *Call, err error) error
	// RecoverLinks, on the outermost link that sets it, turns a panic in a
	// link's Enter or Exit (or in the handler, when no link recovers it)
	// into the call's error; the links that entered still exit with it.
	RecoverLinks func(ctx context.Context, p any) error
	// RecoverHandler, on the link that sets it, turns a panic in the
	// handler into the call's error, which every link then exits with.
	RecoverHandler func(ctx context.Context, p any) error
}

// RequestCheck checks the call's request: the first message its handler
// receives, after every outer link has seen it. Its error fails that
// receive, and so the call.
type RequestCheck interface {
	CheckRequest(ctx context.Context, req any) error
}

// CPUOnly marks check as one that only computes: it never waits for I/O,
// a lock held across I/O or anything else. The flat chain runs such
// checks on offstack's workers, whose stacks grow for them, instead of on
// the call's goroutine, which keeps the small stack it waits on for the
// stream's life (validating a request against its rules takes about
// 7 KiB of stack).
func CPUOnly(check RequestCheck) RequestCheck { return cpuOnlyCheck{check} }

// cpuOnlyCheck is a CPUOnly check.
type cpuOnlyCheck struct{ RequestCheck }

// ShallowCheck is a check that can answer most requests in little stack.
// CheckShallow answers req as CheckRequest would (answered true, and the
// check's error) when it can in a few hundred bytes of stack, and
// answers nothing otherwise. A CPUOnly check that is one tries
// CheckShallow on the call's own goroutine first and goes to offstack's
// workers only for a request it did not answer: handing work to a worker
// and taking it back costs two goroutine switches (each a thread woken
// when the other processor is idle), more than a shallow check itself.
type ShallowCheck interface {
	RequestCheck
	CheckShallow(ctx context.Context, req any) (answered bool, err error)
}

// CheckFunc is a func as a RequestCheck.
type CheckFunc func(ctx context.Context, req any) error

// CheckRequest implements RequestCheck.
func (f CheckFunc) CheckRequest(ctx context.Context, req any) error { return f(ctx, req) }

// maxLinks bounds the links of a flat chain (the links entered are bits
// of a uint32). The values (Set) of its first inlineValues links with an
// Exit live in the call, without an allocation of their own.
const (
	maxLinks     = 24
	inlineValues = 8
)

// Call is one stream call going through the flat chain: what the links'
// steps read and change. It is used by the call's goroutine only.
type Call struct {
	// Info is gRPC's description of the call's method.
	Info *grpc.StreamServerInfo
	ctx  context.Context
	// base is gRPC's stream; top is base wrapped by the links (Wrap).
	base, top grpc.ServerStream
	// peek is the wrapper that runs the request checks added since the
	// last other wrapper, nil when top is not one.
	peek *peekStream
	// checks are the request checks added so far; they are needed only
	// until the first message, so they live in a pooled list (checkLists),
	// which the call gives back once they ran. A call open for minutes
	// keeps only what it holds below.
	checks *checkList
	// link is the index of the link whose step runs, and slot that link's
	// index in vals (-1 for a link without an Exit).
	link  int
	slot  int8
	slots *[maxLinks]int8
	vals  [inlineValues]any
	more  []any // the values of the links after those
}

// checkList is a call's request checks.
type checkList struct {
	list []pendingCheck
	buf  [8]pendingCheck
}

var checkLists = sync.Pool{New: func() any {
	l := new(checkList)
	l.list = l.buf[:0]
	return l
}}

// releaseChecks gives the call's checks back to the pool.
func (c *Call) releaseChecks() {
	if c.checks == nil {
		return
	}
	clear(c.checks.list)
	c.checks.list = c.checks.list[:0]
	if cap(c.checks.list) == len(c.checks.buf) {
		checkLists.Put(c.checks)
	}
	c.checks = nil
}

// pendingCheck is a request check with the context of its link.
type pendingCheck struct {
	check RequestCheck
	ctx   context.Context
	// cpuOnly says the check is a CPUOnly one; shallow is the check as a
	// ShallowCheck, if it is one.
	cpuOnly bool
	shallow ShallowCheck
}

// Context returns the call's context as the links so far have made it.
func (c *Call) Context() context.Context { return c.ctx }

// SetContext replaces the call's context: the links after this one and
// the handler see ctx.
func (c *Call) SetContext(ctx context.Context) { c.ctx = ctx }

// Stream returns the call's stream as the links so far have wrapped it.
func (c *Call) Stream() grpc.ServerStream { return c.top }

// Base returns gRPC's own stream of the call (for its headers and
// trailers).
func (c *Call) Base() grpc.ServerStream { return c.base }

// Wrap makes s the call's stream; s wraps Stream() (it embeds it, or
// delegates to it). The handler's messages pass through the wrappers
// innermost link first on their way out, outermost first on their way in.
// The stream's context is the call's (Context), whatever s's own says.
func (c *Call) Wrap(s grpc.ServerStream) {
	c.top, c.peek = s, nil
}

// OnRequest adds a check of the call's request, which runs with the
// call's context as it is now, after the checks added before it.
func (c *Call) OnRequest(check RequestCheck) {
	co, cpuOnly := check.(cpuOnlyCheck)
	shallow, _ := co.RequestCheck.(ShallowCheck)
	if c.checks == nil {
		c.checks = checkLists.Get().(*checkList)
	}
	c.checks.list = append(c.checks.list, pendingCheck{check: check, ctx: c.ctx, cpuOnly: cpuOnly, shallow: shallow})
	n := len(c.checks.list)
	if c.peek == nil {
		c.peek = &peekStream{ServerStream: c.top, call: c, from: n - 1}
		c.top = c.peek
	}
	c.peek.to = n
}

// Set keeps v as the running link's value, for its Exit. Only a link
// with an Exit has a value.
func (c *Call) Set(v any) {
	if c.slot < 0 {
		panic(fmt.Sprintf("interceptors: link %d sets a value but has no Exit to read it", c.link))
	}
	if int(c.slot) < len(c.vals) {
		c.vals[c.slot] = v
		return
	}
	i := int(c.slot) - len(c.vals)
	if i >= len(c.more) {
		c.more = append(c.more, make([]any, i+1-len(c.more))...)
	}
	c.more[i] = v
}

// Value returns the running link's value (Set), nil when it set none.
func (c *Call) Value() any {
	switch i := int(c.slot); {
	case i < 0:
		return nil
	case i < len(c.vals):
		return c.vals[i]
	case i-len(c.vals) < len(c.more):
		return c.more[i-len(c.vals)]
	}
	return nil
}

// at makes link i the running link.
func (c *Call) at(i int) { c.link, c.slot = i, c.slots[i] }

// peekStream runs the request checks of the range [from, to) of its call's
// checks on the first message the handler receives.
type peekStream struct {
	grpc.ServerStream
	call     *Call
	from, to int
	seen     bool
}

// RecvMsg implements grpc.ServerStream.
func (s *peekStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if s.seen {
		return nil
	}
	s.seen = true
	err := s.check(m)
	if s.to == len(s.call.checks.list) {
		// The innermost wrapper's checks run last: the call needs none of
		// them again.
		s.call.releaseChecks()
	}
	return err
}

// check runs the wrapper's checks on m, in order. A check that is not
// CPUOnly runs on the handler's goroutine; so does a ShallowCheck's
// CheckShallow. From the first CPUOnly check that this does not answer,
// the run of CPUOnly checks after it goes to offstack's workers in one
// hand-over (their stacks grow, not the handler's).
func (s *peekStream) check(m any) error {
	checks := s.call.checks.list[s.from:s.to]
	for i, j := 0, 0; i < len(checks); i = j {
		pc := checks[i]
		j = i + 1
		if !pc.cpuOnly {
			if err := pc.check.CheckRequest(pc.ctx, m); err != nil {
				return err
			}
			continue
		}
		if pc.shallow != nil {
			if answered, err := pc.shallow.CheckShallow(pc.ctx, m); answered {
				if err != nil {
					return err
				}
				continue
			}
		}
		for j < len(checks) && checks[j].cpuOnly {
			j++
		}
		var err error
		run := checks[i:j]
		offstack.Run(func() { err = runChecks(run, m) })
		if err != nil {
			return err
		}
	}
	return nil
}

// runChecks runs checks on m in order, returning the first error.
func runChecks(checks []pendingCheck, m any) error {
	for _, pc := range checks {
		if err := pc.check.CheckRequest(pc.ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// handlerStream is the stream the handler gets: the wrapped stream, with
// the call's context.
type handlerStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *handlerStream) Context() context.Context { return s.ctx }

// flatChain is links composed for stream calls.
type flatChain struct {
	links []Link
	// recoverLinks and recoverHandler are the chain's panic handlers
	// (Steps.RecoverLinks of the outermost link that has one,
	// Steps.RecoverHandler of the innermost); nil when none.
	recoverLinks, recoverHandler func(ctx context.Context, p any) error
	// slots are the links' indexes in Call.vals, -1 for a link without an
	// Exit.
	slots [maxLinks]int8
}

// composeFlat returns the flat chain of links as a stream interceptor.
func composeFlat(links []Link) grpc.StreamServerInterceptor {
	if len(links) > maxLinks {
		panic(fmt.Sprintf("interceptors: %d links, more than the %d a flat chain holds", len(links), maxLinks))
	}
	ch := &flatChain{links: links}
	exits := 0
	for i, l := range links {
		ch.slots[i] = -1
		if l.Steps.Exit != nil {
			ch.slots[i] = int8(exits)
			exits++
		}
		if ch.recoverLinks == nil {
			ch.recoverLinks = l.Steps.RecoverLinks
		}
		if l.Steps.RecoverHandler != nil {
			ch.recoverHandler = l.Steps.RecoverHandler
		}
	}
	return ch.stream
}

// stream runs a stream call through the chain: every link's Enter, the
// handler, every entered link's Exit.
func (ch *flatChain) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	c := &Call{Info: info, ctx: ss.Context(), base: ss, top: ss, slots: &ch.slots}
	err := ch.run(c, srv, h, 0)
	c.releaseChecks() // a call whose handler never received its request
	return err
}

// run runs the links from the one at index from: their Enters, the
// handler, their Exits. A link given as a gRPC interceptor (Link.Stream)
// is nested: the links after it and the handler run inside it.
func (ch *flatChain) run(c *Call, srv any, h grpc.StreamHandler, from int) error {
	service := serviceOf(c.Info.FullMethod)
	var entered uint32 // bit i: link i entered
	var err error
	handled := false
	for i := from; i < len(ch.links) && err == nil && !handled; i++ {
		l := &ch.links[i]
		if l.Steps.Skip != nil && l.Steps.Skip(service) {
			continue
		}
		if l.Stream != nil {
			err, handled = ch.nest(c, srv, h, i), true
			break
		}
		c.at(i)
		if err = ch.enter(c, i); err == nil {
			entered |= 1 << i
		}
	}
	if err == nil && !handled {
		err = ch.handle(c, srv, h)
	}
	for i := len(ch.links) - 1; i >= from; i-- {
		if entered&(1<<i) != 0 && ch.links[i].Steps.Exit != nil {
			c.at(i)
			err = ch.exit(c, i, err)
		}
	}
	return err
}

// nest runs link i, a gRPC interceptor, around the rest of the chain.
func (ch *flatChain) nest(c *Call, srv any, h grpc.StreamHandler, i int) (err error) {
	if ch.recoverLinks != nil {
		defer func() {
			if p := recover(); p != nil {
				err = ch.recoverLinks(c.ctx, p)
			}
		}()
	}
	return ch.links[i].Stream(srv, c.handlerStream(), c.Info, func(srv any, ss grpc.ServerStream) error {
		c.top, c.peek, c.ctx = ss, nil, ss.Context()
		return ch.run(c, srv, h, i+1)
	})
}

// enter runs link i's Enter.
func (ch *flatChain) enter(c *Call, i int) (err error) {
	if ch.recoverLinks != nil {
		defer func() {
			if p := recover(); p != nil {
				err = ch.recoverLinks(c.ctx, p)
			}
		}()
	}
	if enter := ch.links[i].Steps.Enter; enter != nil {
		return enter(c)
	}
	return nil
}

// exit runs link i's Exit with the call's error so far.
func (ch *flatChain) exit(c *Call, i int, callErr error) (err error) {
	if ch.recoverLinks != nil {
		defer func() {
			if p := recover(); p != nil {
				err = ch.recoverLinks(c.ctx, p)
			}
		}()
	}
	return ch.links[i].Steps.Exit(c, callErr)
}

// handle runs the handler on the wrapped stream, with the call's context.
func (ch *flatChain) handle(c *Call, srv any, h grpc.StreamHandler) (err error) {
	if rec := ch.recoverHandler; rec != nil || ch.recoverLinks != nil {
		if rec == nil {
			rec = ch.recoverLinks
		}
		defer func() {
			if p := recover(); p != nil {
				err = rec(c.ctx, p)
			}
		}()
	}
	return h(srv, c.handlerStream())
}

// handlerStream returns the call's stream with the call's context.
func (c *Call) handlerStream() grpc.ServerStream {
	if c.ctx == c.top.Context() {
		return c.top
	}
	return &handlerStream{ServerStream: c.top, ctx: c.ctx}
}

// serviceOf returns the service of a full method name, "/pkg.Service/Method".
func serviceOf(fullMethod string) string {
	s := strings.TrimPrefix(fullMethod, "/")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[:i]
	}
	return s
}
