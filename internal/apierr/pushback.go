package apierr

import (
	"errors"
	"strconv"
	"time"
)

// PushbackTrailer is the trailer by which a server tells a client's gRPC
// retry policy whether, and when, to retry a failed call (gRFC A6 server
// pushback): a non-negative number of milliseconds to wait before the next
// attempt, or a negative one for none.
const PushbackTrailer = "grpc-retry-pushback-ms"

// DoNotRetry is the pushback that tells a client not to retry.
const DoNotRetry = "-1"

// Pushback returns the grpc-retry-pushback-ms value of a call that failed
// with err.
//
// It is DoNotRetry for every failure but one kind: a call the server did
// not serve only because it was busy or shutting down (an *Error with
// CallAgain), where waiting its RetryInfo and calling again is all it
// takes; that wait is the pushback, in whole milliseconds rounded up.
//
// A failed provider call always says do not retry, whatever its code and
// RetryInfo: when the server ends a call, its attempt plan has decided
// that no further attempt is worth making (max_attempts reached or 1,
// x-should-retry: false, the retry budget exhausted, a wait past the
// deadline or too long, a failure class that is never retried). A client
// library that retried it (the recommended service config retries
// UNAVAILABLE) would multiply that decision: one request would become
// several provider calls. The RetryInfo, when there is one, still tells
// the application when calling again may succeed.
func Pushback(err error) string {
	var e *Error
	if !errors.As(err, &e) || !e.CallAgain || e.RetryAfter <= 0 {
		return DoNotRetry
	}
	return strconv.FormatInt(int64((e.RetryAfter+time.Millisecond-1)/time.Millisecond), 10)
}
