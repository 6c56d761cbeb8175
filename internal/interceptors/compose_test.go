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
