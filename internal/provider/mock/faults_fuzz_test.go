package mock

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// FuzzParseFaults checks that any JSON either parses into faults that keep
// their invariants or is rejected with a *provider.FieldError; never a panic
// or another error.
func FuzzParseFaults(f *testing.F) {
	for _, seed := range []string{
		`[{"status":503},{"status":429,"retry_after_ms":700},{"drop_after":2}]`,
		`[{"error_after":2,"error_type":"api_error"},{"stall_after":0},{"output":"x"},{}]`,
		`[{"status":429,"error_type":"insufficient_quota","should_retry":false}]`,
		`{"status":503}`, `[1e400]`, `[{"status":-0}]`, `null`, `"x"`, `[[]]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		if json.Unmarshal([]byte(in), &v) != nil {
			return
		}
		faults, err := ParseFaults(v)
		if err != nil {
			var fe *provider.FieldError
			if !errors.As(err, &fe) || fe.Field == "" || fe.Description == "" {
				t.Fatalf("ParseFaults(%s) returned %v, want a *provider.FieldError", in, err)
			}
			return
		}
		for i, f := range faults {
			if f.Status != 0 && (f.Status < 400 || f.Status > 599) {
				t.Fatalf("fault %d has status %d", i, f.Status)
			}
			ends := 0
			for _, n := range []int{f.DropAfter, f.ErrorAfter, f.StallAfter} {
				if n < -1 {
					t.Fatalf("fault %d has a negative count %d", i, n)
				}
				if n >= 0 {
					ends++
				}
			}
			if ends > 1 || (f.Status != 0 && (ends > 0 || f.Output != nil)) {
				t.Fatalf("fault %d combines endings: %+v", i, f)
			}
		}
	})
}
