package gemini

import (
	"encoding/json"

	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// TestErrorTable checks the adapter's error table: the google.rpc status
// names Gemini sends, in error responses and failing streams, each with its
// failure class.
func TestErrorTable(t *testing.T) {
	tests := []struct {
		name   string
		status int // 0: an in-stream error
		body   string
		want   provider.Class
	}{
		{"429 RESOURCE_EXHAUSTED", 429, `{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}`, provider.ClassRateLimited},
		{"503 UNAVAILABLE", 503, `{"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}`, provider.ClassOverloaded},
		{"400 API key invalid", 400, `{"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}}`, provider.ClassRejected},
		{"403 PERMISSION_DENIED", 403, `[{"error": {"code": 403, "message": "denied", "status": "PERMISSION_DENIED"}}]`, provider.ClassAuth},
		{"500 from a proxy, not JSON", 500, `Internal Server Error`, provider.ClassServerError},

		{"in-stream UNAVAILABLE", 0, `{"code": 503, "message": "m", "status": "UNAVAILABLE"}`, provider.ClassOverloaded},
		{"in-stream RESOURCE_EXHAUSTED", 0, `{"code": 429, "message": "m", "status": "RESOURCE_EXHAUSTED"}`, provider.ClassRateLimited},
		{"in-stream INTERNAL", 0, `{"code": 500, "message": "m", "status": "INTERNAL"}`, provider.ClassServerError},
		{"in-stream INVALID_ARGUMENT", 0, `{"code": 400, "message": "m", "status": "INVALID_ARGUMENT"}`, provider.ClassRejected},
		{"an unknown name falls back to the code", 0, `{"code": 504, "message": "m", "status": "SOMETHING_NEW"}`, provider.ClassServerError},
		{"neither name nor code", 0, `{"message": "m"}`, provider.ClassUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *provider.Error
			if tc.status == 0 {
				var a apiError
				if err := json.Unmarshal([]byte(tc.body), &a); err != nil {
					t.Fatal(err)
				}
				got = a.inStream()
			} else {
				got = &provider.Error{Kind: provider.KindHTTP, Status: tc.status}
				parseErrorBody([]byte(tc.body), got)
			}
			if got.Class != tc.want {
				t.Errorf("class = %v, want %v (%+v)", got.Class, tc.want, got)
			}
		})
	}
}
