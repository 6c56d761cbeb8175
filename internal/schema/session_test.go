package schema

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestSessionReasksThenAccepts is the issue's first scenario: the mock's
// fault makes the first reply {"sentiment":"great"}; the re-ask lists
// /sentiment and the missing score; the next attempt (the mock's instance)
// conforms, with one validation retry.
func TestSessionReasksThenAccepts(t *testing.T) {
	s := mustCompile(t, issueSchema)
	sess := NewSession(s, twoOfFive.ValidationRetries(nil))

	first := mustCheck(t, sess, 1, `{"sentiment":"great"}`)
	if first.Verdict != Reask {
		t.Fatalf("first reply: verdict %v, want reask", first.Verdict)
	}
	var inv *InvalidOutputError
	if !errors.As(first.Err, &inv) || !errors.Is(first.Err, ErrInvalidOutput) || inv.Exhausted || inv.Attempt != 1 {
		t.Fatalf("first reply: Err = %#v", first.Err)
	}
	locations := map[string]bool{}
	for _, v := range inv.Violations {
		locations[v.InstanceLocation] = true
	}
	if !locations["/sentiment"] || !strings.Contains(first.Reask, `missing required property "score"`) {
		t.Fatalf("first reply: violations %v, re-ask %q", inv.Violations, first.Reask)
	}

	instance, _ := InstanceText(s.JSON())
	second := mustCheck(t, sess, 2, instance)
	if second.Verdict != Accept || second.Err != nil {
		t.Fatalf("second reply %s: %+v", instance, second)
	}
	if !reflect.DeepEqual(second.Value, map[string]any{"sentiment": "positive", "score": jsonNumber("0")}) {
		t.Fatalf("second reply value %#v", second.Value)
	}
	if sess.Retries() != 1 {
		t.Fatalf("Retries() = %d, want 1", sess.Retries())
	}
	errs := sess.Errors()
	if len(errs) != 2 || errs[0].Attempt != 1 || errs[1].Attempt != 1 {
		t.Fatalf("Errors() = %+v, want the first attempt's two violations", errs)
	}
}

// TestSessionGivesUp is the issue's second scenario: invalid replies on
// every attempt with max_validation_retries 1.
func TestSessionGivesUp(t *testing.T) {
	s := mustCompile(t, issueSchema)
	sess := NewSession(s, 1)
	if o := mustCheck(t, sess, 1, `not json`); o.Verdict != Reask {
		t.Fatalf("attempt 1: %v", o.Verdict)
	}
	// A transport retry in between is not checked; attempt 3 is.
	o := mustCheck(t, sess, 3, `{"sentiment":"positive","score":"high"}`)
	var inv *InvalidOutputError
	if o.Verdict != GiveUp || !errors.As(o.Err, &inv) || !inv.Exhausted || inv.Attempt != 3 {
		t.Fatalf("attempt 3: %+v", o)
	}
	if o.Reask != "" || o.Value != nil {
		t.Fatalf("attempt 3: a give-up carries no re-ask and no value: %+v", o)
	}
	want := []AttemptViolation{
		{1, Violation{"", "", "not valid JSON: invalid character 'o' in literal null (expecting 'u')"}},
		{3, Violation{"/score", "/properties/score/type", "got string, want number"}},
	}
	if got := sess.Errors(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Errors() = %+v\nwant %+v", got, want)
	}
	if sess.Retries() != 1 {
		t.Fatalf("Retries() = %d, want 1", sess.Retries())
	}
	if msg := o.Err.Error(); !strings.Contains(msg, "no validation retries left") || !strings.Contains(msg, "at '/score'") {
		t.Fatalf("Error() = %q", msg)
	}
}

func TestSessionWithoutRetries(t *testing.T) {
	sess := NewSession(mustCompile(t, issueSchema), 0)
	if o := mustCheck(t, sess, 1, `{}`); o.Verdict != GiveUp {
		t.Fatalf("verdict %v, want give-up at once", o.Verdict)
	}
}

// mustCheck is sess.Check, which must be able to check the reply.
func mustCheck(t *testing.T, sess *Session, attempt int, reply string) Outcome {
	t.Helper()
	o, err := sess.Check(t.Context(), attempt, reply)
	if err != nil {
		t.Fatalf("Check(%d, %q): %v", attempt, reply, err)
	}
	return o
}
