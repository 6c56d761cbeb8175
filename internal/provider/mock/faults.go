package mock

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// MaxFaults bounds the fault list.
const MaxFaults = 32

// Fault is what one attempt of a mock call does. The zero Fault (from `{}`)
// is a normal attempt; counts are -1 when unset.
type Fault struct {
	// Status makes the attempt fail before streaming with this HTTP status.
	Status int
	// RetryAfterMs is the retry hint sent with Status (retry-after-ms), -1 when none.
	RetryAfterMs int
	// ErrorType is the provider error type sent with Status or ErrorAfter,
	// e.g. "insufficient_quota"; empty picks one that fits.
	ErrorType string
	// ShouldRetry is the x-should-retry header sent with Status, nil when none.
	ShouldRetry *bool
	// DropAfter: after this many deltas the connection drops.
	DropAfter int
	// ErrorAfter: after this many deltas an in-stream provider error arrives.
	ErrorAfter int
	// StallAfter: after this many deltas the stream goes silent.
	StallAfter int
	// Output replaces the reply's text, when set.
	Output *string
}

// fault keys, in the order the error messages list them.
var faultKeys = []string{"status", "retry_after_ms", "error_type", "should_retry", "drop_after", "error_after", "stall_after", "output"}

// ParseFaults reads provider_options.faults: a list with one object per
// attempt. A nil value means no faults. Malformed input returns a
// *provider.FieldError naming the field, e.g. "provider_options.faults[1].status".
func ParseFaults(v any) ([]Fault, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fieldErr("provider_options.faults", "must be a list of objects, one per attempt, e.g. [{\"status\": 503}, {}]")
	}
	if len(list) > MaxFaults {
		return nil, fieldErr("provider_options.faults", fmt.Sprintf("has %d entries; at most %d", len(list), MaxFaults))
	}
	faults := make([]Fault, len(list))
	for i, item := range list {
		f, err := parseFault(fmt.Sprintf("provider_options.faults[%d]", i), item)
		if err != nil {
			return nil, err
		}
		faults[i] = f
	}
	return faults, nil
}

func parseFault(path string, v any) (Fault, error) {
	f := Fault{RetryAfterMs: -1, DropAfter: -1, ErrorAfter: -1, StallAfter: -1}
	obj, ok := v.(map[string]any)
	if !ok {
		return f, fieldErr(path, "must be an object such as {\"status\": 503} or {} for a normal attempt")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(faultKeys, k) {
			return f, fieldErr(path+"."+k, "unknown fault; known: "+strings.Join(faultKeys, ", "))
		}
	}
	var err error
	if f.Status, err = intField(obj, path, "status", 400, 599); err != nil {
		return f, err
	}
	if f.RetryAfterMs, err = intField(obj, path, "retry_after_ms", 0, 3_600_000); err != nil {
		return f, err
	}
	if f.DropAfter, err = intField(obj, path, "drop_after", 0, 1_000_000); err != nil {
		return f, err
	}
	if f.ErrorAfter, err = intField(obj, path, "error_after", 0, 1_000_000); err != nil {
		return f, err
	}
	if f.StallAfter, err = intField(obj, path, "stall_after", 0, 1_000_000); err != nil {
		return f, err
	}
	if v, ok := obj["error_type"]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" || len(s) > 64 {
			return f, fieldErr(path+".error_type", "must be a provider error type such as \"insufficient_quota\"")
		}
		f.ErrorType = s
	}
	if v, ok := obj["should_retry"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return f, fieldErr(path+".should_retry", "must be true or false")
		}
		f.ShouldRetry = &b
	}
	if v, ok := obj["output"]; ok {
		s, isStr := v.(string)
		if !isStr {
			return f, fieldErr(path+".output", "must be a string")
		}
		f.Output = &s
	}

	// Combinations that cannot happen on one attempt.
	ends := 0
	for _, n := range []int{f.DropAfter, f.ErrorAfter, f.StallAfter} {
		if n >= 0 {
			ends++
		}
	}
	if f.Status > 0 && (ends > 0 || f.Output != nil) {
		return f, fieldErr(path+".status", "fails the attempt before streaming; it cannot be combined with drop_after, error_after, stall_after or output")
	}
	if ends > 1 {
		return f, fieldErr(path, "drop_after, error_after and stall_after each end the attempt; use one of them")
	}
	if f.Status == 0 && (f.RetryAfterMs >= 0 || f.ShouldRetry != nil) {
		return f, fieldErr(path, "retry_after_ms and should_retry go with status")
	}
	if f.ErrorType != "" && f.Status == 0 && f.ErrorAfter < 0 {
		return f, fieldErr(path+".error_type", "goes with status or error_after")
	}
	return f, nil
}

// intField reads an optional integer in [lo, hi]; absent returns 0 for
// status and -1 for the others.
func intField(obj map[string]any, path, key string, lo, hi int) (int, error) {
	v, ok := obj[key]
	if !ok {
		if key == "status" {
			return 0, nil
		}
		return -1, nil
	}
	n, ok := asInt(v)
	if !ok || n < lo || n > hi {
		return 0, fieldErr(path+"."+key, fmt.Sprintf("must be an integer from %d to %d", lo, hi))
	}
	return n, nil
}

// asInt accepts JSON numbers that are whole.
func asInt(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int(f), true
}

func fieldErr(field, desc string) error {
	return &provider.FieldError{Field: field, Description: desc}
}
