package apierr

import (
	"errors"
	"strconv"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"

	"github.com/llmrelay/llmrelay/internal/schema"
)

// Structured-output reasons.
const (
	// ReasonInvalidSchema: the request's response_format.json_schema is not
	// a valid JSON Schema, is larger than the server allows, or costs more
	// to check a reply against than the server's validation budget.
	ReasonInvalidSchema = "INVALID_SCHEMA"
	// ReasonOutputValidationFailed: the model's reply did not parse or did
	// not conform to the schema (a WillRetry cause, or the end of a call
	// whose re-asks are exhausted).
	ReasonOutputValidationFailed = "OUTPUT_VALIDATION_FAILED"
)

// SchemaField is the request field a schema error points at.
const SchemaField = "response_format.json_schema"

// schemaError maps a request schema that cannot be used: a *schema.SchemaError
// (its message names the offending keyword by JSON pointer), an error
// wrapping schema.ErrSchemaTooLarge, or a *schema.BudgetError (a reply
// that could not be checked against the schema within the validation
// budget). All are INVALID_ARGUMENT with a BadRequest on
// response_format.json_schema. ok is false for other errors.
func schemaError(err error) (e *Error, ok bool) {
	var se *schema.SchemaError
	if !errors.As(err, &se) && !errors.Is(err, schema.ErrSchemaTooLarge) && !errors.Is(err, schema.ErrBudgetExceeded) {
		return nil, false
	}
	e = InvalidField(ReasonInvalidSchema, SchemaField, err.Error())
	e.Cause = err
	return e, true
}

// InvalidOutput is the status of a call whose structured output stayed
// invalid after every re-ask (ON_INVALID_FAIL): ABORTED, ErrorInfo reason
// OUTPUT_VALIDATION_FAILED with the metadata attempts and, when not empty,
// provider, and a BadRequest with one field violation per validation error
// of the last reply (field = the JSON pointer of the offending value in the
// reply, "" for the whole reply). The message is err's, which lists the
// first violations.
func InvalidOutput(err *schema.InvalidOutputError, providerName string) *Error {
	md := map[string]string{"attempts": strconv.Itoa(err.Attempt)}
	if providerName != "" {
		md["provider"] = providerName
	}
	return &Error{
		Kind:            Aborted,
		Reason:          ReasonOutputValidationFailed,
		Message:         err.Error(),
		Metadata:        md,
		FieldViolations: outputViolations(err),
		Cause:           err,
	}
}

// InvalidOutputCause is the cause a WillRetry with reason INVALID_OUTPUT
// carries: INVALID_ARGUMENT, ErrorInfo reason OUTPUT_VALIDATION_FAILED with
// the metadata attempt and provider, and the same BadRequest as
// InvalidOutput.
func InvalidOutputCause(err *schema.InvalidOutputError, providerName string) *spb.Status {
	e := &Error{
		Kind:            InvalidArgument,
		Reason:          ReasonOutputValidationFailed,
		Message:         err.Error(),
		Metadata:        map[string]string{"attempt": strconv.Itoa(err.Attempt), "provider": providerName},
		FieldViolations: outputViolations(err),
	}
	return e.GRPCStatus().Proto()
}

func outputViolations(err *schema.InvalidOutputError) []*errdetails.BadRequest_FieldViolation {
	out := make([]*errdetails.BadRequest_FieldViolation, len(err.Violations))
	for i, v := range err.Violations {
		out[i] = &errdetails.BadRequest_FieldViolation{Field: v.InstanceLocation, Description: v.Message}
	}
	return out
}
