package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

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

// parseErrorBody is the httpx.ErrorBodyParser for compatible servers: it
// reads the error object, if the body holds one, and classifies the error
// by its status and type (provider.HTTPClass).
func parseErrorBody(b []byte, e *provider.Error) {
	byType := provider.ClassUnknown
	if a, ok := decodeError(b); ok {
		e.Type, e.Code, e.Message = a.typ(), a.code(), a.Message
		byType = classOf(e.Type, e.Code, 0)
		if (byType == provider.ClassRejected || byType == provider.ClassUnknown) && overflowsContext(a.Message) {
			byType = provider.ClassContextLength
		}
	}
	e.Class = provider.HTTPClass(e.Status, byType)
}

// overflowsContext reports whether an error message says the request is
// longer than the model's context window, for the compatible servers that
// say it in words only: vLLM, DeepSeek and OpenRouter ("This model's
// maximum context length is 65536 tokens. However, you requested ..."),
// Mistral ("... too large for model with 32768 maximum context length"),
// llama.cpp ("request (9412 tokens) exceeds the available context size").
func overflowsContext(msg string) bool {
	return strings.Contains(msg, "maximum context length") || strings.Contains(msg, "exceeds the available context size")
}

// inStreamError maps the data of an `error:` line (llama.cpp) to an error.
func inStreamError(b []byte) error {
	a, ok := decodeError(b)
	if !ok {
		return httpx.ProtocolError(errNotAnError, b)
	}
	return a.inStream()
}

var errNotAnError = errors.New("an error event that holds no error object")

// inStream returns the KindInStream error for an error object that arrived
// in a stream: its class from the error table, and the HTTP status it
// stands for, for reports.
func (a *apiError) inStream() *provider.Error {
	typ, code := a.typ(), a.code()
	status := a.status()
	class := classOf(typ, code, status)
	if class == provider.ClassRejected && overflowsContext(a.Message) {
		class = provider.ClassContextLength
	}
	return &provider.Error{
		Kind:    provider.KindInStream,
		Class:   class,
		Status:  status,
		Type:    typ,
		Code:    code,
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
// OpenRouter's in-stream errors): the error table reads it.
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
// when that is one, else the status the error table gives its type or
// code; 0 when unknown.
func (a *apiError) status() int {
	if n, err := strconv.Atoi(a.code()); err == nil && n >= 400 && n <= 599 {
		return n
	}
	for _, s := range [2]string{a.Type, a.code()} {
		if t, ok := errorTypes[s]; ok && t.status != 0 {
			return t.status
		}
	}
	return 0
}

// errorType is what the error table knows of one error type or code: the
// failure class and, when the type implies one, the HTTP status.
type errorType struct {
	class  provider.Class
	status int
}

// errorTypes is the openai adapter's error table: the error types and codes
// that OpenAI and the compatible servers behind base_url send (OpenRouter
// passes on its upstreams' types, Anthropic's and Google's among them).
var errorTypes = map[string]errorType{
	// The account's quota or spend limit is used up: never retried.
	"insufficient_quota":         {provider.ClassQuotaExhausted, http.StatusTooManyRequests},
	"billing_hard_limit_reached": {provider.ClassQuotaExhausted, 0},
	"billing_error":              {provider.ClassQuotaExhausted, 0},

	"rate_limit_exceeded": {provider.ClassRateLimited, http.StatusTooManyRequests},
	"rate_limit_error":    {provider.ClassRateLimited, http.StatusTooManyRequests},
	"tokens_exceeded":     {provider.ClassRateLimited, http.StatusTooManyRequests},
	"RESOURCE_EXHAUSTED":  {provider.ClassRateLimited, 0},

	"overloaded":          {provider.ClassOverloaded, http.StatusServiceUnavailable},
	"overloaded_error":    {provider.ClassOverloaded, http.StatusServiceUnavailable},
	"service_unavailable": {provider.ClassOverloaded, http.StatusServiceUnavailable},
	"engine_overloaded":   {provider.ClassOverloaded, http.StatusServiceUnavailable},
	"UNAVAILABLE":         {provider.ClassOverloaded, 0},

	"server_error":          {provider.ClassServerError, http.StatusInternalServerError},
	"internal_error":        {provider.ClassServerError, http.StatusInternalServerError},
	"internal_server_error": {provider.ClassServerError, http.StatusInternalServerError},
	"api_error":             {provider.ClassServerError, http.StatusInternalServerError},
	"timeout_error":         {provider.ClassServerError, 0},
	"INTERNAL":              {provider.ClassServerError, 0},
	"DEADLINE_EXCEEDED":     {provider.ClassServerError, 0},

	"authentication_error": {provider.ClassAuth, http.StatusUnauthorized},
	"invalid_api_key":      {provider.ClassAuth, http.StatusUnauthorized},
	"permission_error":     {provider.ClassAuth, http.StatusForbidden},
	"UNAUTHENTICATED":      {provider.ClassAuth, 0},
	"PERMISSION_DENIED":    {provider.ClassAuth, 0},

	// The model's tool call was malformed (Groq): its output, not the
	// request, is at fault; retried once per call.
	"tool_use_failed": {provider.ClassInvalidOutput, http.StatusBadRequest},

	// The request is longer than the model's context window: OpenAI's
	// and Groq's code (of an invalid_request_error), llama.cpp's type.
	"context_length_exceeded":   {provider.ClassContextLength, http.StatusBadRequest},
	"exceed_context_size_error": {provider.ClassContextLength, http.StatusBadRequest},

	"invalid_request_error": {provider.ClassRejected, http.StatusBadRequest},
	"BadRequestError":       {provider.ClassRejected, http.StatusBadRequest},
	"not_found_error":       {provider.ClassNotFound, http.StatusNotFound},
	"model_not_found":       {provider.ClassNotFound, http.StatusNotFound},
	"request_too_large":     {provider.ClassRejected, 0},
	"INVALID_ARGUMENT":      {provider.ClassRejected, 0},
	"NOT_FOUND":             {provider.ClassNotFound, 0},
	"FAILED_PRECONDITION":   {provider.ClassRejected, 0},
}

// classOf classifies an error by its type and code: a quota,
// invalid-output or context-length type or code first (Groq sends
// tool_use_failed, OpenAI context_length_exceeded, as the code of an
// invalid_request_error), then the type, then the code, then
// status (the HTTP status an in-stream error stands for, 0 for none) by
// its generic meaning.
func classOf(typ, code string, status int) provider.Class {
	names := [2]string{typ, code}
	for _, s := range names {
		if c := errorTypes[s].class; c == provider.ClassQuotaExhausted || c == provider.ClassInvalidOutput || c == provider.ClassContextLength {
			return c
		}
	}
	for _, s := range names {
		if t, ok := errorTypes[s]; ok {
			return t.class
		}
	}
	return provider.ClassOfStatus(status)
}
