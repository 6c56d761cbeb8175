package schema

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrInvalidOutput is matched (errors.Is) by every *InvalidOutputError.
var ErrInvalidOutput = errors.New("structured output does not conform to the schema")

// InvalidOutputError says that a reply did not parse or did not conform.
// As the cause of a will_retry it becomes an INVALID_ARGUMENT status; as the
// end of a call whose re-asks are exhausted, ABORTED with ErrorInfo reason
// OUTPUT_VALIDATION_FAILED. Either way it carries a google.rpc.BadRequest
// with one field violation per Violation (field = InstanceLocation,
// description = Message).
type InvalidOutputError struct {
	// Attempt is the attempt whose reply failed, from 1.
	Attempt int
	// Violations are that reply's violations; never empty.
	Violations []Violation
	// Exhausted is true when no re-ask remains.
	Exhausted bool
}

// Error implements error.
func (e *InvalidOutputError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v (attempt %d", ErrInvalidOutput, e.Attempt)
	if e.Exhausted {
		b.WriteString(", no validation retries left")
	}
	b.WriteString(")")
	for i, v := range e.Violations {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Violations)-i)
			break
		}
		b.WriteString("; ")
		b.WriteString(v.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalidOutput) true.
func (e *InvalidOutputError) Is(target error) bool { return target == ErrInvalidOutput }

// ReaskMessage returns the text of the user message that follows an invalid
// reply (which goes back to the model as an assistant message): one line per
// violation, `at '/score': got string, want number`, with ” standing for
// the whole reply, then the request for JSON that conforms and nothing else.
func ReaskMessage(vs []Violation) string {
	var b strings.Builder
	b.WriteString("Your reply does not conform to the required JSON Schema. ")
	b.WriteString("The problems, each at a JSON pointer into your reply ('' is the whole reply):\n")
	for _, v := range vs {
		b.WriteString(v.String())
		b.WriteByte('\n')
	}
	b.WriteString("\nReply again with only the corrected JSON that conforms to the schema: ")
	b.WriteString("no explanation, no Markdown, nothing before or after the JSON.")
	return b.String()
}

// Verdict says what to do after checking a reply.
type Verdict uint8

// Verdicts.
const (
	// Accept: the reply conforms; Outcome.Value is the object for Final.
	Accept Verdict = iota + 1
	// Reask: emit will_retry (reason INVALID_OUTPUT, discard_partial, no
	// delay, cause Outcome.Err) and run the next attempt with the invalid
	// reply as an assistant message and Outcome.Reask as a user message.
	Reask
	// GiveUp: no re-ask remains; end as response_format.on_invalid says.
	GiveUp
)

// String returns the verdict's name.
func (v Verdict) String() string {
	switch v {
	case Accept:
		return "accept"
	case Reask:
		return "reask"
	case GiveUp:
		return "give-up"
	}
	return "unknown"
}

// Outcome is the result of checking one attempt's reply.
type Outcome struct {
	Verdict Verdict
	// Value is the parsed reply, with Accept only.
	Value any
	// Violations are this reply's, without Accept.
	Violations []Violation
	// Reask is the user message for the next attempt, with Reask only.
	Reask string
	// Err is an *InvalidOutputError, without Accept.
	Err error
}

// AttemptViolation is a Violation and the attempt whose reply had it: one
// entry of Final.validation_errors.
type AttemptViolation struct {
	Attempt int
	Violation
}

// Session checks the replies of one structured-output call and keeps count
// of its validation retries, apart from transport retries. It is used by the
// call's goroutine only.
type Session struct {
	schema     *Schema
	maxRetries int
	retries    int
	seen       []AttemptViolation
}

// NewSession starts checking the replies of one call against s, allowing
// maxRetries re-asks (see Config.ValidationRetries).
func NewSession(s *Schema, maxRetries int) *Session {
	return &Session{schema: s, maxRetries: max(maxRetries, 0)}
}

// Check checks the full text of an attempt that completed (its stream ended
// normally). Call it once per such attempt; attempts that failed in
// transport are not checked. A Reask verdict counts one validation retry.
// Its error says the reply could not be checked (Schema.Validate's: the
// budget was spent, or ctx ended first); it counts nothing.
func (s *Session) Check(ctx context.Context, attempt int, reply string) (Outcome, error) {
	v, vs, err := s.schema.CheckContext(ctx, reply)
	if err != nil {
		return Outcome{}, err
	}
	if len(vs) == 0 {
		return Outcome{Verdict: Accept, Value: v}, nil
	}
	for _, x := range vs {
		s.seen = append(s.seen, AttemptViolation{Attempt: attempt, Violation: x})
	}
	if s.retries >= s.maxRetries {
		return Outcome{Verdict: GiveUp, Violations: vs, Err: &InvalidOutputError{Attempt: attempt, Violations: vs, Exhausted: true}}, nil
	}
	s.retries++
	return Outcome{Verdict: Reask, Violations: vs, Reask: ReaskMessage(vs), Err: &InvalidOutputError{Attempt: attempt, Violations: vs}}, nil
}

// Retries returns how many re-asks the call made so far: Final.validation_retries.
func (s *Session) Retries() int { return s.retries }

// Errors returns every violation seen so far, in attempt order:
// Final.validation_errors.
func (s *Session) Errors() []AttemptViolation { return slices.Clone(s.seen) }
