package provider_test

import (
	"strings"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// TestNamePatternMatchesTheProto holds provider.NamePattern to the provider
// part of the proto's model.format rule on GenerateRequest.model: a name the
// config accepts is one requests can name.
func TestNamePatternMatchesTheProto(t *testing.T) {
	fd := (&llmrelayv1.GenerateRequest{}).ProtoReflect().Descriptor().Fields().ByName("model")
	rules, _ := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules)
	var expr string
	for _, r := range rules.GetCel() {
		if r.GetId() == "model.format" {
			expr = r.GetExpression()
		}
	}
	providerPart := strings.TrimSuffix(strings.TrimPrefix(provider.NamePattern, "^"), "$")
	rest, ok := strings.CutPrefix(expr, "this.matches('^"+providerPart)
	if !ok || !strings.HasPrefix(rest, "/") && !strings.HasPrefix(rest, "(/") {
		t.Errorf("the proto's model.format rule %q does not start with the provider name rule %q", expr, providerPart)
	}
}

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"mock": true, "openai": true, "my_gemini-2": true, "0": true, strings.Repeat("a", 63): true,
		"": false, "Mock": false, "a/b": false, "open.ai": false, "-x": false, "_x": false, strings.Repeat("a", 64): false, "ü": false,
	} {
		if err := provider.CheckName(name); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestCheckModelPath(t *testing.T) {
	for model, ok := range map[string]bool{
		"gemini-2.5-flash": true, "models/gemini-2.5-flash": true, "meta-llama/llama-3-70b": true, "llama3.1:8b": true,
		"a...b": true, "x/...": true, ".hidden": true,
		"a/../b": false, "..": false, ".": false, "a/.": false, "a//b": false, "a/": false, "/a": false,
		"gemini-2.5-flash/../../v1beta/models/gemini-2.5-pro": false,
	} {
		if err := provider.CheckModelPath(model); (err == nil) != ok {
			t.Errorf("CheckModelPath(%q) = %v, want ok=%v", model, err, ok)
		}
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"Overloaded", 512, "Overloaded"},
		{"  line one\r\nline two\tthree\x00\x1b[31m  ", 512, "line one line two three [31m"},
		{"bad \xff\xfe utf8", 512, "bad utf8"},
		{"right\u202eto-left \ufffd kept", 512, "rightto-left \ufffd kept"},
		{"abcdef", 4, "abcd…"},
		{"ab cd", 3, "ab…"},
		{"héllo", 2, "h…"},
		{"", 8, ""},
	}
	for _, tc := range tests {
		if got := provider.CleanText(tc.in, tc.max); got != tc.want {
			t.Errorf("CleanText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
