package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

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

// parseErrorBody is the httpx.ErrorBodyParser for Anthropic: it reads the
// error object and classifies the error by its status and type
// (provider.HTTPClass).
func parseErrorBody(b []byte, e *provider.Error) {
	var body errorBody
	if json.Unmarshal(b, &body) == nil && body.Error != nil {
		e.Type, e.Message = body.Error.Type, body.Error.Message
	}
	byType := classOf(e.Type)
	if byType == provider.ClassRejected && overflowsContext(e.Message) {
		byType = provider.ClassContextLength
	}
	e.Class = provider.HTTPClass(e.Status, byType)
}

// overflowsContext reports whether an invalid_request_error's message says
// the request is longer than the model's context window, which Anthropic
// says in words only: "prompt is too long: 208656 tokens > 200000
// maximum", or, with max_tokens, "input length and `max_tokens` exceed
// context limit: 197202 + 8192 > 200000, ...".
func overflowsContext(msg string) bool {
	return strings.HasPrefix(msg, "prompt is too long") || strings.Contains(msg, "exceed context limit")
}

// inStream returns the KindInStream error for an `error` event, which
// arrives under HTTP 200: its class and the status its type stands for
// come from the error table.
func (a *apiError) inStream() *provider.Error {
	status, class := errorType(a.Type)
	return &provider.Error{Kind: provider.KindInStream, Class: class, Status: status, Type: a.Type, Message: a.Message}
}

// classOf is the class the error table gives an error type.
func classOf(typ string) provider.Class {
	_, class := errorType(typ)
	return class
}

// errorType is the anthropic adapter's error table: Anthropic's documented
// error types, each with the HTTP status Anthropic uses for it and its
// failure class; 0 and ClassUnknown for a type it does not document.
func errorType(typ string) (status int, class provider.Class) {
	switch typ {
	case "invalid_request_error":
		return http.StatusBadRequest, provider.ClassRejected
	case "authentication_error":
		return http.StatusUnauthorized, provider.ClassAuth
	case "billing_error":
		return http.StatusPaymentRequired, provider.ClassQuotaExhausted
	case "permission_error":
		return http.StatusForbidden, provider.ClassAuth
	case "not_found_error":
		return http.StatusNotFound, provider.ClassNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge, provider.ClassRejected
	case "rate_limit_error":
		return http.StatusTooManyRequests, provider.ClassRateLimited
	case "api_error":
		return http.StatusInternalServerError, provider.ClassServerError
	case "timeout_error":
		return http.StatusGatewayTimeout, provider.ClassServerError
	case "overloaded_error":
		return 529, provider.ClassOverloaded
	}
	return 0, provider.ClassUnknown
}
