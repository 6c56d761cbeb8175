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
	// MalformedAfter: after this many deltas an event arrives that does not
	// decode (a provider protocol error, not retried).
	MalformedAfter int
	// Output replaces the reply's text, when set (for structured output,
	// the schema's instance).
	Output *string
	// ToolCalls are calls the reply makes after its text, each streamed in
	// two fragments; the attempt then finishes with FinishToolCalls.
	ToolCalls []provider.ToolCall
	// Usage replaces the token counts the attempt reports, when set.
	Usage *provider.Usage
	// Reasoning, when set, is streamed before the text as a reasoning block
	// (signed, see Sign); mock/think reasons without it.
	Reasoning *string
	// Refusal, when not empty, is streamed after the text as the model's
	// refusal; the attempt then finishes with FinishRefusal.
	Refusal string
	// FirstDelayMs holds the attempt's first event back this long (a
	// provider slow to its first token), -1 when unset; the attempt's
	// context ends the wait.
	FirstDelayMs int
}

// fault keys, in the order the error messages list them.
var faultKeys = []string{"status", "retry_after_ms", "error_type", "should_retry", "drop_after", "error_after", "stall_after", "malformed_after",
	"first_delay_ms", "output", "reasoning", "refusal", "tool_calls", "usage"}

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
	f := noFault()
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
	if f.MalformedAfter, err = intField(obj, path, "malformed_after", 0, 1_000_000); err != nil {
		return f, err
	}
	if f.FirstDelayMs, err = intField(obj, path, "first_delay_ms", 0, 600_000); err != nil {
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
	if v, ok := obj["reasoning"]; ok {
		s, isStr := v.(string)
		if !isStr {
			return f, fieldErr(path+".reasoning", "must be a string")
		}
		f.Reasoning = &s
	}
	if v, ok := obj["refusal"]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" {
			return f, fieldErr(path+".refusal", "must be a non-empty string")
		}
		f.Refusal = s
	}
	if v, ok := obj["tool_calls"]; ok {
		if f.ToolCalls, err = parseToolCalls(path+".tool_calls", v); err != nil {
			return f, err
		}
	}
	if v, ok := obj["usage"]; ok {
		if f.Usage, err = parseUsage(path+".usage", v); err != nil {
			return f, err
		}
	}

	// Combinations that cannot happen on one attempt.
	ends := 0
	for _, n := range []int{f.DropAfter, f.ErrorAfter, f.StallAfter, f.MalformedAfter} {
		if n >= 0 {
			ends++
		}
	}
	if f.Status > 0 && (ends > 0 || f.Output != nil || f.Reasoning != nil || f.Refusal != "" || f.ToolCalls != nil || f.Usage != nil || f.FirstDelayMs >= 0) {
		return f, fieldErr(path+".status", "fails the attempt before streaming; it cannot be combined with drop_after, error_after, stall_after, malformed_after, first_delay_ms, output, reasoning, refusal, tool_calls or usage")
	}
	if ends > 1 {
		return f, fieldErr(path, "drop_after, error_after, stall_after and malformed_after each end the attempt; use one of them")
	}
	if f.Status == 0 && (f.RetryAfterMs >= 0 || f.ShouldRetry != nil) {
		return f, fieldErr(path, "retry_after_ms and should_retry go with status")
	}
	if f.ErrorType != "" && f.Status == 0 && f.ErrorAfter < 0 {
		return f, fieldErr(path+".error_type", "goes with status or error_after")
	}
	return f, nil
}

// maxToolCalls bounds a fault's tool_calls.
const maxToolCalls = 128

// parseToolCalls reads a fault's tool_calls: a list of objects with a
// non-empty "id" and "name" and an "arguments" string.
func parseToolCalls(path string, v any) ([]provider.ToolCall, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 || len(list) > maxToolCalls {
		return nil, fieldErr(path, fmt.Sprintf("must be a list of 1 to %d objects such as {\"id\": \"call_1\", \"name\": \"f\", \"arguments\": \"{}\"}", maxToolCalls))
	}
	calls := make([]provider.ToolCall, len(list))
	for i, item := range list {
		at := fmt.Sprintf("%s[%d]", path, i)
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, fieldErr(at, "must be an object with id, name and arguments")
		}
		for k := range obj {
			if k != "id" && k != "name" && k != "arguments" {
				return nil, fieldErr(at+"."+k, "unknown key; known: arguments, id, name")
			}
		}
		id, idOK := obj["id"].(string)
		name, nameOK := obj["name"].(string)
		args, argsOK := obj["arguments"].(string)
		if _, present := obj["arguments"]; !present {
			argsOK = true
		}
		switch {
		case !idOK || id == "":
			return nil, fieldErr(at+".id", "must be a non-empty string")
		case !nameOK || name == "":
			return nil, fieldErr(at+".name", "must be a non-empty string")
		case !argsOK:
			return nil, fieldErr(at+".arguments", "must be a string holding the JSON arguments")
		}
		calls[i] = provider.ToolCall{ID: id, Name: name, Arguments: args}
	}
	return calls, nil
}

// usageKeys are the keys of a fault's usage, in the order messages list
// them.
var usageKeys = []string{"input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens", "cache_creation_input_tokens"}

// parseUsage reads a fault's usage: {"input_tokens": n, "output_tokens": m}
// and, optionally, reasoning_tokens, cached_input_tokens and
// cache_creation_input_tokens.
func parseUsage(path string, v any) (*provider.Usage, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fieldErr(path, "must be an object such as {\"input_tokens\": 12, \"output_tokens\": 9}")
	}
	for k := range obj {
		if !slices.Contains(usageKeys, k) {
			return nil, fieldErr(path+"."+k, "unknown key; known: "+strings.Join(usageKeys, ", "))
		}
	}
	n := make([]int64, len(usageKeys))
	for i, k := range usageKeys {
		v, err := intField(obj, path, k, 0, 1<<31)
		if err != nil {
			return nil, err
		}
		n[i] = int64(max(v, 0))
	}
	return &provider.Usage{InputTokens: n[0], OutputTokens: n[1], ReasoningTokens: n[2], CachedInputTokens: n[3], CacheCreationInputTokens: n[4]}, nil
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

// noFault is a normal attempt: every count unset.
func noFault() Fault {
	return Fault{RetryAfterMs: -1, DropAfter: -1, ErrorAfter: -1, StallAfter: -1, MalformedAfter: -1, FirstDelayMs: -1}
}

func fieldErr(field, desc string) error {
	return &provider.FieldError{Field: field, Description: desc}
}
