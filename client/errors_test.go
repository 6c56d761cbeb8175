package client

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

func TestFromErrorDecodesDetails(t *testing.T) {
	rateLimited, _ := status.New(codes.ResourceExhausted, "slow down").WithDetails(
		&errdetails.ErrorInfo{Reason: "PROVIDER_RATE_LIMITED", Domain: Domain, Metadata: map[string]string{"provider": "openai"}},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(700 * time.Millisecond)},
	)
	badRequest, _ := status.New(codes.InvalidArgument, "bad faults").WithDetails(
		&errdetails.ErrorInfo{Reason: "INVALID_PROVIDER_OPTIONS", Domain: Domain},
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "provider_options.faults[1].drop_after", Description: "must be ≥ 0"}}},
	)
	retryNow, _ := status.New(codes.Unavailable, "draining").WithDetails(
		&errdetails.ErrorInfo{Reason: "SERVER_SHUTTING_DOWN", Domain: Domain},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(0)},
	)
	tests := []struct {
		name       string
		err        error
		wantCode   codes.Code
		wantReason string
		wantMeta   map[string]string
		wantDelay  time.Duration
		wantHas    bool
		wantField  string
	}{
		{name: "ErrorInfo and RetryInfo", err: rateLimited.Err(), wantCode: codes.ResourceExhausted, wantReason: "PROVIDER_RATE_LIMITED", wantMeta: map[string]string{"provider": "openai"}, wantDelay: 700 * time.Millisecond, wantHas: true},
		{name: "BadRequest", err: badRequest.Err(), wantCode: codes.InvalidArgument, wantReason: "INVALID_PROVIDER_OPTIONS", wantField: "provider_options.faults[1].drop_after"},
		{name: "a zero RetryInfo still says retry", err: retryNow.Err(), wantCode: codes.Unavailable, wantReason: "SERVER_SHUTTING_DOWN", wantHas: true},
		{name: "status without details", err: status.Error(codes.Unavailable, "connection refused"), wantCode: codes.Unavailable},
		{name: "wrapped status", err: fmt.Errorf("calling: %w", rateLimited.Err()), wantCode: codes.ResourceExhausted, wantReason: "PROVIDER_RATE_LIMITED", wantMeta: map[string]string{"provider": "openai"}, wantDelay: 700 * time.Millisecond, wantHas: true},
		{name: "not a status", err: errors.New("boom"), wantCode: codes.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := FromError(tt.err)
			if e.Code != tt.wantCode || e.Reason != tt.wantReason || e.RetryDelay != tt.wantDelay || e.HasRetryDelay != tt.wantHas {
				t.Errorf("got {%v %q %v %v}, want {%v %q %v %v}", e.Code, e.Reason, e.RetryDelay, e.HasRetryDelay, tt.wantCode, tt.wantReason, tt.wantDelay, tt.wantHas)
			}
			if tt.wantReason != "" && e.Domain != Domain {
				t.Errorf("domain = %q, want %q", e.Domain, Domain)
			}
			if fmt.Sprint(e.Metadata) != fmt.Sprint(tt.wantMeta) {
				t.Errorf("metadata = %v, want %v", e.Metadata, tt.wantMeta)
			}
			if tt.wantField != "" && (len(e.FieldViolations) != 1 || e.FieldViolations[0].GetField() != tt.wantField) {
				t.Errorf("field violations = %v, want %q", e.FieldViolations, tt.wantField)
			}
			if status.Code(e) != tt.wantCode {
				t.Errorf("status.Code(*Error) = %v, want %v", status.Code(e), tt.wantCode)
			}
			if FromError(e) != e || FromError(fmt.Errorf("again: %w", e)) != e {
				t.Error("FromError of an *Error must return it as it is")
			}
		})
	}
}

func TestFromErrorKeepsTheCauseOfNonStatusErrors(t *testing.T) {
	e := FromError(fmt.Errorf("dialing: %w", context.DeadlineExceeded))
	if !errors.Is(e, context.DeadlineExceeded) {
		t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false", e)
	}
	if FromError(nil) != nil || FromStatusProto(nil) != nil {
		t.Error("nil in must give nil out")
	}
}

func TestCauseOf(t *testing.T) {
	st, _ := status.New(codes.Unavailable, "connection dropped").WithDetails(&errdetails.ErrorInfo{Reason: "PROVIDER_UNAVAILABLE", Domain: Domain})
	w := &llmrelayv1.WillRetry{Cause: st.Proto()}
	e := CauseOf(w)
	if e.Code != codes.Unavailable || e.Reason != "PROVIDER_UNAVAILABLE" || e.Message != "connection dropped" {
		t.Errorf("CauseOf = %+v", e)
	}
	if CauseOf(&llmrelayv1.WillRetry{}) != nil {
		t.Error("CauseOf a will_retry without a cause must be nil")
	}
}

func TestErrorText(t *testing.T) {
	e := FromError(status.Error(codes.Unavailable, "gone"))
	if got, want := e.Error(), "llmrelay: Unavailable: gone"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	st, _ := status.New(codes.Unavailable, "gone").WithDetails(&errdetails.ErrorInfo{Reason: "RETRIES_EXHAUSTED", Domain: Domain})
	if got, want := FromError(st.Err()).Error(), "llmrelay: Unavailable RETRIES_EXHAUSTED: gone"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestStreamErrorNamesTheRequestID(t *testing.T) {
	withID, _ := status.New(codes.Unavailable, "no").WithDetails(
		&errdetails.ErrorInfo{Reason: "PROVIDER_RETRY_DISALLOWED", Domain: Domain, Metadata: map[string]string{"request_id": "from-the-error-info"}},
	)
	tests := []struct {
		name      string
		requestID string // the request's
		end       error
		trailer   metadata.MD
		want      string
	}{
		{name: "the ErrorInfo's first", requestID: "from-the-request", end: withID.Err(), trailer: metadata.Pairs(HeaderRequestID, "from-the-trailer"), want: "from-the-error-info"},
		{name: "a status without ErrorInfo: the trailer's", requestID: "from-the-request", end: status.Error(codes.ResourceExhausted, "grpc: received message larger than max"), trailer: metadata.Pairs(HeaderRequestID, "from-the-trailer"), want: "from-the-trailer"},
		{name: "no trailer: the request's", requestID: "from-the-request", end: status.Error(codes.Internal, "stream terminated by RST_STREAM"), want: "from-the-request"},
		{name: "none known", end: status.Error(codes.Internal, "stream terminated by RST_STREAM"), want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stub := &scriptedStub{streams: []*scripted{{events: []*llmrelayv1.GenerateEvent{ev(1, "a ")}, end: tt.end, trailer: tt.trailer}}}
			s, err := (&Client{stub: stub}).Generate(t.Context(), &llmrelayv1.GenerateRequest{RequestId: tt.requestID})
			if err != nil {
				t.Fatal(err)
			}
			_, err = Collect(s, nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Collect: %v, want an *Error", err)
			}
			if e.RequestID != tt.want {
				t.Errorf("RequestID = %q, want %q", e.RequestID, tt.want)
			}
		})
	}
}
