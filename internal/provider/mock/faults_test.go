package mock

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func TestParseFaults(t *testing.T) {
	normal := noFault()
	with := func(f func(*Fault)) Fault { g := normal; f(&g); return g }
	tru := true
	out := "text"
	tests := []struct {
		name string
		in   string
		want []Fault
	}{
		{"absent", `null`, nil},
		{"empty list", `[]`, []Fault{}},
		{"normal attempt", `[{}]`, []Fault{normal}},
		{"status", `[{"status":503}]`, []Fault{with(func(f *Fault) { f.Status = 503 })}},
		{"status with hint", `[{"status":429,"retry_after_ms":700}]`, []Fault{with(func(f *Fault) { f.Status = 429; f.RetryAfterMs = 700 })}},
		{"zero hint", `[{"status":429,"retry_after_ms":0}]`, []Fault{with(func(f *Fault) { f.Status = 429; f.RetryAfterMs = 0 })}},
		{"quota", `[{"status":429,"error_type":"insufficient_quota","should_retry":true}]`, []Fault{with(func(f *Fault) { f.Status = 429; f.ErrorType = "insufficient_quota"; f.ShouldRetry = &tru })}},
		{"drop", `[{"drop_after":2}]`, []Fault{with(func(f *Fault) { f.DropAfter = 2 })}},
		{"drop at once", `[{"drop_after":0}]`, []Fault{with(func(f *Fault) { f.DropAfter = 0 })}},
		{"error", `[{"error_after":2,"error_type":"api_error"}]`, []Fault{with(func(f *Fault) { f.ErrorAfter = 2; f.ErrorType = "api_error" })}},
		{"stall", `[{"stall_after":2}]`, []Fault{with(func(f *Fault) { f.StallAfter = 2 })}},
		{"slow first event", `[{"first_delay_ms":2000}]`, []Fault{with(func(f *Fault) { f.FirstDelayMs = 2000 })}},
		{"output", `[{"output":"text"}]`, []Fault{with(func(f *Fault) { f.Output = &out })}},
		{"output then drop", `[{"output":"text","drop_after":1}]`, []Fault{with(func(f *Fault) { f.Output = &out; f.DropAfter = 1 })}},
		{"tool calls", `[{"tool_calls":[{"id":"c1","name":"f","arguments":"{\"a\":1}"},{"id":"c2","name":"g"}]}]`, []Fault{with(func(f *Fault) {
			f.ToolCalls = []provider.ToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}, {ID: "c2", Name: "g"}}
		})}},
		{"usage", `[{"usage":{"input_tokens":12,"output_tokens":9}}]`, []Fault{with(func(f *Fault) { f.Usage = &provider.Usage{InputTokens: 12, OutputTokens: 9} })}},
		{"usage with reasoning and cache", `[{"usage":{"input_tokens":12,"output_tokens":9,"reasoning_tokens":4,"cached_input_tokens":10,"cache_creation_input_tokens":2}}]`, []Fault{with(func(f *Fault) {
			f.Usage = &provider.Usage{InputTokens: 12, OutputTokens: 9, ReasoningTokens: 4, CachedInputTokens: 10, CacheCreationInputTokens: 2}
		})}},
		{"malformed", `[{"malformed_after":1}]`, []Fault{with(func(f *Fault) { f.MalformedAfter = 1 })}},
		{"reasoning", `[{"reasoning":"text"}]`, []Fault{with(func(f *Fault) { f.Reasoning = &out })}},
		{"refusal", `[{"refusal":"no"}]`, []Fault{with(func(f *Fault) { f.Refusal = "no" })}},
		{"sequence", `[{"status":503},{"status":429,"retry_after_ms":700},{"drop_after":2}]`, []Fault{
			with(func(f *Fault) { f.Status = 503 }),
			with(func(f *Fault) { f.Status = 429; f.RetryAfterMs = 700 }),
			with(func(f *Fault) { f.DropAfter = 2 }),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFaults(decode(t, tc.in))
			if err != nil {
				t.Fatalf("ParseFaults(%s): %v", tc.in, err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tc.want)
			if string(gj) != string(wj) {
				t.Errorf("ParseFaults(%s)\n got %s\nwant %s", tc.in, gj, wj)
			}
		})
	}
}

func TestParseFaultsRejectsMalformedInput(t *testing.T) {
	tests := []struct {
		name, in, field string
	}{
		{"not a list", `{"status":503}`, "provider_options.faults"},
		{"string", `"503"`, "provider_options.faults"},
		{"entry not an object", `[503]`, "provider_options.faults[0]"},
		{"unknown key", `[{},{"stauts":503}]`, "provider_options.faults[1].stauts"},
		{"status not a number", `[{"status":"503"}]`, "provider_options.faults[0].status"},
		{"status fractional", `[{"status":503.5}]`, "provider_options.faults[0].status"},
		{"status out of range", `[{"status":200}]`, "provider_options.faults[0].status"},
		{"status too high", `[{"status":600}]`, "provider_options.faults[0].status"},
		{"negative hint", `[{"status":429,"retry_after_ms":-1}]`, "provider_options.faults[0].retry_after_ms"},
		{"hint without status", `[{"retry_after_ms":100}]`, "provider_options.faults[0]"},
		{"should_retry without status", `[{"should_retry":true}]`, "provider_options.faults[0]"},
		{"should_retry not bool", `[{"status":500,"should_retry":"yes"}]`, "provider_options.faults[0].should_retry"},
		{"negative drop", `[{"drop_after":-2}]`, "provider_options.faults[0].drop_after"},
		{"two endings", `[{"drop_after":1,"stall_after":2}]`, "provider_options.faults[0]"},
		{"malformed and drop", `[{"drop_after":1,"malformed_after":2}]`, "provider_options.faults[0]"},
		{"status and reasoning", `[{"status":503,"reasoning":"x"}]`, "provider_options.faults[0].status"},
		{"reasoning not a string", `[{"reasoning":1}]`, "provider_options.faults[0].reasoning"},
		{"refusal empty", `[{"refusal":""}]`, "provider_options.faults[0].refusal"},
		{"status and drop", `[{"status":503,"drop_after":1}]`, "provider_options.faults[0].status"},
		{"status and output", `[{"status":503,"output":"x"}]`, "provider_options.faults[0].status"},
		{"status and first delay", `[{"status":503,"first_delay_ms":10}]`, "provider_options.faults[0].status"},
		{"first delay too long", `[{"first_delay_ms":600001}]`, "provider_options.faults[0].first_delay_ms"},
		{"output not string", `[{"output":5}]`, "provider_options.faults[0].output"},
		{"error_type alone", `[{"error_type":"x"}]`, "provider_options.faults[0].error_type"},
		{"error_type empty", `[{"status":500,"error_type":""}]`, "provider_options.faults[0].error_type"},
		{"tool_calls not a list", `[{"tool_calls":{"id":"c"}}]`, "provider_options.faults[0].tool_calls"},
		{"tool_calls empty", `[{"tool_calls":[]}]`, "provider_options.faults[0].tool_calls"},
		{"tool call without id", `[{"tool_calls":[{"name":"f"}]}]`, "provider_options.faults[0].tool_calls[0].id"},
		{"tool call without name", `[{"tool_calls":[{"id":"c"}]}]`, "provider_options.faults[0].tool_calls[0].name"},
		{"tool call arguments not a string", `[{"tool_calls":[{"id":"c","name":"f","arguments":{}}]}]`, "provider_options.faults[0].tool_calls[0].arguments"},
		{"tool call unknown key", `[{"tool_calls":[{"id":"c","name":"f","args":"{}"}]}]`, "provider_options.faults[0].tool_calls[0].args"},
		{"status and tool calls", `[{"status":503,"tool_calls":[{"id":"c","name":"f"}]}]`, "provider_options.faults[0].status"},
		{"usage not an object", `[{"usage":5}]`, "provider_options.faults[0].usage"},
		{"usage negative", `[{"usage":{"input_tokens":-1}}]`, "provider_options.faults[0].usage.input_tokens"},
		{"usage unknown key", `[{"usage":{"total_tokens":1}}]`, "provider_options.faults[0].usage.total_tokens"},
		{"too many", `[` + repeat(`{},`, MaxFaults) + `{}]`, "provider_options.faults"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFaults(decode(t, tc.in))
			var fe *provider.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("ParseFaults(%s) = %v, want a *provider.FieldError", tc.in, err)
			}
			if fe.Field != tc.field || fe.Description == "" {
				t.Errorf("field %q (%q), want %q with a description", fe.Field, fe.Description, tc.field)
			}
		})
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}
