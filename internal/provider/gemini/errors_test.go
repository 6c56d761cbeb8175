package gemini

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestErrorTable checks the adapter's error table: the google.rpc status
// names Gemini sends, in error responses and failing streams, each with its
// failure class.
func TestErrorTable(t *testing.T) {
	pt.CheckErrorTable(t, []pt.ErrorCase{
		{Name: "429 RESOURCE_EXHAUSTED", Status: 429, Body: `{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}`, Want: provider.ClassRateLimited},
		{Name: "503 UNAVAILABLE", Status: 503, Body: `{"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}`, Want: provider.ClassOverloaded},
		// The context window, which Gemini names in words only (the body
		// as gemini-cli users reported it, google-gemini/gemini-cli#6678).
		{Name: "400 input token count exceeds the maximum", Status: 400, Body: `[{"error": {"code": 400, "message": "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).", "errors": [{"message": "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).", "domain": "global", "reason": "badRequest"}], "status": "INVALID_ARGUMENT"}}]`, Want: provider.ClassContextLength},
		{Name: "400 API key invalid", Status: 400, Body: `{"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}}`, Want: provider.ClassRejected},
		{Name: "403 PERMISSION_DENIED", Status: 403, Body: `[{"error": {"code": 403, "message": "denied", "status": "PERMISSION_DENIED"}}]`, Want: provider.ClassAuth},
		{Name: "500 from a proxy, not JSON", Status: 500, Body: `Internal Server Error`, Want: provider.ClassServerError},

		{Name: "in-stream UNAVAILABLE", Status: 0, Body: `{"code": 503, "message": "m", "status": "UNAVAILABLE"}`, Want: provider.ClassOverloaded},
		{Name: "in-stream RESOURCE_EXHAUSTED", Status: 0, Body: `{"code": 429, "message": "m", "status": "RESOURCE_EXHAUSTED"}`, Want: provider.ClassRateLimited},
		{Name: "in-stream INTERNAL", Status: 0, Body: `{"code": 500, "message": "m", "status": "INTERNAL"}`, Want: provider.ClassServerError},
		{Name: "in-stream INVALID_ARGUMENT", Status: 0, Body: `{"code": 400, "message": "m", "status": "INVALID_ARGUMENT"}`, Want: provider.ClassRejected},
		{Name: "an unknown name falls back to the code", Status: 0, Body: `{"code": 504, "message": "m", "status": "SOMETHING_NEW"}`, Want: provider.ClassServerError},
		{Name: "neither name nor code", Status: 0, Body: `{"message": "m"}`, Want: provider.ClassUnknown},
	}, parseErrorBody, func(object []byte) error {
		return decode(`data: {"error": ` + string(object) + "}\r\n\r\n").Err
	})
}
