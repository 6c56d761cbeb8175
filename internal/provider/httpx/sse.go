package httpx

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ErrMalformed is wrapped by the errors for a stream that arrived intact
// but breaks its wire format: a complete line that is not a
// server-sent-events field, a complete event whose data does not decode, an
// over-long line. Such an error is a provider protocol error
// (provider.KindProtocol), not retried.
var ErrMalformed = errors.New("malformed provider stream")

// ErrCut is wrapped by the error for a body that ended in the middle of a
// line or of an event that does not decode: the stream was cut short, a
// transport failure (retried), not a protocol error.
var ErrCut = errors.New("provider stream cut in the middle of an event")

// MaxLineBytes bounds one line of a stream. A longer line is ErrMalformed.
const MaxLineBytes = 16 << 20

// readerBufferSize is the bufio buffer of a Reader; longer lines are
// assembled in a separate, reused buffer. Every open stream holds one, on
// top of the 4 KiB read buffer of its HTTP connection, so it is small: the
// lines of the providers' streams are a few hundred bytes (8 KiB cost 6 KiB
// more per open stream; see docs/performance.md, "Earlier measurements").
const readerBufferSize = 2 << 10

// Event is one server-sent event. Its slices are valid until the next call
// of Reader.Next.
type Event struct {
	// Name is the `event:` field; empty when the event has none.
	Name []byte
	// Data is the event's `data:` lines joined by "\n".
	Data []byte
	// Cut is set on an event that the end of the body dispatched, not a
	// blank line: it may be whole (some servers end their last event so)
	// or cut short. When its data does not decode, the stream was cut
	// (ErrCut), not malformed.
	Cut bool
}

// Reader reads server-sent events (the text/event-stream format) from a
// response body. It is lenient where providers differ harmlessly (a last
// event not followed by a blank line, "\r\n" line ends, comments) and
// strict where a broken stream would otherwise pass for a good one: any
// complete line that is not a comment or an event, data, id or retry field
// is ErrMalformed, and the same at the very end of the body, without its
// line end, is ErrCut.
//
// A Reader reuses its buffers across events and, through GetReader and
// PutReader, across streams. It is not safe for concurrent use.
type Reader struct {
	br   *bufio.Reader
	name []byte
	data []byte
	long []byte
	// extra is a non-standard field that is dispatched as an event of its
	// own, named after the field; empty for none.
	extra string
	// bad is the line of the last ErrMalformed, clipped, for the debug log.
	bad []byte
}

var readers = sync.Pool{New: func() any {
	return &Reader{br: bufio.NewReaderSize(nil, readerBufferSize)}
}}

// GetReader returns a pooled Reader reading from body. extra names a
// non-standard field to accept as an event of its own (for example
// "error", which some OpenAI-compatible servers send instead of a data
// line); pass "" for none. Return the Reader with PutReader.
func GetReader(body io.Reader, extra string) *Reader {
	r := readers.Get().(*Reader)
	r.br.Reset(body)
	r.extra = extra
	return r
}

// PutReader returns r to the pool. r must not be used afterwards.
func PutReader(r *Reader) {
	r.bad = r.bad[:0]
	r.br.Reset(nil)
	if cap(r.long) > 1<<20 {
		r.long = nil
	}
	if cap(r.data) > 1<<20 {
		r.data = nil
	}
	readers.Put(r)
}

// Next returns the next event. At the end of the body it returns io.EOF (an
// event still being assembled is dispatched first); a body that fails
// returns its error.
func (r *Reader) Next() (Event, error) {
	r.name = r.name[:0]
	r.data = r.data[:0]
	hasData := false
	for {
		line, whole, err := r.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && hasData {
				return Event{Name: r.name, Data: r.data, Cut: true}, nil
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if hasData {
				return Event{Name: r.name, Data: r.data}, nil
			}
			r.name = r.name[:0]
			continue
		}
		if line[0] == ':' {
			continue // a comment, used as a keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			if hasData {
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			hasData = true
		case "event":
			r.name = append(r.name[:0], value...)
		case "id", "retry":
		default:
			if r.extra == "" || string(field) != r.extra || hasData {
				if !whole {
					return Event{}, fmt.Errorf("%w: the body ended in the line %q", ErrCut, clip(line))
				}
				r.bad = append(r.bad[:0], line[:min(len(line), MaxRaw)]...)
				return Event{}, fmt.Errorf("%w: unexpected line %q", ErrMalformed, clip(line))
			}
			r.name = append(r.name[:0], field...)
			r.data = append(r.data[:0], value...)
			return Event{Name: r.name, Data: r.data, Cut: !whole}, nil
		}
	}
}

// Ready reports whether the next event, or the error Next would return
// for it, is already in the Reader's buffer: Next would return it without
// reading the body. It reads nothing and changes nothing.
func (r *Reader) Ready() bool {
	buf, _ := r.br.Peek(r.br.Buffered())
	hasData := false
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return false // the rest of the event is not read yet
		}
		line := bytes.TrimSuffix(buf[:i], []byte{'\r'})
		buf = buf[i+1:]
		switch {
		case len(line) == 0:
			if hasData {
				return true
			}
		case line[0] == ':':
		default:
			field, _, _ := bytes.Cut(line, []byte{':'})
			switch string(field) {
			case "data":
				hasData = true
			case "event", "id", "retry":
			default:
				return true // the extra field's event, or ErrMalformed
			}
		}
	}
}

// readLine returns the next line without its line end, and whether it had
// one. A last line without one is returned as it is; the call after it
// returns io.EOF.
func (r *Reader) readLine() ([]byte, bool, error) {
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(r.long) > MaxLineBytes {
				return nil, false, fmt.Errorf("%w: a line longer than %d bytes", ErrMalformed, MaxLineBytes)
			}
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	if err != nil && (!errors.Is(err, io.EOF) || len(line) == 0) {
		return nil, false, err
	}
	line, whole := bytes.CutSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'}), whole, nil
}

// Drain reads and discards what is left of the body, up to limit bytes, so
// that an HTTP/1.1 connection can go back to the idle pool. It reports
// whether the body ended.
func (r *Reader) Drain(limit int64) bool {
	buffered := int64(r.br.Buffered())
	if buffered > limit {
		return false
	}
	_, _ = r.br.Discard(int(buffered))
	_, err := io.CopyN(io.Discard, r.br, limit-buffered+1)
	return errors.Is(err, io.EOF)
}

// clip shortens a line for an error message.
func clip(b []byte) []byte {
	const max = 120
	if len(b) > max {
		return b[:max]
	}
	return b
}
