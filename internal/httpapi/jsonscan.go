package httpapi

import "encoding/json"

// jsonScan tells whether a streamed tool call's arguments, written to it
// a fragment at a time, are whole JSON so far.
type jsonScan struct {
	args []byte
	// read counts the bytes examined, across resets.
	read int
}

// write adds a fragment of the arguments.
func (w *jsonScan) write(fragment string) { w.args = append(w.args, fragment...) }

// whole reports whether the arguments so far are whole JSON, as
// json.Valid does.
func (w *jsonScan) whole() bool {
	w.read += len(w.args)
	return json.Valid(w.args)
}

// reset starts on the arguments of another call.
func (w *jsonScan) reset() { w.args = w.args[:0] }
