package engine

import (
	"errors"
	"math"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// The conversions rely on the proto enums and the provider's sharing their
// numbering.
func TestEnumsShareNumbering(t *testing.T) {
	roles := map[llmrelayv1.Role]provider.Role{
		llmrelayv1.Role_ROLE_SYSTEM: provider.RoleSystem, llmrelayv1.Role_ROLE_USER: provider.RoleUser,
		llmrelayv1.Role_ROLE_ASSISTANT: provider.RoleAssistant, llmrelayv1.Role_ROLE_TOOL: provider.RoleTool,
	}
	for pb, p := range roles {
		if provider.Role(pb) != p {
			t.Errorf("role %v converts to %v, want %v", pb, provider.Role(pb), p)
		}
	}
	finishes := map[provider.FinishReason]llmrelayv1.FinishReason{
		provider.FinishUnspecified:   llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED,
		provider.FinishStop:          llmrelayv1.FinishReason_FINISH_REASON_STOP,
		provider.FinishLength:        llmrelayv1.FinishReason_FINISH_REASON_LENGTH,
		provider.FinishToolCalls:     llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		provider.FinishContentFilter: llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER,
		provider.FinishOther:         llmrelayv1.FinishReason_FINISH_REASON_OTHER,
	}
	for p, pb := range finishes {
		if finishReason(p) != pb {
			t.Errorf("finish %v converts to %v, want %v", p, finishReason(p), pb)
		}
	}
}

func TestToolsAreNotOfferedWithAResponseFormat(t *testing.T) {
	req := &llmrelayv1.GenerateRequest{
		Model:          "mock/echo",
		Tools:          []*llmrelayv1.Tool{{Name: "lookup"}},
		ResponseFormat: &llmrelayv1.ResponseFormat{},
	}
	out, err := providerRequest(req, "echo", responseFormat(req))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tools) != 0 || out.ResponseFormat == nil || out.ResponseFormat.Name != "response" {
		t.Errorf("tools %v, response format %+v: want no tools and the default name", out.Tools, out.ResponseFormat)
	}
}

func TestStructsThatAreNotJSONNameTheirField(t *testing.T) {
	nan := &structpb.Struct{Fields: map[string]*structpb.Value{"minimum": structpb.NewNumberValue(math.NaN())}}
	tests := []struct {
		name  string
		req   *llmrelayv1.GenerateRequest
		field string
	}{
		{"a schema", &llmrelayv1.GenerateRequest{ResponseFormat: &llmrelayv1.ResponseFormat{JsonSchema: nan}}, "response_format.json_schema"},
		{"tool parameters", &llmrelayv1.GenerateRequest{Tools: []*llmrelayv1.Tool{{Name: "a"}, {Name: "b", Parameters: nan}}}, "tools[1].parameters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := providerRequest(tt.req, "echo", responseFormat(tt.req))
			var fe *provider.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Errorf("error = %v, want a field error on %s", err, tt.field)
			}
		})
	}
}
