package retry

import (
	"strconv"
)

// Failure is how a call ends when its attempts failed: the last attempt's
// error, what Classify made of it and why retrying stopped. internal/apierr
// turns it into the call's gRPC status.
type Failure struct {
	// Err is the last attempt's error (the call context's cause when the
	// call was cancelled or timed out).
	Err error
	// Class is Classify's verdict on Err.
	Class Classification
	// Stop is why no further attempt followed.
	Stop Stop
	// Attempts is how many attempts the call made.
	Attempts int
	// Provider is the configured provider's name.
	Provider string
}

// Error implements error.
func (f *Failure) Error() string {
	s := "call to " + f.Provider + " failed after " + strconv.Itoa(f.Attempts) + " attempt"
	if f.Attempts != 1 {
		s += "s"
	}
	s += " (" + f.Class.Class.String() + ", " + f.Stop.String() + ")"
	if f.Err != nil {
		s += ": " + f.Err.Error()
	}
	return s
}

// Unwrap returns the last attempt's error.
func (f *Failure) Unwrap() error { return f.Err }
