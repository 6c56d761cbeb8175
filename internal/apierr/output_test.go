package apierr_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/schema"
)

// sentimentSchema is the schema of the structured-output examples.
const sentimentSchema = `{"type":"object","properties":{"sentiment":{"type":"string","enum":["positive","negative"]},"score":{"type":"number"}},"required":["sentiment","score"]}`

// invalidOutput checks reply against sentimentSchema in a session that
// allows retries re-asks and returns the check's error.
func invalidOutput(t *testing.T, retries int, reply string) *schema.InvalidOutputError {
	t.Helper()
	sch, err := schema.NewCache(config.Default().StructuredOutput).Compile([]byte(sentimentSchema))
	if err != nil {
		t.Fatal(err)
	}
	out, err := schema.NewSession(sch, retries).Check(t.Context(), 3, reply)
	if err != nil {
		t.Fatal(err)
	}
	var ioe *schema.InvalidOutputError
	if !errors.As(out.Err, &ioe) {
		t.Fatalf("Check(%q) = %v, want an *InvalidOutputError", reply, out.Err)
	}
	return ioe
}

func compileErr(t *testing.T, cfg schema.Config, raw string) error {
	t.Helper()
	_, err := schema.NewCache(cfg).Compile([]byte(raw))
	if err == nil {
		t.Fatalf("Compile(%s) succeeded", raw)
	}
	return err
}

type violation struct{ field, description string }

func details(st *status.Status) (*errdetails.ErrorInfo, []violation) {
	var ei *errdetails.ErrorInfo
	var vs []violation
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			ei = d
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				vs = append(vs, violation{v.GetField(), v.GetDescription()})
			}
		}
	}
	return ei, vs
}

func TestFromError(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		code       codes.Code
		reason     string
		md         map[string]string
		violations []violation // nil: no BadRequest
		message    string      // a part of the public message
	}{
		{"an invalid schema names the keyword", compileErr(t, config.Default().StructuredOutput, `{"type": 12}`),
			codes.InvalidArgument, "INVALID_SCHEMA", nil,
			[]violation{{"response_format.json_schema", ""}}, "invalid JSON Schema at '/type'"},
		{"an oversized schema", compileErr(t, schema.Config{MaxSchemaBytes: 16}, sentimentSchema),
			codes.InvalidArgument, "INVALID_SCHEMA", nil,
			[]violation{{"response_format.json_schema", ""}}, "too large"},
		{"a wrapped schema error", fmt.Errorf("compiling: %w", &schema.SchemaError{KeywordPath: "/minimum", Message: "got string, want number"}),
			codes.InvalidArgument, "INVALID_SCHEMA", nil,
			[]violation{{"response_format.json_schema", ""}}, "at '/minimum': got string, want number"},
		{"output still invalid", invalidOutput(t, 0, `{"sentiment":"great"}`),
			codes.Aborted, "OUTPUT_VALIDATION_FAILED", map[string]string{"attempts": "3"},
			[]violation{{"", `missing required property "score"`}, {"/sentiment", ""}}, "no validation retries left"},
		{"output not JSON", invalidOutput(t, 0, `Sure! {"sentiment":"positive"}`),
			codes.Aborted, "OUTPUT_VALIDATION_FAILED", nil,
			[]violation{{"", ""}}, "not valid JSON"},
		{"a provider option", &provider.FieldError{Field: "provider_options.faults[0].status", Description: "must be 400..599"},
			codes.InvalidArgument, "INVALID_PROVIDER_OPTIONS", nil,
			[]violation{{"provider_options.faults[0].status", "must be 400..599"}}, "must be 400..599"},
		{"a provider option the operator refuses", fmt.Errorf("target 2: %w", &provider.OptionNotAllowedError{Provider: "claude", Option: "mcp_servers"}),
			codes.PermissionDenied, "PROVIDER_OPTION_NOT_ALLOWED", map[string]string{"option": "mcp_servers", "provider": "claude"},
			[]violation{{"provider_options.mcp_servers", ""}}, `provider_options.mcp_servers: not allowed with provider "claude"`},
		{"a beta the provider's configuration does not let through", &provider.OptionNotAllowedError{Provider: "claude", Option: "extra_headers",
			Header: "anthropic-beta", Beta: "mcp-client-2025-04-04", Allowed: []string{"interleaved-thinking-2025-05-14"}},
			codes.PermissionDenied, "PROVIDER_OPTION_NOT_ALLOWED", map[string]string{"option": "extra_headers", "provider": "claude", "beta": "mcp-client-2025-04-04"},
			[]violation{{"provider_options.extra_headers.anthropic-beta", ""}},
			`provider_options.extra_headers.anthropic-beta: beta "mcp-client-2025-04-04" is not allowed with provider "claude"; allowed: interleaved-thinking-2025-05-14`},
		{"cancelled", context.Canceled, codes.Canceled, "CANCELLED", nil, nil, "cancelled"},
		{"deadline", fmt.Errorf("attempt 2: %w", context.DeadlineExceeded), codes.DeadlineExceeded, "DEADLINE_EXCEEDED", nil, nil, "deadline"},
		{"shutdown", apierr.ErrShuttingDown, codes.Unavailable, "SERVER_SHUTTING_DOWN", nil, nil, "shutting down"},
		{"a bug", errors.New("nil map in the handler"), codes.Internal, "INTERNAL", nil, nil, "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := status.Convert(apierr.FromError(tt.err))
			if st.Code() != tt.code {
				t.Errorf("code = %v, want %v", st.Code(), tt.code)
			}
			if !strings.Contains(st.Message(), tt.message) {
				t.Errorf("message = %q, want it to contain %q", st.Message(), tt.message)
			}
			ei, vs := details(st)
			if ei.GetDomain() != apierr.Domain || ei.GetReason() != tt.reason {
				t.Errorf("ErrorInfo = %s/%s, want %s/%s", ei.GetDomain(), ei.GetReason(), apierr.Domain, tt.reason)
			}
			for k, v := range tt.md {
				if ei.GetMetadata()[k] != v {
					t.Errorf("metadata %s = %q, want %q", k, ei.GetMetadata()[k], v)
				}
			}
			checkViolations(t, vs, tt.violations)
			if tt.code == codes.Internal && strings.Contains(st.Message(), "nil map") {
				t.Errorf("the internal cause leaks into the message %q", st.Message())
			}
		})
	}
}

// checkViolations compares field violations; an empty wanted description
// only asks for a non-empty one.
func checkViolations(t *testing.T, got, want []violation) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("violations = %v, want %d of them: %v", got, len(want), want)
	}
	for i, w := range want {
		if got[i].field != w.field || (w.description != "" && got[i].description != w.description) || got[i].description == "" {
			t.Errorf("violation %d = %+v, want %+v", i, got[i], w)
		}
	}
}

func TestInvalidOutput(t *testing.T) {
	st := status.Convert(apierr.InvalidOutput(invalidOutput(t, 0, `{"sentiment":"great","score":"high"}`), "openai"))
	if st.Code() != codes.Aborted {
		t.Errorf("code = %v, want Aborted", st.Code())
	}
	ei, vs := details(st)
	if ei.GetReason() != "OUTPUT_VALIDATION_FAILED" || ei.GetMetadata()["provider"] != "openai" || ei.GetMetadata()["attempts"] != "3" {
		t.Errorf("ErrorInfo = %v", ei)
	}
	checkViolations(t, vs, []violation{{"/score", "got string, want number"}, {"/sentiment", ""}})
}

func TestInvalidOutputCause(t *testing.T) {
	st := status.FromProto(apierr.InvalidOutputCause(invalidOutput(t, 1, `{"sentiment":"great"}`), "mock"))
	if st.Code() != codes.InvalidArgument {
		t.Errorf("code = %v, want InvalidArgument", st.Code())
	}
	ei, vs := details(st)
	if ei.GetDomain() != apierr.Domain || ei.GetReason() != "OUTPUT_VALIDATION_FAILED" ||
		ei.GetMetadata()["attempt"] != "3" || ei.GetMetadata()["provider"] != "mock" {
		t.Errorf("ErrorInfo = %v, want llmrelay/OUTPUT_VALIDATION_FAILED, attempt 3, provider mock", ei)
	}
	checkViolations(t, vs, []violation{{"", `missing required property "score"`}, {"/sentiment", ""}})
	if strings.Contains(st.Message(), "no validation retries left") {
		t.Errorf("a re-ask's cause says %q", st.Message())
	}
}
