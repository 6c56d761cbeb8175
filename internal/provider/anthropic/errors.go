package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// apiError is the error object of an error response body or an `error`
// stream event.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// errorBody is an error response body:
// {"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}.
type errorBody struct {
	Error *apiError `json:"error"`
}

var errNoErrorObject = errors.New("an error event without an error object")

// parseErrorBody is the httpx.ErrorBodyParser for Anthropic.
func parseErrorBody(b []byte, e *provider.Error) {
	var body errorBody
	if json.Unmarshal(b, &body) == nil && body.Error != nil {
		e.Type, e.Message = body.Error.Type, body.Error.Message
	}
}

// inStream returns the KindInStream error for an `error` event, which
// arrives under HTTP 200, with the status its type stands for.
func (a *apiError) inStream() *provider.Error {
	return &provider.Error{Kind: provider.KindInStream, Status: statusOf(a.Type), Type: a.Type, Message: a.Message}
}

// statusOf is the HTTP status Anthropic uses for an error type; 0 for a
// type it does not document.
func statusOf(typ string) int {
	switch typ {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "billing_error":
		return http.StatusPaymentRequired
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "api_error":
		return http.StatusInternalServerError
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "overloaded_error":
		return 529
	}
	return 0
}
