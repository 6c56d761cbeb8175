package apierr_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"

	"github.com/llmrelay/llmrelay/internal/apierr"
)

// wireSize is what a status takes in the trailers, as gRPC encodes them.
func wireSize(st *status.Status) int {
	pct := 0
	for _, c := range []byte(st.Message()) {
		pct++
		if c < ' ' || c > '~' || c == '%' {
			pct += 2
		}
	}
	b := proto.Size(st.Proto())
	return pct + (b*8+5)/6
}

func manyFieldViolations(n int) []*errdetails.BadRequest_FieldViolation {
	out := make([]*errdetails.BadRequest_FieldViolation, n)
	for i := range out {
		out[i] = &errdetails.BadRequest_FieldViolation{Field: fmt.Sprintf("messages[%d].role", i),
			Description: "value must not be in list [0]; a message needs a role: ROLE_SYSTEM, ROLE_USER, ROLE_ASSISTANT or ROLE_TOOL " + strings.Repeat("x", 100)}
	}
	return out
}

func manyViolations(n int) *validate.Violations {
	v := &validate.Violations{}
	for i := range n {
		v.Violations = append(v.Violations, &validate.Violation{
			Field:   &validate.FieldPath{Elements: []*validate.FieldPathElement{{FieldName: proto.String("messages"), Subscript: &validate.FieldPathElement_Index{Index: uint64(i)}}, {FieldName: proto.String("role")}}},
			RuleId:  proto.String("enum.not_in"),
			Message: proto.String("value must not be in list [0] " + strings.Repeat("y", 150)),
		})
	}
	return v
}

func TestStatusesFitInTheTrailerBound(t *testing.T) {
	longMsg := strings.Repeat("validation error: messages[7].role: value must not be in list [0]\n", 600)
	tests := []struct {
		name       string
		err        *apierr.Error
		violations int
	}{
		{"500 field violations", &apierr.Error{Kind: apierr.InvalidArgument, Reason: "INVALID_REQUEST", Message: longMsg,
			FieldViolations: manyFieldViolations(500)}, 500},
		{"500 buf.validate violations", &apierr.Error{Kind: apierr.InvalidArgument, Reason: "INVALID_REQUEST", Message: longMsg,
			Extra: []protoadapt.MessageV1{manyViolations(500)}}, 500},
		{"both lists", &apierr.Error{Kind: apierr.InvalidArgument, Reason: "INVALID_REQUEST", Message: "bad",
			FieldViolations: manyFieldViolations(40), Extra: []protoadapt.MessageV1{manyViolations(60)}}, 100},
		{"a long multibyte message", &apierr.Error{Kind: apierr.Aborted, Reason: "X", Message: strings.Repeat("é€", 5000)}, 0},
		{"huge metadata and descriptions", &apierr.Error{Kind: apierr.PermissionDenied, Reason: "X", Message: "m",
			Metadata:        map[string]string{"model": strings.Repeat("m", 10000), "key": strings.Repeat("k", 10000)},
			FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "f", Description: strings.Repeat("d", 20000)}}}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.err.GRPCStatus()
			if n := wireSize(st); n > apierr.MaxTrailerBytes {
				t.Errorf("trailers of %d bytes, want at most %d", n, apierr.MaxTrailerBytes)
			}
			if st.Code() != codes.Code(tc.err.Kind) || len(st.Message()) > apierr.MaxMessageBytes || !utf8.ValidString(st.Message()) {
				t.Errorf("code %v, message of %d bytes (valid UTF-8: %v)", st.Code(), len(st.Message()), utf8.ValidString(st.Message()))
			}
			var info *errdetails.ErrorInfo
			listed := 0
			for _, d := range st.Details() {
				switch d := d.(type) {
				case *errdetails.ErrorInfo:
					info = d
				case *errdetails.BadRequest:
					listed += len(d.GetFieldViolations())
					for i, v := range d.GetFieldViolations() {
						if want := fmt.Sprintf("messages[%d].role", i); tc.violations > 1 && v.GetField() != want {
							t.Errorf("violation %d on %q, want the first ones in order (%q)", i, v.GetField(), want)
						}
					}
				case *validate.Violations:
					listed += len(d.GetViolations())
				}
			}
			if info.GetReason() != tc.err.Reason {
				t.Fatalf("ErrorInfo %v, want reason %s", info, tc.err.Reason)
			}
			for k, v := range info.GetMetadata() {
				if len(v) > 256 {
					t.Errorf("metadata %s of %d bytes", k, len(v))
				}
			}
			if listed == tc.violations {
				if _, ok := info.GetMetadata()[apierr.MetaViolations]; ok {
					t.Errorf("all violations listed, yet metadata %v", info.GetMetadata())
				}
				return
			}
			md := info.GetMetadata()
			if listed == 0 || md[apierr.MetaViolations] != fmt.Sprint(tc.violations) || md[apierr.MetaViolationsListed] != fmt.Sprint(listed) {
				t.Errorf("listed %d of %d, metadata %v: want the first ones listed and both counts", listed, tc.violations, md)
			}
			if !strings.Contains(st.Message(), fmt.Sprintf("%d violations; the details list the first %d", tc.violations, listed)) {
				t.Errorf("message %q does not say how many violations are listed", st.Message())
			}
		})
	}
}

func TestSmallStatusesAreUnchanged(t *testing.T) {
	e := apierr.InvalidField("INVALID_REQUEST", "model", "must look like <provider>/<model>")
	e.Metadata = map[string]string{"key": "checkout"}
	st := e.GRPCStatus()
	want := "model: must look like <provider>/<model>"
	if st.Message() != want || len(st.Details()) != 2 {
		t.Fatalf("status %q with %d details, want %q with ErrorInfo and BadRequest", st.Message(), len(st.Details()), want)
	}
	if md := st.Details()[0].(*errdetails.ErrorInfo).GetMetadata(); len(md) != 1 || md["key"] != "checkout" {
		t.Errorf("metadata %v", md)
	}
}

// TestKindsAreGRPCCodes: every Kind is the gRPC code of the same number and
// name, so that the door's mapping (grpcCode) is exact.
func TestKindsAreGRPCCodes(t *testing.T) {
	for k := apierr.OK; k <= apierr.Unauthenticated; k++ {
		st := (&apierr.Error{Kind: k, Reason: "X"}).GRPCStatus()
		if k == apierr.OK {
			continue // a status with details is never OK
		}
		if st.Code() != codes.Code(k) || st.Code().String() != k.String() {
			t.Errorf("kind %v is status %v (%d), want the same name and number", k, st.Code(), st.Code())
		}
	}
}
