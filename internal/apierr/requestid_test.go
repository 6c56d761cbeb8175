package apierr_test

import (
	"errors"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/internal/apierr"
)

func TestWithRequestID(t *testing.T) {
	const id = "3f0b1c9e-5d2a-4c1b-8e7f-6a5b4c3d2e1f"
	orig := &apierr.Error{Kind: apierr.ResourceExhausted, Reason: "RATE_LIMITED", Message: "slow down", Metadata: map[string]string{"key": "k"}}
	replayed := (&apierr.Error{Kind: apierr.ResourceExhausted, Reason: "RESUME_BUFFER_FULL", Message: "full", Metadata: map[string]string{"request_id": "old"}}).GRPCStatus().Err()
	tests := []struct {
		name   string
		err    error
		code   codes.Code
		reason string
		keep   map[string]string
	}{
		{"an llmrelay error", orig, codes.ResourceExhausted, "RATE_LIMITED", map[string]string{"key": "k"}},
		{"a status built elsewhere, details kept", replayed, codes.ResourceExhausted, "RESUME_BUFFER_FULL", nil},
		{"any other error: INTERNAL", errors.New("nil map"), codes.Internal, "INTERNAL", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := status.Convert(apierr.WithRequestID(tt.err, id))
			if st.Code() != tt.code {
				t.Errorf("code %v, want %v", st.Code(), tt.code)
			}
			var info *errdetails.ErrorInfo
			for _, d := range st.Details() {
				if i, ok := d.(*errdetails.ErrorInfo); ok {
					info = i
				}
			}
			if info.GetReason() != tt.reason || info.GetMetadata()["request_id"] != id {
				t.Fatalf("ErrorInfo %v, want reason %s with request_id %s", info, tt.reason, id)
			}
			for k, v := range tt.keep {
				if info.GetMetadata()[k] != v {
					t.Errorf("metadata %s = %q, want %q kept", k, info.GetMetadata()[k], v)
				}
			}
		})
	}
	if _, ok := orig.Metadata["request_id"]; ok {
		t.Error("WithRequestID changed the error it was given")
	}
	if apierr.WithRequestID(nil, id) != nil {
		t.Error("WithRequestID(nil) is not nil")
	}
}
