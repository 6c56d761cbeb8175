package interceptors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/llmrelay/llmrelay/internal/offstack"
)

// TestCompose: composed links run in order, the first outermost, for
// unary calls, and hand the handler what the links gave it.
func TestCompose(t *testing.T) {
	var order []string
	link := func(name string) Link {
		return Link{
			Name: name,
			Unary: func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				order = append(order, name)
				return h(ctx, req.(string)+name)
			},
		}
	}
	for _, n := range []int{0, 1, 3} {
		var links []Link
		var want []string
		for i := range n {
			name := string(rune('a' + i))
			links = append(links, link(name))
			want = append(want, name)
		}
		unary, _ := Compose(links...)
		order = nil
		got, _ := unary(context.Background(), ">", &grpc.UnaryServerInfo{}, func(_ context.Context, req any) (any, error) { return req, nil })
		if !slices.Equal(order, want) || got != ">"+strings.Join(want, "") {
			t.Errorf("%d unary links ran %v and gave the handler %v, want %v", n, order, got, want)
		}
	}
}

type bareStream struct{ grpc.ServerStream }

func (bareStream) Context() context.Context { return context.Background() }

// recvStream is a stream whose RecvMsg appends "recv" to its log.
type recvStream struct {
	bareStream
	log *[]string
}

func (s recvStream) RecvMsg(any) error {
	*s.log = append(*s.log, "recv")
	return nil
}

// loggedStream is a wrapper that logs its name after each message
// received through it.
type loggedStream struct {
	grpc.ServerStream
	name string
	log  *[]string
}

func (s *loggedStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	*s.log = append(*s.log, "wrapper "+s.name)
	return err
}

type ctxKey string

// flatLink is a link whose steps log what they do: Enter puts its name in
// the context and, as wrap says, wraps the stream or checks the request;
// Exit logs the error it got.
func flatLink(name string, log *[]string, wrap string) Link {
	return Link{Name: name, Steps: Steps{
		Enter: func(c *Call) error {
			*log = append(*log, "enter "+name)
			c.SetContext(context.WithValue(c.Context(), ctxKey(name), name))
			switch wrap {
			case "wrap":
				c.Wrap(&loggedStream{ServerStream: c.Stream(), name: name, log: log})
			case "check":
				c.OnRequest(CheckFunc(func(ctx context.Context, req any) error {
					var seen []string
					for _, k := range []string{"a", "b", "c", "d", "e"} {
						if v, ok := ctx.Value(ctxKey(k)).(string); ok {
							seen = append(seen, v)
						}
					}
					*log = append(*log, "check "+name+" sees "+strings.Join(seen, ""))
					return nil
				}))
			}
			return nil
		},
		Exit: func(c *Call, err error) error {
			*log = append(*log, "exit "+name)
			return err
		},
	}}
}

// TestFlatChain: stream links enter in order, the first outermost, then
// the handler runs with the context they made, then they exit in reverse;
// the first message passes through the wrappers and request checks
// outermost link first, each check with the context of its link.
func TestFlatChain(t *testing.T) {
	var log []string
	_, stream := Compose(flatLink("a", &log, "check"), flatLink("b", &log, "wrap"), flatLink("c", &log, "check"),
		flatLink("d", &log, "check"), flatLink("e", &log, ""))
	err := stream(nil, recvStream{log: &log}, &grpc.StreamServerInfo{FullMethod: "/s/M"}, func(_ any, ss grpc.ServerStream) error {
		log = append(log, "handler sees "+ss.Context().Value(ctxKey("e")).(string))
		_ = ss.RecvMsg(nil)
		_ = ss.RecvMsg(nil) // checks only see the first
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"enter a", "enter b", "enter c", "enter d", "enter e", "handler sees e",
		"recv", "check a sees a", "wrapper b", "check c sees abc", "check d sees abcd",
		"recv", "wrapper b",
		"exit e", "exit d", "exit c", "exit b", "exit a"}
	if !slices.Equal(log, want) {
		t.Errorf("ran\n  %s\nwant\n  %s", strings.Join(log, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestFlatChainRefusal: a link whose Enter fails ends the call there: no
// later link enters, the handler does not run, and the links that entered
// exit with the error; its own Exit does not run.
func TestFlatChainRefusal(t *testing.T) {
	var log []string
	refused := errors.New("refused")
	b := flatLink("b", &log, "")
	b.Steps.Enter = func(*Call) error { log = append(log, "enter b"); return refused }
	exitA := flatLink("a", &log, "")
	exitA.Steps.Exit = func(_ *Call, err error) error {
		log = append(log, "exit a with "+err.Error())
		return err
	}
	_, stream := Compose(exitA, b, flatLink("c", &log, ""))
	err := stream(nil, bareStream{}, &grpc.StreamServerInfo{FullMethod: "/s/M"}, func(any, grpc.ServerStream) error {
		log = append(log, "handler")
		return nil
	})
	want := []string{"enter a", "enter b", "exit a with refused"}
	if !errors.Is(err, refused) || !slices.Equal(log, want) {
		t.Errorf("ran %v with %v, want %v with %v", log, err, want, refused)
	}
}

// TestFlatChainSkip: a link that skips a service neither enters nor exits
// for its calls, and does both for other services' calls.
func TestFlatChainSkip(t *testing.T) {
	var log []string
	skipper := APIOnly(flatLink("b", &log, ""))
	skipper.Unary = nil
	_, stream := Compose(flatLink("a", &log, ""), skipper)
	h := func(any, grpc.ServerStream) error { return nil }
	for method, want := range map[string][]string{
		"/grpc.health.v1.Health/Watch":     {"enter a", "exit a"},
		"/llmrelay.v1.LLMService/Generate": {"enter a", "enter b", "exit b", "exit a"},
	} {
		log = nil
		if err := stream(nil, bareStream{}, &grpc.StreamServerInfo{FullMethod: method}, h); err != nil || !slices.Equal(log, want) {
			t.Errorf("%s: ran %v (%v), want %v", method, log, err, want)
		}
	}
}

// TestFlatChainPanics: a panic in the handler becomes the recovery link's
// error, which every link exits with; a panic in a link's Enter becomes
// the guard's, and the links that entered still exit.
func TestFlatChainPanics(t *testing.T) {
	var log []string
	guard := Link{Name: "guard", Steps: Steps{RecoverLinks: func(_ context.Context, p any) error {
		return errors.New("guard: " + p.(string))
	}}}
	recovery := Link{Name: "recovery", Steps: Steps{RecoverHandler: func(_ context.Context, p any) error {
		return errors.New("recovery: " + p.(string))
	}}}
	exitLogged := func(name string) Link {
		l := flatLink(name, &log, "")
		l.Steps.Exit = func(_ *Call, err error) error {
			log = append(log, "exit "+name+": "+err.Error())
			return err
		}
		return l
	}
	_, stream := Compose(guard, exitLogged("a"), recovery)
	err := stream(nil, bareStream{}, &grpc.StreamServerInfo{FullMethod: "/s/M"}, func(any, grpc.ServerStream) error { panic("boom") })
	if want := []string{"enter a", "exit a: recovery: boom"}; err == nil || err.Error() != "recovery: boom" || !slices.Equal(log, want) {
		t.Errorf("a handler's panic: %v, ran %v; want recovery's error and %v", err, log, want)
	}

	log = nil
	panics := Link{Name: "p", Steps: Steps{Enter: func(*Call) error { panic("in a link") }}}
	_, stream = Compose(guard, exitLogged("a"), panics, exitLogged("b"), recovery)
	err = stream(nil, bareStream{}, &grpc.StreamServerInfo{FullMethod: "/s/M"}, func(any, grpc.ServerStream) error {
		log = append(log, "handler")
		return nil
	})
	if want := []string{"enter a", "exit a: guard: in a link"}; err == nil || err.Error() != "guard: in a link" || !slices.Equal(log, want) {
		t.Errorf("a link's panic: %v, ran %v; want the guard's error and %v", err, log, want)
	}
}

// TestFlatChainAllocations: a call through links that only pass it on
// costs the chain one allocation (the call's record of the links' values),
// however many links there are.
func TestFlatChainAllocations(t *testing.T) {
	links := make([]Link, 12)
	for i := range links {
		links[i] = Link{Name: "pass", Steps: Steps{Exit: func(_ *Call, err error) error { return err }}}
	}
	_, stream := Compose(links...)
	info := &grpc.StreamServerInfo{FullMethod: "/s/M", IsServerStream: true}
	h := func(any, grpc.ServerStream) error { return nil }
	var ss grpc.ServerStream = bareStream{}
	if got := testing.AllocsPerRun(100, func() { _ = stream(nil, ss, info, h) }); got > 1 {
		t.Errorf("a call through 12 links allocates %v times, want 1", got)
	}
}

// TestFlatChainNestsInterceptors: a link given as a gRPC interceptor runs
// the links after it and the handler inside it, with the stream and
// context it hands on.
func TestFlatChainNestsInterceptors(t *testing.T) {
	var log []string
	nested := Link{Name: "b", Stream: func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		log = append(log, "b before")
		err := h(srv, &ctxStream{ServerStream: ss, ctx: context.WithValue(ss.Context(), ctxKey("b"), "b")})
		log = append(log, "b after")
		return err
	}}
	_, stream := Compose(flatLink("a", &log, ""), nested, flatLink("c", &log, ""))
	err := stream(nil, bareStream{}, &grpc.StreamServerInfo{FullMethod: "/s/M"}, func(_ any, ss grpc.ServerStream) error {
		log = append(log, "handler sees "+ss.Context().Value(ctxKey("a")).(string)+ss.Context().Value(ctxKey("b")).(string)+ss.Context().Value(ctxKey("c")).(string))
		return nil
	})
	want := []string{"enter a", "b before", "enter c", "handler sees abc", "exit c", "b after", "exit a"}
	if err != nil || !slices.Equal(log, want) {
		t.Errorf("ran %v (%v), want %v", log, err, want)
	}
}

// goroutineID returns the calling goroutine's number, from its stack's
// first line ("goroutine 7 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}

// receiveOnce runs a stream call through links whose handler receives
// one message, and returns the handler's goroutine and the call's error.
func receiveOnce(links ...Link) (handler string, err error) {
	_, stream := Compose(links...)
	var recvLog []string
	err = stream(nil, recvStream{log: &recvLog}, &grpc.StreamServerInfo{FullMethod: "/s/M"}, func(_ any, ss grpc.ServerStream) error {
		handler = goroutineID()
		return ss.RecvMsg(nil)
	})
	return handler, err
}

// TestCPUOnlyChecksRunOffTheHandler: CPUOnly request checks run on
// another goroutine than the handler's (offstack's workers, so the
// handler keeps a small stack while its stream lasts), each with its
// link's context and in the chain's order among the other checks; the
// first failing one fails the receive, and the checks after it do not
// run; a panic in one reaches the handler's recovery with its stack.
func TestCPUOnlyChecksRunOffTheHandler(t *testing.T) {
	var log []string
	check := func(name string, cpuOnly bool, err error) Link {
		return Link{Name: name, Steps: Steps{Enter: func(c *Call) error {
			c.SetContext(context.WithValue(c.Context(), ctxKey("link"), name))
			var rc RequestCheck = CheckFunc(func(ctx context.Context, req any) error {
				log = append(log, fmt.Sprintf("%s on %s sees %v", name, goroutineID(), ctx.Value(ctxKey("link"))))
				if err != nil && err.Error() == "panic" {
					panic("in " + name)
				}
				return err
			})
			if cpuOnly {
				rc = CPUOnly(rc)
			}
			c.OnRequest(rc)
			return nil
		}}}
	}
	run := func(links ...Link) (handler string, err error) {
		log = nil
		return receiveOnce(links...)
	}

	h, err := run(check("size", true, nil), check("validate", true, nil), check("resolve", false, nil), check("access", true, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 4 {
		t.Fatalf("ran %v, want four checks", log)
	}
	for i, name := range []string{"size", "validate", "resolve", "access"} {
		var who, saw string
		if _, err := fmt.Sscanf(strings.Replace(log[i], name+" on ", "", 1), "%s sees %s", &who, &saw); err != nil || saw != name {
			t.Fatalf("check %d: %q, want %s with its own link's context", i, log[i], name)
		}
		if onHandler := who == h; onHandler != (name == "resolve") {
			t.Errorf("%s ran on goroutine %s, the handler's is %s: want only the check not marked CPUOnly on the handler's", name, who, h)
		}
	}

	refused := errors.New("refused")
	if _, err := run(check("size", true, nil), check("validate", true, refused), check("access", true, nil)); !errors.Is(err, refused) || len(log) != 2 {
		t.Errorf("a failing CPUOnly check: %v after %v, want %v after size and validate only", err, log, refused)
	}

	recovered := Link{Name: "recovery", Steps: Steps{RecoverHandler: func(_ context.Context, p any) error {
		op, ok := p.(*offstack.Panic)
		if !ok {
			return fmt.Errorf("recovered %T", p)
		}
		return fmt.Errorf("recovered %v, stack shows the check: %t", op.Value, strings.Contains(string(op.Stack), "TestCPUOnlyChecksRunOffTheHandler"))
	}}}
	if _, err := run(recovered, check("validate", true, errors.New("panic"))); err == nil || err.Error() != "recovered in validate, stack shows the check: true" {
		t.Errorf("a panicking CPUOnly check: %v, want the recovery link to get it with the check's stack", err)
	}
}

// shallowTestCheck is a ShallowCheck for tests: CheckShallow answers
// (with err) when answers is set; both log where they ran.
type shallowTestCheck struct {
	name    string
	answers bool
	err     error
	log     *[]string
}

func (c shallowTestCheck) CheckRequest(context.Context, any) error {
	*c.log = append(*c.log, c.name+" checked on "+goroutineID())
	return c.err
}

func (c shallowTestCheck) CheckShallow(context.Context, any) (bool, error) {
	*c.log = append(*c.log, c.name+" shallow on "+goroutineID())
	return c.answers, c.err
}

// TestShallowChecksAnswerOnTheHandler: a CPUOnly check that is a
// ShallowCheck answers on the handler's goroutine when it can, with no
// hand-over to offstack's workers; one that does not answer is checked
// there, with the CPUOnly checks after it in the same hand-over; a shallow
// refusal fails the receive, and nothing after it runs.
func TestShallowChecksAnswerOnTheHandler(t *testing.T) {
	var log []string
	add := func(name string, rc RequestCheck) Link {
		return Link{Name: name, Steps: Steps{Enter: func(c *Call) error {
			c.OnRequest(rc)
			return nil
		}}}
	}
	plain := func(name string) RequestCheck {
		return CPUOnly(CheckFunc(func(context.Context, any) error {
			log = append(log, name+" checked on "+goroutineID())
			return nil
		}))
	}
	run := func(links ...Link) (handler string, err error) {
		log = nil
		return receiveOnce(links...)
	}

	h, err := run(
		add("size", CPUOnly(shallowTestCheck{name: "size", answers: true, log: &log})),
		add("validate", CPUOnly(shallowTestCheck{name: "validate", log: &log})),
		add("access", plain("access")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 4 {
		t.Fatalf("ran %v, want four steps", log)
	}
	onHandler := func(i int, step string) {
		if log[i] != step+" on "+h {
			t.Errorf("step %d: %q, want %s on the handler's goroutine (%s)", i, log[i], step, h)
		}
	}
	offHandler := func(i int, step string) string {
		who, ok := strings.CutPrefix(log[i], step+" on ")
		if !ok || who == h {
			t.Errorf("step %d: %q, want %s on a goroutine other than the handler's (%s)", i, log[i], step, h)
		}
		return who
	}
	onHandler(0, "size shallow") // answered: its CheckRequest never runs
	onHandler(1, "validate shallow")
	worker := offHandler(2, "validate checked")
	if offHandler(3, "access checked") != worker {
		t.Errorf("validate and access ran as %v: want them in one hand-over", log[2:])
	}

	refused := errors.New("too large")
	_, err = run(
		add("size", CPUOnly(shallowTestCheck{name: "size", answers: true, err: refused, log: &log})),
		add("access", plain("access")),
	)
	if !errors.Is(err, refused) || len(log) != 1 {
		t.Errorf("a shallow refusal: %v after %v, want %v after the shallow check alone", err, log, refused)
	}
}

// TestFlatChainLetsGoOfItsChecks: a call keeps its request checks (and
// the contexts they hold) only until they ran on the first message: a
// stream open for minutes holds none of them. The checks still run, in
// order, with a wrapper between them, and the next call gets a clean list.
func TestFlatChainLetsGoOfItsChecks(t *testing.T) {
	var log []string
	var call *Call
	grab := Link{Name: "grab", Steps: Steps{Enter: func(c *Call) error { call = c; return nil }}}
	_, stream := Compose(grab, flatLink("a", &log, "check"), flatLink("b", &log, "wrap"), flatLink("c", &log, "check"))
	for range 2 {
		log = nil
		err := stream(nil, recvStream{log: &log}, &grpc.StreamServerInfo{FullMethod: "/s/M"}, func(_ any, ss grpc.ServerStream) error {
			if call.checks == nil || len(call.checks.list) != 2 {
				t.Fatalf("before the request the call holds checks %v, want the two", call.checks)
			}
			_ = ss.RecvMsg(nil)
			if call.checks != nil {
				t.Errorf("after the checks ran the call still holds %d of them", len(call.checks.list))
			}
			_ = ss.RecvMsg(nil)
			return nil
		})
		want := []string{"enter a", "enter b", "enter c", "recv", "check a sees a", "wrapper b", "check c sees abc", "recv", "wrapper b", "exit c", "exit b", "exit a"}
		if err != nil || !slices.Equal(log, want) {
			t.Errorf("ran %v (%v), want %v", log, err, want)
		}
	}
}

// TestFlatChainKeepsEveryLinksValue: each link with an Exit gets back in
// its Exit the value it set in its Enter, beyond the values a call holds
// inline too; a link without an Exit has none.
func TestFlatChainKeepsEveryLinksValue(t *testing.T) {
	var got []int
	var links []Link
	for i := range 2*inlineValues + 3 {
		if i%4 == 1 {
			links = append(links, Link{Name: "plain", Steps: Steps{Enter: func(c *Call) error {
				if v := c.Value(); v != nil {
					t.Errorf("link %d without an Exit has the value %v", i, v)
				}
				return nil
			}}})
			continue
		}
		links = append(links, Link{Name: "valued", Steps: Steps{
			Enter: func(c *Call) error {
				if i%3 != 0 {
					c.Set(i)
				}
				return nil
			},
			Exit: func(c *Call, err error) error {
				if v, ok := c.Value().(int); ok {
					got = append(got, v)
				} else if c.Value() != nil || i%3 != 0 {
					t.Errorf("link %d exits with the value %v", i, c.Value())
				}
				return err
			},
		}})
	}
	_, stream := Compose(links...)
	for range 2 {
		got = nil
		if err := stream(nil, bareStream{}, &grpc.StreamServerInfo{FullMethod: "/s/M"}, func(any, grpc.ServerStream) error { return nil }); err != nil {
			t.Fatal(err)
		}
		var want []int
		for i := len(links) - 1; i >= 0; i-- {
			if i%4 != 1 && i%3 != 0 {
				want = append(want, i)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("links exited with the values %v, want %v", got, want)
		}
	}
}
