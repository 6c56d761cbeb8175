package engine

import (
	"context"
	"slices"
	"testing"

	"buf.build/go/protovalidate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// TestBoundedDepthKnowsEveryStruct: the fields under GenerateRequest whose
// type nests without a bound (a message that can hold itself, as
// google.protobuf.Struct does through Value) are exactly the ones
// boundedDepth looks at, and each of them set makes it false. A field of
// such a type added to the proto fails here until boundedDepth knows it.
func TestBoundedDepthKnowsEveryStruct(t *testing.T) {
	var unbounded []string
	var walk func(md protoreflect.MessageDescriptor, path string, seen map[protoreflect.FullName]bool)
	walk = func(md protoreflect.MessageDescriptor, path string, seen map[protoreflect.FullName]bool) {
		seen[md.FullName()] = true
		defer delete(seen, md.FullName())
		for i := range md.Fields().Len() {
			f := md.Fields().Get(i)
			if f.Message() == nil || f.IsMap() && f.MapValue().Message() == nil {
				continue
			}
			m := f.Message()
			if f.IsMap() {
				m = f.MapValue().Message()
			}
			if recursive(m) {
				unbounded = append(unbounded, path+string(f.Name()))
				continue
			}
			if !seen[m.FullName()] {
				walk(m, path+string(f.Name())+".", seen)
			}
		}
	}
	walk((&llmrelayv1.GenerateRequest{}).ProtoReflect().Descriptor(), "", map[protoreflect.FullName]bool{})
	slices.Sort(unbounded)
	if want := []string{"provider_options", "response_format.json_schema", "tools.parameters"}; !slices.Equal(unbounded, want) {
		t.Fatalf("fields that nest without a bound: %v; boundedDepth knows %v", unbounded, want)
	}

	deep, _ := structpb.NewStruct(map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": 1}}}})
	if !boundedDepth(minimal()) {
		t.Error("boundedDepth(a minimal request) = false")
	}
	for _, set := range []func(*llmrelayv1.GenerateRequest){
		func(r *llmrelayv1.GenerateRequest) { r.ProviderOptions = deep },
		func(r *llmrelayv1.GenerateRequest) {
			r.ResponseFormat = &llmrelayv1.ResponseFormat{Name: "r", JsonSchema: deep}
		},
		func(r *llmrelayv1.GenerateRequest) {
			r.Tools = []*llmrelayv1.Tool{{Name: "a"}, {Name: "b", Parameters: deep}}
		},
	} {
		r := minimal()
		set(r)
		if boundedDepth(r) {
			t.Errorf("boundedDepth = true for a request with a Struct: %v", r)
		}
	}
}

// recursive reports whether a message of type md can hold another of its
// own type, at any depth.
func recursive(md protoreflect.MessageDescriptor) bool {
	seen := map[protoreflect.FullName]bool{}
	var holds func(m protoreflect.MessageDescriptor) bool
	holds = func(m protoreflect.MessageDescriptor) bool {
		for i := range m.Fields().Len() {
			f := m.Fields().Get(i)
			if f.IsMap() {
				f = f.MapValue()
			}
			c := f.Message()
			if c == nil || seen[c.FullName()] {
				continue
			}
			if c.FullName() == md.FullName() {
				return true
			}
			seen[c.FullName()] = true
			if holds(c) {
				return true
			}
		}
		return false
	}
	return holds(md)
}

// TestShallowChecksAnswerAsTheChecks: RequestSize and Validator answer on
// a shallow stack only what they can answer there, and then as Check does:
// a request too large is refused alike, a well-formed one passes; a
// request with a Struct (for its size) and one that needs protovalidate
// (for its rules) is left to Check.
func TestShallowChecksAnswerAsTheChecks(t *testing.T) {
	ctx := context.Background()
	withStruct := minimal()
	withStruct.ProviderOptions, _ = structpb.NewStruct(map[string]any{"x": 1})

	size := RequestSize(proto.Size(minimal()) - 1)
	answered, err := size.CheckShallow(ctx, minimal())
	if want := size.Check(ctx, minimal()); !answered || err == nil || err.Error() != want.Error() {
		t.Errorf("a request over the size, shallow: answered %t, %v; want answered, %v", answered, err, want)
	}
	if answered, err := RequestSize(1<<20).CheckShallow(ctx, minimal()); !answered || err != nil {
		t.Errorf("a request under the size, shallow: answered %t, %v; want answered, nil", answered, err)
	}
	if answered, _ := RequestSize(1<<20).CheckShallow(ctx, withStruct); answered {
		t.Error("a request with a Struct, shallow: answered, want it left to Check")
	}
	if answered, err := RequestSize(0).CheckShallow(ctx, withStruct); !answered || err != nil {
		t.Errorf("no size limit, shallow: answered %t, %v; want answered, nil", answered, err)
	}

	pv, err := protovalidate.New()
	if err != nil {
		t.Fatal(err)
	}
	v := Validator{V: pv}
	if answered, err := v.CheckShallow(ctx, everyField()); !answered || err != nil {
		t.Errorf("a well-formed request, shallow: answered %t, %v; want answered, nil", answered, err)
	}
	bad := minimal()
	bad.Messages[0].Role = 99
	if answered, _ := v.CheckShallow(ctx, bad); answered {
		t.Error("a request wellFormed does not pass, shallow: answered, want it left to protovalidate")
	}
	if err := v.Check(ctx, bad); err == nil {
		t.Error("Check passed a request with an undefined role")
	}
}
