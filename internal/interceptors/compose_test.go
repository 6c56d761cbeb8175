package interceptors

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
)

// TestCompose: composed links run in order, the first outermost, for
// unary and stream calls, and hand the handler what the links gave it.
func TestCompose(t *testing.T) {
	var order []string
	link := func(name string) Link {
		return Link{
			Name: name,
			Unary: func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				order = append(order, name)
				return h(ctx, req.(string)+name)
			},
			Stream: func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				order = append(order, name)
				return h(srv.(string)+name, ss)
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
		unary, stream := Compose(links...)

		order = nil
		got, _ := unary(context.Background(), ">", &grpc.UnaryServerInfo{}, func(_ context.Context, req any) (any, error) { return req, nil })
		if !slices.Equal(order, want) || got != ">"+strings.Join(want, "") {
			t.Errorf("%d unary links ran %v and gave the handler %v, want %v", n, order, got, want)
		}
		order = nil
		var gotSrv any
		_ = stream(">", nil, &grpc.StreamServerInfo{}, func(srv any, _ grpc.ServerStream) error { gotSrv = srv; return nil })
		if !slices.Equal(order, want) || gotSrv != ">"+strings.Join(want, "") {
			t.Errorf("%d stream links ran %v and gave the handler %v, want %v", n, order, gotSrv, want)
		}
	}
}

// recordingLinks returns a stream link per name that appends "name:method" to
// *seen, in order, and pass the call on.
func recordingLinks(seen *[]string, names ...string) []Link {
	var links []Link
	for _, name := range names {
		links = append(links, Link{Name: name, Stream: func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			*seen = append(*seen, name+":"+info.FullMethod)
			return h(srv, ss)
		}})
	}
	return links
}

type bareStream struct{ grpc.ServerStream }

func (bareStream) Context() context.Context { return context.Background() }

// TestComposedStreamChainPerMethod: the composed chain runs the links in
// order and then the call's own handler, for each method and each handler
// (two handlers of one method name, as two closures, are told apart), on
// the first call and on later ones.
func TestComposedStreamChainPerMethod(t *testing.T) {
	var seen []string
	_, stream := Compose(recordingLinks(&seen, "a", "b", "c")...)
	var reached []string
	handler := func(name string) grpc.StreamHandler {
		return func(any, grpc.ServerStream) error { reached = append(reached, name); return nil }
	}
	h1, h2, h3 := handler("one"), handler("two"), handler("three")
	calls := []struct {
		method string
		h      grpc.StreamHandler
		want   string
	}{
		{"/s/One", h1, "one"}, {"/s/Two", h2, "two"}, {"/s/One", h1, "one"}, {"/s/One", h3, "three"}, {"/s/Two", h2, "two"},
	}
	for _, c := range calls {
		seen, reached = nil, nil
		if err := stream(nil, bareStream{}, &grpc.StreamServerInfo{FullMethod: c.method, IsServerStream: true}, c.h); err != nil {
			t.Fatal(err)
		}
		if want := []string{"a:" + c.method, "b:" + c.method, "c:" + c.method}; !slices.Equal(seen, want) {
			t.Errorf("%s: links saw %v, want %v", c.method, seen, want)
		}
		if !slices.Equal(reached, []string{c.want}) {
			t.Errorf("%s: reached %v, want [%s]", c.method, reached, c.want)
		}
	}
}

// TestComposedStreamChainAllocatesNothing: once a method's chain is
// composed, a call through any number of links allocates nothing for the
// chain itself (it used to allocate a closure per link and call).
func TestComposedStreamChainAllocatesNothing(t *testing.T) {
	pass := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		return h(srv, ss)
	}
	links := make([]Link, 12)
	for i := range links {
		links[i] = Link{Name: "pass", Stream: pass}
	}
	_, stream := Compose(links...)
	info := &grpc.StreamServerInfo{FullMethod: "/s/M", IsServerStream: true}
	h := func(any, grpc.ServerStream) error { return nil }
	var ss grpc.ServerStream = bareStream{}
	if got := testing.AllocsPerRun(100, func() { _ = stream(nil, ss, info, h) }); got != 0 {
		t.Errorf("a call through 12 composed links allocates %v times, want 0", got)
	}
}
