package gemini

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// apiError is a google.rpc.Status as the Gemini API sends it in error
// bodies and failing streams.
type apiError struct {
	Code    int      `json:"code"`
	Message string   `json:"message"`
	Status  string   `json:"status"`
	Details []detail `json:"details"`
}

// detail is one of a Status's details: google.rpc.RetryInfo carries
// retryDelay, google.rpc.ErrorInfo a reason.
type detail struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"`
	Reason     string `json:"reason"`
}

type errorBody struct {
	Error *apiError `json:"error"`
}

// parseErrorBody is the httpx.ErrorBodyParser for Gemini: the body is
// {"error": {...}} or, from the streaming endpoint, [{"error": {...}}]. The
// error is classified by its status and status name (provider.HTTPClass).
func parseErrorBody(b []byte, e *provider.Error) {
	if a := decodeError(b); a != nil {
		a.fill(e)
	}
	byType := classOf(e.Type)
	if byType == provider.ClassRejected && overflowsContext(e.Message) {
		byType = provider.ClassContextLength
	}
	e.Class = provider.HTTPClass(e.Status, byType)
}

// overflowsContext reports whether an INVALID_ARGUMENT's message says the
// request is longer than the model's context window, which Gemini says in
// words only: "The input token count (1200293) exceeds the maximum number
// of tokens allowed (1048576)."
func overflowsContext(msg string) bool {
	return strings.HasPrefix(msg, "The input token count") && strings.Contains(msg, "exceeds the maximum number of tokens")
}

// decodeError returns the error object of an error body, nil when it holds
// none.
func decodeError(b []byte) *apiError {
	var body errorBody
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var list []errorBody
		if json.Unmarshal(b, &list) != nil || len(list) == 0 {
			return nil
		}
		body = list[0]
	} else if json.Unmarshal(b, &body) != nil {
		return nil
	}
	return body.Error
}

// inStream returns the KindInStream error for an error object in a stream;
// its code is the HTTP status it stands for. It is classified by its status
// name, else by that status.
func (a *apiError) inStream() *provider.Error {
	e := &provider.Error{Kind: provider.KindInStream, Status: a.Code}
	a.fill(e)
	e.Class = classOf(e.Type)
	if e.Class == provider.ClassUnknown {
		e.Class = provider.ClassOfStatus(a.Code)
	}
	return e
}

// statusClasses is the gemini adapter's error table: the google.rpc status
// names the Gemini API sends, each with its failure class. Gemini reports a
// spent quota as RESOURCE_EXHAUSTED like any rate limit.
var statusClasses = map[string]provider.Class{
	"RESOURCE_EXHAUSTED":  provider.ClassRateLimited,
	"UNAVAILABLE":         provider.ClassOverloaded,
	"INTERNAL":            provider.ClassServerError,
	"DEADLINE_EXCEEDED":   provider.ClassServerError,
	"UNAUTHENTICATED":     provider.ClassAuth,
	"PERMISSION_DENIED":   provider.ClassAuth,
	"INVALID_ARGUMENT":    provider.ClassRejected,
	"NOT_FOUND":           provider.ClassNotFound,
	"FAILED_PRECONDITION": provider.ClassRejected,
}

// classOf is the class the error table gives a status name; ClassUnknown
// for a name it does not list.
func classOf(status string) provider.Class { return statusClasses[status] }

// fill sets e's Type (the status name, e.g. RESOURCE_EXHAUSTED), Code (the
// ErrorInfo reason, e.g. API_KEY_INVALID), Message and, from RetryInfo,
// the retry hint.
func (a *apiError) fill(e *provider.Error) {
	e.Type, e.Message = a.Status, a.Message
	for _, d := range a.Details {
		switch {
		case strings.HasSuffix(d.Type, "google.rpc.RetryInfo"):
			if delay, ok := parseDelay(d.RetryDelay); ok {
				e.RetryAfter, e.HasRetryAfter = delay, true
			}
		case strings.HasSuffix(d.Type, "google.rpc.ErrorInfo") && d.Reason != "":
			e.Code = d.Reason
		}
	}
}

// parseDelay parses a google.protobuf.Duration in its JSON form, seconds
// with an "s" suffix ("34s", "34.4s", "0.5s").
func parseDelay(s string) (time.Duration, bool) {
	if !strings.HasSuffix(s, "s") {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}
