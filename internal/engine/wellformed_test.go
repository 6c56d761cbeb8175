package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"buf.build/go/protovalidate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// A mutation sets one field somewhere under a GenerateRequest to one value.
type mutation struct {
	name  string
	apply func(protoreflect.Message)
}

// TestWellFormedNeverPassesABrokenRule holds the fast check to the rules it
// mirrors: every field reachable from GenerateRequest is set to values at,
// inside and beyond the proto's limits (lengths in bytes and characters,
// counts, ranges, enum values, durations, names), on a request that uses
// every field and on a minimal one, and then several at once at random.
// Whenever wellFormed passes a request, protovalidate must pass it too. A
// rule added to the proto but not to wellFormed fails here.
func TestWellFormedNeverPassesABrokenRule(t *testing.T) {
	v, err := protovalidate.New()
	if err != nil {
		t.Fatal(err)
	}
	var passed, refused, fast int
	check := func(name string, req *llmrelayv1.GenerateRequest) {
		t.Helper()
		ok := wellFormed(req)
		verr := v.Validate(req)
		switch {
		case ok && verr != nil:
			t.Errorf("%s: wellFormed passed a request protovalidate refuses: %v", name, verr)
		case verr != nil:
			refused++
		default:
			passed++
			if ok {
				fast++
			}
		}
	}
	var all []mutation
	for _, base := range []*llmrelayv1.GenerateRequest{everyField(), minimal()} {
		muts := mutations(base.ProtoReflect(), base.ProtoReflect().Descriptor(), "")
		for _, m := range muts {
			req := proto.Clone(base).(*llmrelayv1.GenerateRequest)
			m.apply(req.ProtoReflect())
			check(m.name, req)
		}
		all = append(all, muts...)
	}
	rng := rand.New(rand.NewPCG(30, 1))
	for range 4000 {
		req := proto.Clone(everyField()).(*llmrelayv1.GenerateRequest)
		if rng.IntN(2) == 0 {
			req = minimal()
		}
		var names []string
		for range 2 + rng.IntN(3) {
			m := all[rng.IntN(len(all))]
			m.apply(req.ProtoReflect())
			names = append(names, m.name)
		}
		check(strings.Join(names, " + "), req)
	}
	t.Logf("%d requests refused by protovalidate; of %d it passes, wellFormed passed %d", refused, passed, fast)
	// The fast check is only worth having if it answers for most valid
	// requests; the ones it leaves to protovalidate are characters beyond a
	// limit's bytes, and the like.
	if refused == 0 || fast < passed*9/10 {
		t.Errorf("wellFormed passed %d of the %d requests protovalidate passes (want 90%%), and protovalidate refused %d", fast, passed, refused)
	}
}

func TestWellFormedTakesTheRequestsClientsSend(t *testing.T) {
	original := everyField()
	original.Messages[1].Parts[1].GetImage().Detail = llmrelayv1.ImageDetail_IMAGE_DETAIL_ORIGINAL
	for name, req := range map[string]*llmrelayv1.GenerateRequest{
		"minimal":                     minimal(),
		"every field":                 everyField(),
		"an image of detail original": original,
	} {
		if !wellFormed(req) {
			t.Errorf("%s: wellFormed = false, want true", name)
		}
	}
}

// minimal is the smallest valid request.
func minimal() *llmrelayv1.GenerateRequest {
	return &llmrelayv1.GenerateRequest{
		Model:    "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}},
	}
}

// everyField is a valid request with every field and every list set.
func everyField() *llmrelayv1.GenerateRequest {
	params, _ := structpb.NewStruct(map[string]any{"type": "object"})
	u32 := func(n uint32) *uint32 { return &n }
	f32 := func(f float32) *float32 { return &f }
	yes := true
	return &llmrelayv1.GenerateRequest{
		Model: "openai/gpt-4o",
		Messages: []*llmrelayv1.Message{
			{Role: llmrelayv1.Role_ROLE_SYSTEM, Content: "be brief"},
			{
				Role: llmrelayv1.Role_ROLE_USER, Content: "weather in  or ?", ServerTool: "files",
				Parts: []*llmrelayv1.Part{
					{Part: &llmrelayv1.Part_Text{Text: "weather in "}},
					{Part: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
						Source:    &llmrelayv1.Image_Url{Url: "https://example.com/a.png"},
						MediaType: "image/png", Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW,
					}}},
					{Part: &llmrelayv1.Part_Text{Text: " or "}},
					{Part: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
						Source:    &llmrelayv1.Image_Data{Data: []byte("\x89PNG\r\n\x1a\n")},
						MediaType: "image/png", Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_AUTO,
					}}},
					{Part: &llmrelayv1.Part_Text{Text: "?"}},
				},
			},
			{
				Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: "checking", Refusal: "no",
				ToolCalls:     []*llmrelayv1.ToolCall{{Id: "call_1", Name: "get_weather", Arguments: "{}", Signature: "s"}},
				Reasoning:     []*llmrelayv1.Reasoning{{Text: "t", Signature: "s", Redacted: "r", Format: "f", Id: "i", Kind: "k", ProviderFormat: "p"}},
				Parts:         []*llmrelayv1.Part{{Part: &llmrelayv1.Part_Text{Text: "x"}}, {Part: &llmrelayv1.Part_ToolCall{ToolCall: 0}}},
				ProviderTools: []*llmrelayv1.ProviderToolBlock{{Kind: "web_search", Id: "i", Name: "n", Input: "{}", Result: "r", Extra: "e", Format: "f"}},
			},
			{
				Role: llmrelayv1.Role_ROLE_TOOL, Content: "sunny", ToolCallId: "call_1", ToolError: true,
				Parts: []*llmrelayv1.Part{
					{Part: &llmrelayv1.Part_Text{Text: "sunny"}},
					{Part: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
						Source: &llmrelayv1.Image_Data{Data: []byte("\x89PNG\r\n\x1a\n")}, MediaType: "image/png",
					}}},
				},
			},
		},
		Generation: &llmrelayv1.GenerationConfig{MaxOutputTokens: u32(100), Temperature: f32(0.7), TopP: f32(0.9), Stop: []string{"END"}},
		Tools:      []*llmrelayv1.Tool{{Name: "get_weather", Description: "the weather", Parameters: params}},
		ToolChoice: &llmrelayv1.ToolChoice{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, Name: "get_weather"},
		ResponseFormat: &llmrelayv1.ResponseFormat{
			JsonSchema: params, Name: "report", MaxValidationRetries: u32(2),
			OnInvalid: llmrelayv1.OnInvalid_ON_INVALID_FAIL, StreamPartialObjects: true,
			PartialObjectInterval: durationpb.New(0),
		},
		Retry: &llmrelayv1.RetryPolicy{
			MaxAttempts: 3, InitialBackoff: &durationpb.Duration{Nanos: 1e8}, MaxBackoff: &durationpb.Duration{Seconds: 5},
			Midstream: llmrelayv1.Midstream_MIDSTREAM_RESTART,
		},
		StreamIdleTimeout: &durationpb.Duration{Seconds: 30},
		RequestId:         "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
		ProviderOptions:   params,
		FallbackModels:    []string{"smart", "anthropic/claude-sonnet-4-5"},
		Metadata:          map[string]string{"team": "search"},
		FirstEventTimeout: &durationpb.Duration{Seconds: 10},
		OutputLimit:       &llmrelayv1.OutputLimit{MaxBytes: 1 << 20, OnLimit: llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_TRUNCATE},
		HeartbeatInterval: &durationpb.Duration{Seconds: 15},
		Resumable:         &yes,
		Hedging: &llmrelayv1.HedgePolicy{
			HedgeAfter: &durationpb.Duration{Seconds: 2}, Adaptive: true, MaxHedges: u32(1),
			Target: llmrelayv1.HedgeTarget_HEDGE_TARGET_NEXT,
		},
		ServerTools:  []string{"files"},
		MaxToolTurns: u32(5),
	}
}

// mutations lists, for every field under md (at path), the requests that
// set it to each value of its kind's pool. like is the base request's
// message at that place (or an invalid one): its first list element is
// what lists are filled with when a count is tried.
func mutations(like protoreflect.Message, md protoreflect.MessageDescriptor, path string) []mutation {
	var out []mutation
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := path + string(fd.Name())
		switch {
		case fd.IsMap():
			out = append(out, mapMutations(fd, name)...)
		case fd.IsList():
			out = append(out, listMutations(like, fd, name)...)
		case fd.Kind() == protoreflect.MessageKind:
			out = append(out, mutation{name + " unset", func(m protoreflect.Message) { m.Clear(fd) }})
			if leaf := messageValues(fd.Message()); leaf != nil {
				for j, v := range leaf {
					out = append(out, mutation{fmt.Sprintf("%s = %s #%d", name, fd.Message().Name(), j), func(m protoreflect.Message) { m.Set(fd, v()) }})
				}
				continue
			}
			var sub protoreflect.Message
			if like != nil && like.Has(fd) {
				sub = like.Get(fd).Message()
			}
			for _, n := range mutations(sub, fd.Message(), name+".") {
				out = append(out, mutation{n.name, func(m protoreflect.Message) { n.apply(m.Mutable(fd).Message()) }})
			}
		default:
			if fd.HasPresence() {
				out = append(out, mutation{name + " unset", func(m protoreflect.Message) { m.Clear(fd) }})
			}
			for j, v := range scalarValues(fd) {
				out = append(out, mutation{fmt.Sprintf("%s = %s", name, describe(v, j)), func(m protoreflect.Message) { m.Set(fd, v) }})
			}
		}
	}
	return out
}

func listMutations(like protoreflect.Message, fd protoreflect.FieldDescriptor, name string) []mutation {
	var out []mutation
	var first protoreflect.Value // what a list of n is made of
	if like != nil && like.Has(fd) {
		first = like.Get(fd).List().Get(0)
	}
	for _, n := range []int{0, 1, 2, 8, 9, 16, 17, 64, 65, 128, 129, 256, 257, 1024, 1025, 2048, 2049, 4096, 4097} {
		out = append(out, mutation{fmt.Sprintf("%s has %d", name, n), func(m protoreflect.Message) {
			m.Clear(fd)
			l := m.Mutable(fd).List()
			for range n {
				switch {
				case fd.Kind() == protoreflect.MessageKind && first.IsValid():
					l.Append(protoreflect.ValueOfMessage(proto.Clone(first.Message().Interface()).ProtoReflect()))
				case fd.Kind() == protoreflect.MessageKind:
					l.Append(l.NewElement())
				case first.IsValid():
					l.Append(first)
				default:
					l.Append(protoreflect.ValueOfString("a"))
				}
			}
		}})
	}
	if fd.Kind() != protoreflect.MessageKind {
		for j, v := range scalarValues(fd) {
			out = append(out, mutation{fmt.Sprintf("%s[0] = %s", name, describe(v, j)), func(m protoreflect.Message) {
				l := m.Mutable(fd).List()
				if l.Len() == 0 {
					l.Append(v)
				}
				l.Set(0, v)
			}})
		}
		return out
	}
	// Walk into each element the base has (a message's rules may depend
	// on its role), or into one new element.
	n := 1
	if like != nil && like.Has(fd) {
		n = like.Get(fd).List().Len()
	}
	for i := range n {
		var elem protoreflect.Message
		if like != nil && like.Has(fd) {
			elem = like.Get(fd).List().Get(i).Message()
		}
		for _, mu := range mutations(elem, fd.Message(), fmt.Sprintf("%s[%d].", name, i)) {
			out = append(out, mutation{mu.name, func(m protoreflect.Message) {
				l := m.Mutable(fd).List()
				for l.Len() <= i {
					l.Append(l.NewElement())
				}
				mu.apply(l.Get(i).Message())
			}})
		}
	}
	return out
}

func mapMutations(fd protoreflect.FieldDescriptor, name string) []mutation {
	var out []mutation
	set := func(pairs map[string]string) func(protoreflect.Message) {
		return func(m protoreflect.Message) {
			m.Clear(fd)
			mp := m.Mutable(fd).Map()
			for k, v := range pairs {
				mp.Set(protoreflect.ValueOfString(k).MapKey(), protoreflect.ValueOfString(v))
			}
		}
	}
	for _, n := range []int{0, 1, 64, 65} {
		pairs := map[string]string{}
		for i := range n {
			pairs[fmt.Sprintf("k%d", i)] = "v"
		}
		out = append(out, mutation{fmt.Sprintf("%s has %d", name, n), set(pairs)})
	}
	for j, s := range strs {
		out = append(out, mutation{fmt.Sprintf("%s key = %s", name, describe(protoreflect.ValueOfString(s), j)), set(map[string]string{s: "v"})})
		out = append(out, mutation{fmt.Sprintf("%s value = %s", name, describe(protoreflect.ValueOfString(s), j)), set(map[string]string{"k": s})})
	}
	return out
}

// messageValues are the values of the well-known types used as fields,
// tried whole; nil for llmrelay's own messages, which are walked into.
func messageValues(md protoreflect.MessageDescriptor) []func() protoreflect.Value {
	msg := func(m proto.Message) func() protoreflect.Value {
		return func() protoreflect.Value { return protoreflect.ValueOfMessage(proto.Clone(m).ProtoReflect()) }
	}
	switch md.FullName() {
	case "google.protobuf.Duration":
		var out []func() protoreflect.Value
		for _, d := range [][2]int64{
			{0, 0}, {0, 1}, {-1, 0}, {0, -1}, {-1, -1}, {1, -1}, {1, 0}, {1, 1e9}, {59, 999999999},
			{60, 0}, {60, 1}, {61, 0}, {300, 0}, {300, 1}, {301, 0}, {3600, 0}, {3600, 1}, {3601, 0}, {math.MaxInt64, 0},
		} {
			out = append(out, msg(&durationpb.Duration{Seconds: d[0], Nanos: int32(d[1])}))
		}
		return out
	case "google.protobuf.Struct":
		small, _ := structpb.NewStruct(map[string]any{"a": 1})
		return []func() protoreflect.Value{msg(&structpb.Struct{}), msg(small)}
	}
	return nil
}

// strs are the strings every string field is tried with: lengths at and
// beyond each limit in the proto, in bytes and in two-byte characters, and
// names, models and UUIDs that just keep or just break their patterns.
var strs = func() []string {
	out := []string{
		"", "a", "A", "-", "_", ".", "..", " ", "a b", "é",
		"smart", "mock/echo", "openai/gpt-4o", "a_b-c/x.y:z@1+2-3", "a/b/c", "a/b//c", "a/./b", "a/../b", "a/b/..",
		"a/", "/a", "A/x", "-a/x", "a/-x", "a/.x", "a//", "a/b/", "a/b/./c", "a/b/.", "a/b/../c", "smart!", "get_weather", "Get-Weather_2",
		"openai.reasoning_content", "mistral.thinking", "a,b", "a\nb", "a\x1bb", "gemini ", "Gemini", "1a", "a/b.c",
		"3f2504e0-4f89-11d3-9a0c-0305e82c3301", "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "3f2504e04f8911d39a0c0305e82c3301",
		"3f2504e0-4f89-11d3-9a0c-0305e82c330", "3f2504e0-4f89-11d3-9a0c-0305e82c33011", "3f2504e0-4f89-11d3-9a0c-0305e82c330g",
		"3f2504e0_4f89-11d3-9a0c-0305e82c3301", "{3f2504e0-4f89-11d3-9a0c-0305e82c3301}",
		strings.Repeat("a", 62) + "/x", strings.Repeat("a", 63) + "/x", strings.Repeat("a", 64) + "/x",
		"https://example.com/a.png", "http://example.com/a.png", "https://", "data:image/png;base64,AA==",
		"https://example.com:8443/a%20b/c;d=e?q=1&r=/s?t#frag/?", "https://example.com:/a", "https://example.com?q", "https://example.com#f",
		"https://a", "https://example.com/a%2", "https://example.com/a%zz", "https://example.com/a b", "https://example.com/é",
		"https://example.com/a#b#c", "https://example.com/a[b]", "https://example.com:8x/a", "https://user:pw@example.com/a",
		"https://[::1]/a", "https:///a", "https://:443/a", "https://user@/a", "https://user@h/a", "https://?q", "https://#f", "https://ex%41mple.com/a", "https://ex%ffmple.com/a", "https:/example.com/a", "HTTPS://example.com/a",
		"https://example.com/" + strings.Repeat("a", 8172), "https://example.com/" + strings.Repeat("a", 8173),
		"https://example.com/" + strings.Repeat("é", 4086),
		"image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml",
		"a/" + strings.Repeat("b", 253), "a/" + strings.Repeat("b", 254), "a/" + strings.Repeat("b", 255),
	}
	for _, n := range []int{63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 16384, 16385, 65536, 65537, 1 << 20, 1<<20 + 1} {
		out = append(out, strings.Repeat("a", n))
	}
	for _, n := range []int{32, 33, 64, 65, 128, 129, 256, 257, 512, 513} {
		out = append(out, strings.Repeat("é", n))
	}
	return out
}()

func scalarValues(fd protoreflect.FieldDescriptor) []protoreflect.Value {
	var out []protoreflect.Value
	ints := []uint64{0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 60, 61, 64, 65, 999, 1000, 1001, 1000000, 1000001, 1 << 30, 1<<30 + 1, math.MaxUint32, math.MaxUint64}
	switch fd.Kind() {
	case protoreflect.StringKind:
		for _, s := range strs {
			out = append(out, protoreflect.ValueOfString(s))
		}
	case protoreflect.BytesKind:
		for _, n := range []int{0, 1, 20 << 20, 20<<20 + 1} {
			out = append(out, protoreflect.ValueOfBytes(make([]byte, n)))
		}
	case protoreflect.BoolKind:
		out = append(out, protoreflect.ValueOfBool(true), protoreflect.ValueOfBool(false))
	case protoreflect.EnumKind:
		for _, n := range []int32{-1, 0, 1, 2, 3, 4, 5, 99} {
			out = append(out, protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)))
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		for _, n := range ints {
			if n <= math.MaxUint32 {
				out = append(out, protoreflect.ValueOfUint32(uint32(n)))
			}
		}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		for _, n := range ints {
			out = append(out, protoreflect.ValueOfUint64(n))
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		for _, n := range ints {
			if n <= math.MaxInt32 {
				out = append(out, protoreflect.ValueOfInt32(int32(n)), protoreflect.ValueOfInt32(-int32(n)))
			}
		}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		for _, n := range ints {
			if n <= math.MaxInt64 {
				out = append(out, protoreflect.ValueOfInt64(int64(n)), protoreflect.ValueOfInt64(-int64(n)))
			}
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		nan := math.NaN()
		for _, f := range []float64{-1, math.Copysign(0, -1), 0, 0.5, 1, 1.0000001, 1.5, 2, 2.0000002, 3, nan, math.Inf(1), math.Inf(-1)} {
			if fd.Kind() == protoreflect.FloatKind {
				out = append(out, protoreflect.ValueOfFloat32(float32(f)))
			} else {
				out = append(out, protoreflect.ValueOfFloat64(f))
			}
		}
	default:
		panic(fmt.Sprintf("no values for %s (%s): add them", fd.FullName(), fd.Kind()))
	}
	return out
}

// describe names a value shortly: long strings by their length.
func describe(v protoreflect.Value, i int) string {
	if s, ok := v.Interface().(string); ok && len(s) > 40 {
		return fmt.Sprintf("string #%d (%d bytes)", i, len(s))
	}
	if b, ok := v.Interface().([]byte); ok {
		return fmt.Sprintf("bytes #%d (%d bytes)", i, len(b))
	}
	return fmt.Sprintf("%q", fmt.Sprint(v.Interface()))
}

// BenchmarkValidate is Validator.Check on a request that uses every field
// and on a minimal one, through wellFormed ("fast") and through
// protovalidate alone ("rules"), warm.
func BenchmarkValidate(b *testing.B) {
	v, err := protovalidate.New()
	if err != nil {
		b.Fatal(err)
	}
	for name, req := range map[string]*llmrelayv1.GenerateRequest{"minimal": minimal(), "every_field": everyField()} {
		b.Run(name+"/fast", func(b *testing.B) {
			for b.Loop() {
				if err := (Validator{V: v}).Check(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/rules", func(b *testing.B) {
			for b.Loop() {
				if err := v.Validate(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
