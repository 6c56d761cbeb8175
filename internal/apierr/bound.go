package apierr

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Bounds on what a status puts in the trailers. Proxies refuse large
// trailers (HAProxy's default buffers hold about 15 KB of headers, nghttpx
// fails at 64 KB), and the client then sees UNAVAILABLE instead of the real
// error, so every status llmrelay sends fits in MaxTrailerBytes.
const (
	// MaxTrailerBytes bounds grpc-message (percent-encoded) and
	// grpc-status-details-bin (base64) together.
	MaxTrailerBytes = 8 << 10
	// MaxMessageBytes bounds the status message, which travels twice: in
	// grpc-message and inside grpc-status-details-bin.
	MaxMessageBytes = 1 << 10
	// maxDescriptionBytes bounds one field violation's description and
	// one ErrorInfo metadata value.
	maxDescriptionBytes = 256
)

// ErrorInfo metadata keys set when a status lists only some violations.
const (
	// MetaViolations is the number of violations found.
	MetaViolations = "violations"
	// MetaViolationsListed is how many of them the details list (the
	// first ones).
	MetaViolationsListed = "violations_listed"
)

// grpcCode is the gRPC status code of a Kind: the one place a Kind
// becomes a gRPC code (the two share google.rpc.Code's numbering;
// TestKindsAreGRPCCodes pins it).
func grpcCode(k Kind) codes.Code { return codes.Code(k) }

// GRPCStatus is how the gRPC door sends an Error, the one place an Error
// becomes a gRPC status. It builds the status with its details: an ErrorInfo always, a
// RetryInfo when RetryAfter is positive, a BadRequest for FieldViolations,
// then Extra. The status fits in MaxTrailerBytes: the message is cut at
// MaxMessageBytes, descriptions and metadata values at 256 bytes, and when
// the violations (BadRequest field violations, buf.validate.Violations) do
// not all fit, the details list the first ones, the ErrorInfo metadata
// says how many there were ("violations") and how many are listed
// ("violations_listed"), and the message says so too. Other Extra details
// are dropped if even that does not fit.
func (e *Error) GRPCStatus() *status.Status {
	b := bounded{e: e, msg: clip(e.Message, MaxMessageBytes)}
	b.fv = clipFieldViolations(e.FieldViolations)
	b.extra = make([]protoadapt.MessageV1, len(e.Extra))
	for i, x := range e.Extra {
		if v, ok := x.(*validate.Violations); ok {
			x = clipViolations(v)
			b.vv = append(b.vv, x.(*validate.Violations))
		}
		b.extra[i] = x
	}
	total := b.violations()
	st := b.build(total, "")
	if trailerSize(st) <= MaxTrailerBytes {
		return st
	}
	// Keep the longest prefix of the violations that fits.
	lo, hi := 0, total // lo fits (checked below), hi does not
	fits := func(k int) bool { return trailerSize(b.build(k, b.note(k, total))) <= MaxTrailerBytes }
	if !fits(0) {
		b.dropExtra()
		return b.build(0, b.note(0, total))
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return b.build(lo, b.note(lo, total))
}

// bounded is one Error's status under construction.
type bounded struct {
	e     *Error
	msg   string
	fv    []*errdetails.BadRequest_FieldViolation
	vv    []*validate.Violations // the Violations among extra, clipped
	extra []protoadapt.MessageV1
}

func (b *bounded) violations() int {
	n := len(b.fv)
	for _, v := range b.vv {
		n += len(v.GetViolations())
	}
	return n
}

// note is the message's suffix when only k of total violations are listed.
func (b *bounded) note(k, total int) string {
	if k == total {
		return ""
	}
	return " (" + strconv.Itoa(total) + " violations; the details list the first " + strconv.Itoa(k) + ")"
}

// dropExtra keeps only the violation lists among the extra details.
func (b *bounded) dropExtra() {
	kept := b.extra[:0]
	for _, x := range b.extra {
		if _, ok := x.(*validate.Violations); ok {
			kept = append(kept, x)
		}
	}
	b.extra = kept
}

// build returns the status listing the first k violations, with note at
// the end of the message.
func (b *bounded) build(k int, note string) *status.Status {
	e := b.e
	msg := b.msg
	if note != "" {
		msg = clip(e.Message, MaxMessageBytes-len(note)) + note
	}
	md := make(map[string]string, len(e.Metadata)+2)
	for key, v := range e.Metadata {
		md[key] = clip(v, maxDescriptionBytes)
	}
	if total := b.violations(); k < total {
		md[MetaViolations] = strconv.Itoa(total)
		md[MetaViolationsListed] = strconv.Itoa(k)
	}
	details := make([]protoadapt.MessageV1, 0, 3+len(b.extra))
	details = append(details, &errdetails.ErrorInfo{Reason: e.Reason, Domain: Domain, Metadata: md})
	if e.RetryAfter > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(e.RetryAfter)})
	}
	left := k
	if len(b.fv) > 0 && left > 0 {
		n := min(left, len(b.fv))
		details = append(details, &errdetails.BadRequest{FieldViolations: b.fv[:n]})
		left -= n
	}
	for _, x := range b.extra {
		if v, ok := x.(*validate.Violations); ok {
			n := min(left, len(v.GetViolations()))
			left -= n
			if n == 0 {
				continue
			}
			x = &validate.Violations{Violations: v.GetViolations()[:n]}
		}
		details = append(details, x)
	}
	st := status.New(grpcCode(e.Kind), msg)
	withDetails, err := st.WithDetails(details...)
	if err != nil {
		return status.New(codes.Internal, "internal error")
	}
	return withDetails
}

// trailerSize is what st takes in the trailers: grpc-message,
// percent-encoded as gRPC sends it, and grpc-status-details-bin, base64.
func trailerSize(st *status.Status) int {
	return percentEncodedLen(st.Message()) + base64.RawStdEncoding.EncodedLen(proto.Size(st.Proto()))
}

// percentEncodedLen is the length of s as grpc-message: bytes outside
// printable ASCII, and '%', take three.
func percentEncodedLen(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '%' {
			n += 3
		} else {
			n++
		}
	}
	return n
}

// clip cuts s after at most n bytes, on a character boundary, ending in
// "…" (counted in n) when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)] + "…"
}

func clipFieldViolations(in []*errdetails.BadRequest_FieldViolation) []*errdetails.BadRequest_FieldViolation {
	out := make([]*errdetails.BadRequest_FieldViolation, len(in))
	for i, v := range in {
		out[i] = v
		if len(v.GetDescription()) > maxDescriptionBytes || len(v.GetField()) > maxDescriptionBytes {
			out[i] = &errdetails.BadRequest_FieldViolation{
				Field: clip(v.GetField(), maxDescriptionBytes), Description: clip(v.GetDescription(), maxDescriptionBytes), Reason: v.GetReason(),
			}
		}
	}
	return out
}

func clipViolations(in *validate.Violations) *validate.Violations {
	out := &validate.Violations{Violations: make([]*validate.Violation, len(in.GetViolations()))}
	for i, v := range in.GetViolations() {
		out.Violations[i] = v
		if len(v.GetMessage()) > maxDescriptionBytes {
			c := proto.CloneOf(v)
			c.Message = proto.String(clip(v.GetMessage(), maxDescriptionBytes))
			out.Violations[i] = c
		}
	}
	return out
}
