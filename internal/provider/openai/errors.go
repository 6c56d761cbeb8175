package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// apiError is an OpenAI-style error object. Compatible servers differ in
// code: OpenAI sends a string or null, vLLM, llama.cpp and OpenRouter an
// HTTP status number.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// errorBody is an error response body in any of the shapes compatible
// servers use: {"error": {...}} (OpenAI, Ollama's /v1, Groq, OpenRouter,
// llama.cpp), {"error": "text"} (Ollama's native API), or the error's
// fields at the top level (vLLM, Mistral).
type errorBody struct {
	Error json.RawMessage `json:"error"`
	apiError
}

// decode finds the error object in b; ok is false when b holds none.
func decodeError(b []byte) (apiError, bool) {
	var body errorBody
	if json.Unmarshal(b, &body) != nil {
		return apiError{}, false
	}
	e := body.Error
	switch {
	case len(e) > 0 && e[0] == '{':
		var inner apiError
		if json.Unmarshal(e, &inner) != nil {
			return apiError{}, false
		}
		return inner, true
	case len(e) > 0 && e[0] == '"':
		var msg string
		_ = json.Unmarshal(e, &msg)
		return apiError{Message: msg}, true
	}
	return body.apiError, body.Message != "" || body.Type != ""
}

// parseErrorBody is the httpx.ErrorBodyParser for compatible servers.
func parseErrorBody(b []byte, e *provider.Error) {
	if a, ok := decodeError(b); ok {
		e.Type, e.Code, e.Message = a.typ(), a.code(), a.Message
	}
}

// inStreamError maps the data of an `error:` line (llama.cpp) to an error.
func inStreamError(b []byte) error {
	a, ok := decodeError(b)
	if !ok {
		return httpx.MalformedError(errNotAnError)
	}
	return a.inStream()
}

var errNotAnError = errors.New("an error event that holds no error object")

// inStream returns the KindInStream error for an error object that arrived
// in a stream, with the HTTP status it stands for.
func (a *apiError) inStream() *provider.Error {
	return &provider.Error{
		Kind:    provider.KindInStream,
		Status:  a.status(),
		Type:    a.typ(),
		Code:    a.code(),
		Message: a.Message,
	}
}

// code returns the error's code as text: a string as it is, a number in
// decimal, null as "".
func (a *apiError) code() string {
	c := bytes.TrimSpace(a.Code)
	if len(c) == 0 || string(c) == "null" {
		return ""
	}
	if c[0] == '"' {
		var s string
		_ = json.Unmarshal(c, &s)
		return s
	}
	return string(c)
}

// typ returns the error's type, or its code when it has no type (as
// OpenRouter's in-stream errors): the retry engine classifies by it.
func (a *apiError) typ() string {
	if a.Type != "" {
		return a.Type
	}
	if _, err := strconv.Atoi(a.code()); err != nil {
		return a.code()
	}
	return ""
}

// status is the HTTP status an in-stream error stands for: its numeric code
// when that is one, else what its type or code names; 0 when unknown.
func (a *apiError) status() int {
	if n, err := strconv.Atoi(a.code()); err == nil && n >= 400 && n <= 599 {
		return n
	}
	for _, s := range [2]string{a.Type, a.code()} {
		switch s {
		case "server_error", "internal_error", "internal_server_error", "api_error":
			return http.StatusInternalServerError
		case "overloaded", "overloaded_error", "service_unavailable", "engine_overloaded":
			return http.StatusServiceUnavailable
		case "rate_limit_exceeded", "rate_limit_error", "insufficient_quota", "tokens_exceeded":
			return http.StatusTooManyRequests
		case "invalid_request_error", "BadRequestError", "context_length_exceeded":
			return http.StatusBadRequest
		case "authentication_error", "invalid_api_key":
			return http.StatusUnauthorized
		case "permission_error":
			return http.StatusForbidden
		case "not_found_error", "model_not_found":
			return http.StatusNotFound
		}
	}
	return 0
}
